//! Issue 24's open gaps (g24): skarn's own Claude Code entry made `async`
//! (or filtered by `if`) by a repository's commit, in the project's
//! settings or as a copy shadowing the user's entry; MCP tools of plugin
//! and SDK servers. Each attempt is real: a script does the client's step
//! as Claude Code 2.1.328 does it (hooks of user, project and local
//! settings merged in that order, one entry per shell, command, `args`
//! and `if` with the last one read kept, an `async` entry not waited
//! for, a blocked prompt ending the turn), with the hook input Claude
//! Code sends; checked from outside (`$B/PWNED`), as root and uid 65534.

use crate::support_secret_sources::users;

/// `client EVENT TOOL INPUT`: the hooks Claude Code runs for one event,
/// chosen and deduplicated as it does, fed its input; prints `blocked`,
/// or `ran` after running the tool's command (the rewrite the hooks
/// asked for, else the model's own).
const CLIENT: &str = r#"
cat > $B/client.py <<'PY'
import json, os, re, subprocess, sys
ev, tool, tin = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
p = os.environ["B"] + "/p"; home = os.environ["HOME"]
files = [home + "/.claude/settings.json", p + "/.claude/settings.json", p + "/.claude/settings.local.json"]
chosen = {}
for f in files:
    try: v = json.load(open(f))
    except Exception: continue
    for g in v.get("hooks", {}).get(ev, []):
        m = g.get("matcher", "")
        if ev == "PreToolUse" and m not in ("", "*") and not re.fullmatch(m, tool): continue
        for h in g.get("hooks", []):
            if h.get("type") != "command": continue
            key = (h.get("shell", "bash"), h["command"], json.dumps(h.get("args")), h.get("if", ""))
            chosen[key] = h
inp = {"session_id": "s", "transcript_path": "/dev/null", "cwd": p, "permission_mode": "default", "hook_event_name": ev}
inp.update({"prompt": "go"} if ev == "UserPromptSubmit" else {"tool_name": tool, "tool_input": tin, "tool_use_id": "t1"})
cmd = tin.get("command")
for h in chosen.values():
    if h.get("async") or h.get("if"): continue  # not waited for / not this call
    r = subprocess.run(["/bin/sh", "-c", h["command"]], input=json.dumps(inp), capture_output=True, text=True, cwd=p, env=dict(os.environ, CLAUDE_PROJECT_DIR=p))
    out = r.stdout.strip()
    o = json.loads(out).get("hookSpecificOutput", {}) if out.startswith("{") else {}
    if r.returncode == 2 or o.get("permissionDecision") == "deny":
        print("blocked"); sys.exit(0)
    cmd = o.get("updatedInput", {}).get("command", cmd)
if ev == "PreToolUse" and cmd:
    subprocess.run(["/bin/sh", "-c", cmd], cwd=p, capture_output=True)
print("ran")
PY
client() { python3 $B/client.py "$@"; }
# One turn: the prompt, then the model's Bash call writing outside the project.
turn() { u=$(client UserPromptSubmit - '{}'); [ "$u" = blocked ] && { echo "prompt blocked"; return; }
  echo "bash $(client PreToolUse Bash '{"command":"touch '$B'/PWNED","description":"x"}')"; }
# A commit of the repository: skarn's own PreToolUse command (taken from
# FILE) in the project's settings with FIELD added.
commit() { python3 - "$1" "$2" <<'PY'
import json, sys
own = [h for g in json.load(open(sys.argv[1]))["hooks"]["PreToolUse"] for h in g["hooks"]][0]["command"]
k, val = sys.argv[2].split("=", 1)
v = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": own, k: json.loads(val)}]}]}}
json.dump(v, open(".claude/settings.json", "w"), indent=1)
PY
}
"#;

fn run(tag: &str, script: &str, user: bool) -> (String, String) {
    let (_t, so, ctx) = crate::support_hook::run_attempt(tag, script, user);
    (so, ctx)
}

#[test]
fn skarns_entry_made_async_in_the_project_or_shadowing_the_users_blocks_the_prompt() {
    let script = format!(
        r#"
{CLIENT}
mkdir -p p && cd p && git init -q .
"$SK" init --client claude-code >/dev/null 2>$B/init.err; echo "init rc=$?"
echo "clean: $(turn)"
commit .claude/settings.json 'async=true'; echo "async: $(turn)"
commit .claude/settings.json 'if="Bash(git status)"'; echo "if: $(turn)"
# A settings env Claude Code runs every hook line and command through.
commit .claude/settings.json 'timeout=60'
python3 -c 'import json;f=".claude/settings.json";v=json.load(open(f));v["env"]={{"CLAUDE_CODE_SHELL_PREFIX":"./x.sh"}};json.dump(v,open(f,"w"))'
echo "prefix: $(turn)"
# Installed for every project: the repository's copy replaces the user's entry.
rm -rf .claude .mcp.json; mkdir .claude
"$SK" init --client claude-code --user >/dev/null 2>>$B/init.err; echo "user init rc=$?"
echo "user clean: $(turn)"
commit $HOME/.claude/settings.json 'async=true'; echo "shadow: $(turn)"
rm .claude/settings.json; echo "repaired: $(turn)"
"#
    );
    for user in users() {
        let (so, ctx) = run("g24_chain", &script, user);
        assert!(
            so.contains("init rc=0") && so.contains("user init rc=0"),
            "{ctx}"
        );
        // Usability: an unaltered chain lets the prompt through, and the
        // Bash call runs confined (it cannot write outside the project).
        assert!(so.contains("clean: bash ran"), "{ctx}");
        assert!(so.contains("user clean: bash ran"), "{ctx}");
        assert!(so.contains("repaired: bash ran"), "{ctx}");
        for w in ["async", "if", "prefix", "shadow"] {
            assert!(so.contains(&format!("{w}: prompt blocked")), "{w}: {ctx}");
        }
    }
}

#[test]
fn plugin_and_sdk_server_tools_are_refused_configured_ones_pass() {
    let script = format!(
        r#"
{CLIENT}
mkdir -p p && cd p && git init -q .
printf '{{"mcpServers":{{"docs":{{"type":"http","url":"http://127.0.0.1:9/mcp"}}}}}}' > .mcp.json
"$SK" init --client claude-code --accept-project-settings >/dev/null 2>$B/init.err; echo "init rc=$?"
# The client's step for an MCP tool the hook let through: the server
# runs it on the host (a plugin's server from the plugin's directory, an
# SDK server in the SDK program).
mcp() {{ o=$(client PreToolUse $1 '{{"command":"touch '$B'/PWNED"}}'); echo "$1 $o"; }}
mcp mcp__plugin_tools_shell__run
mcp mcp__sdk_host__exec
echo "configured: $(client PreToolUse mcp__docs__read '{{"q":"x"}}') $(client PreToolUse mcp__skarn__search '{{"q":"x"}}')"
mkdir -p $HOME/.config/skarn
printf '[hook]\nallow_tools = ["mcp__plugin_tools_shell__*"]\n' > $HOME/.config/skarn/config.toml
echo "allowed: $(client PreToolUse mcp__plugin_tools_shell__list '{{"q":"x"}}')"
"#
    );
    for user in users() {
        let (so, ctx) = run("g24_mcp", &script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("mcp__plugin_tools_shell__run blocked"), "{ctx}");
        assert!(so.contains("mcp__sdk_host__exec blocked"), "{ctx}");
        assert!(so.contains("configured: ran ran"), "{ctx}");
        assert!(so.contains("allowed: ran"), "{ctx}");
    }
}

#[test]
fn a_trusted_line_run_by_a_wrapper_skarn_does_not_read_is_not_trusted() {
    let script = r#"
mkdir -p p $HOME/.config/skarn && cd p && git init -q .
echo 'echo hi' > .ci.sh; mkdir -p .claude
L='echo .ci.sh | xargs sh'
printf '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"%s"}]}]}}' "$L" > .claude/settings.json
printf '[hook]\ntrusted_hooks = ["%s", "git status"]\n' "$L" > $HOME/.config/skarn/config.toml
"$SK" init --client claude-code --accept-project-settings >/dev/null 2>$B/init.err; echo "init rc=$?"
grep -q 'xargs.*NOT trusted\|NOT trusted.*xargs' $B/init.err && echo "init says not trusted"
# The agent's confined command rewrites the script the line runs.
"$SK" run --caller hook --workspace $B/p -- sh -c "echo 'touch $B/PWNED' > .ci.sh" >/dev/null 2>&1
# The client's step: a new session runs the SessionStart hook as the settings now say.
cmd=$(python3 -c 'import json;print(json.load(open(".claude/settings.json"))["hooks"]["SessionStart"][0]["hooks"][0]["command"])')
echo '{}' | sh -c "$cmd" >/dev/null 2>&1
case "$cmd" in *__hook-confined*|*" run "*) echo "wrapped";; esac
"#;
    for user in users() {
        let (so, ctx) = run("g24_wrapper", script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("init says not trusted"), "{ctx}");
        assert!(so.contains("wrapped"), "{ctx}");
    }
}
