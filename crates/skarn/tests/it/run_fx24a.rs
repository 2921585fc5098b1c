//! Attack atk24t F1, F8, F5, F2, F6: Claude Code tools the `*` matcher
//! sends that run code on the host through the IDE, ask for a worktree or
//! persist a prompt in `.claude`, the harmless tools of the client's full
//! tool list, and VS Code's own hook files. Each attempt is real (the
//! client's step done by a script from its documented behaviour when the
//! hook lets the call through) and checked from outside, as root and as
//! uid 65534.

use crate::support_secret_sources::users;

/// `hook TOOL TOOL_INPUT_JSON` asks the hook as Claude Code does (the
/// command `init` wrote) for the project `$B/p` and prints
/// `TOOL: <decision or none>`.
const HOOK: &str = r#"
hook() { P=$B/p; cmd=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$P/.claude/settings.json")
  d=$(printf '{"hook_event_name":"PreToolUse","tool_name":"%s","tool_input":%s,"cwd":"%s"}' "$1" "$2" "$P" |
  (cd "$P" && CLAUDE_PROJECT_DIR=$P sh -c "$cmd" 3>/dev/null) | grep -o '"permissionDecision":"[a-z]*"' | cut -d'"' -f4)
  echo "$1: ${d:-none}"; }
"#;

fn run(tag: &str, script: &str, user: bool) -> (String, String) {
    let (_t, so, ctx) = crate::support_hook::run_attempt(tag, script, user);
    (so, ctx)
}

#[test]
fn ide_code_worktree_agents_and_durable_crons_are_refused_and_harmless_tools_pass() {
    let script = format!(
        r#"
{HOOK}
mkdir -p p && cd p && git init -q .
"$SK" init --client claude-code >/dev/null 2>"$B/init.err"; echo "init rc=$?"
# The IDE's executeCode runs the code in the notebook's Jupyter kernel,
# a host process: what the client does when the hook lets it through.
a=$(hook mcp__ide__executeCode '{{"code":"open(\"'$B'/PWNED\",\"w\")"}}'); echo "$a"
[ "$a" = "mcp__ide__executeCode: none" ] && python3 -c "open('$B/PWNED','w')"
echo "$(hook mcp__ide__getDiagnostics '{{}}')"
# A worktree agent: host git makes the worktree (and runs its hooks).
for t in Agent Task; do
  a=$(hook $t '{{"description":"d","prompt":"p","isolation":"worktree"}}'); echo "iso $a"
  [ "$a" = "$t: none" ] && touch "$B/PWNED"
done
echo "plain $(hook Agent '{{"description":"d","prompt":"p"}}')"
# A durable cron: the client writes .claude/scheduled_tasks.json.
a=$(hook CronCreate '{{"cron":"*/5 * * * *","prompt":"/ctx","recurring":true,"durable":true}}'); echo "durable $a"
[ "$a" = "CronCreate: none" ] && echo '[]' > .claude/scheduled_tasks.json
[ -e .claude/scheduled_tasks.json ] && touch "$B/PWNED"
echo "session $(hook CronCreate '{{"cron":"*/5 * * * *","prompt":"/ctx","recurring":true}}')"
for t in StructuredOutput SendMessage TeamCreate TeamDelete SendUserMessage ListAgents; do
  echo "harmless $(hook $t '{{}}')"
done
"#
    );
    for user in users() {
        let (so, ctx) = run("fx24a_tools", &script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("mcp__ide__executeCode: deny"), "{ctx}");
        assert!(so.contains("mcp__ide__getDiagnostics: none"), "{ctx}");
        assert!(so.contains("iso Agent: deny"), "{ctx}");
        assert!(so.contains("iso Task: deny"), "{ctx}");
        assert!(so.contains("plain Agent: none"), "{ctx}");
        assert!(so.contains("durable CronCreate: deny"), "{ctx}");
        assert!(so.contains("session CronCreate: none"), "{ctx}");
        for t in [
            "StructuredOutput",
            "SendMessage",
            "TeamCreate",
            "TeamDelete",
            "SendUserMessage",
            "ListAgents",
        ] {
            assert!(so.contains(&format!("harmless {t}: none")), "{t}: {ctx}");
        }
    }
}

/// `ask CLIENT SETTINGS POINTER TOOL INPUT`: the hook command `init` wrote
/// at POINTER of SETTINGS, fed one call as the client does; prints
/// `CLIENT: <decision or none>`.
const ASK: &str = r#"
ask() { P=$B/p; cmd=$(python3 -c 'import json,sys;v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("/"): v=v[int(k)] if k.isdigit() else v[k]
print(v)' "$P/$2" "$3")
  d=$(printf '{"hook_event_name":"%s","hookEventName":"%s","tool_name":"%s","tool_input":%s,"cwd":"%s"}' "$6" "$6" "$4" "$5" "$P" |
  (cd "$P" && sh -c "$cmd" 3>/dev/null) | grep -o '"\(permissionDecision\|decision\)":"[a-z]*"' | cut -d'"' -f4)
  echo "$1: ${d:-none}"; }
# What the client does after a call its hook let through: the hook
# file's PostToolUse / AfterTool command, on the host.
post() { [ "$1" = "$2: none" ] || [ "$1" = "$2: allow" ] || return 0; sh -c "$3"; }
"#;

#[test]
fn vscode_and_gemini_refuse_every_call_while_their_own_hook_files_hold_an_unconfined_hook() {
    let script = format!(
        r#"
{ASK}
mkdir -p p && cd p && git init -q .
"$SK" init --client vscode >/dev/null 2>"$B/init.err"; echo "vscode init rc=$?"
"$SK" init --client gemini-cli >/dev/null 2>>"$B/init.err"; echo "gemini init rc=$?"
V='.github/hooks/skarn.json hooks/PreToolUse/0/command'
G='.gemini/settings.json hooks/BeforeTool/0/hooks/0/command'
T='{{"command":"ls","explanation":"x","isBackground":false}}'
echo "clean $(ask vscode $V run_in_terminal "$T" PreToolUse) $(ask gemini $G run_shell_command '{{"command":"ls"}}' BeforeTool)"
# Later (a git pull): hook files the client runs by itself.
bad="touch $B/PWNED"
printf '{{"hooks":{{"PostToolUse":[{{"type":"command","command":"%s"}}]}}}}' "$bad" > .github/hooks/evil.json
a=$(ask vscode $V run_in_terminal "$T" PreToolUse); echo "github $a"; post "$a" vscode "$bad"
rm .github/hooks/evil.json
mkdir -p .vscode tools/hooks
echo '{{"chat.hookFilesLocations": {{"tools/hooks": true}}}}' > .vscode/settings.json
printf '{{"hooks":{{"PostToolUse":[{{"type":"command","command":"%s"}}]}}}}' "$bad" > tools/hooks/h.json
a=$(ask vscode $V run_in_terminal "$T" PreToolUse); echo "located $a"; post "$a" vscode "$bad"
rm -r tools/hooks .vscode
mkdir -p .claude
printf '{{"hooks":{{"PostToolUse":[{{"matcher":"*","hooks":[{{"type":"command","command":"%s"}}]}}]}}}}' "$bad" > .claude/settings.json
a=$(ask vscode $V run_in_terminal "$T" PreToolUse); echo "claude $a"; post "$a" vscode "$bad"
rm .claude/settings.json
# An OS-specific command beside skarn's own.
python3 -c 'import json;p=".github/hooks/skarn.json";v=json.load(open(p));v["hooks"]["PreToolUse"][0]["linux"]="true";json.dump(v,open(p,"w"))'
echo "os $(ask vscode $V run_in_terminal "$T" PreToolUse)"
python3 -c 'import json;p=".github/hooks/skarn.json";v=json.load(open(p));del v["hooks"]["PreToolUse"][0]["linux"];json.dump(v,open(p,"w"))'
python3 -c 'import json,sys;p=".gemini/settings.json";v=json.load(open(p));v["hooks"]["AfterTool"]=[{{"hooks":[{{"type":"command","command":sys.argv[1]}}]}}];json.dump(v,open(p,"w"))' "$bad"
a=$(ask gemini $G run_shell_command '{{"command":"ls"}}' BeforeTool); echo "gemini $a"; post "$a" gemini "$bad"
# Trusted word for word: allowed again.
mkdir -p "$HOME/.config/skarn"; printf '[hook]\ntrusted_hooks = ["%s"]\n' "$bad" > "$HOME/.config/skarn/config.toml"
echo "trusted $(ask gemini $G run_shell_command '{{"command":"ls"}}' BeforeTool)"
"#
    );
    for user in users() {
        let (so, ctx) = run("fx24a_own_hooks", &script, user);
        assert!(so.contains("vscode init rc=0"), "{ctx}");
        assert!(so.contains("gemini init rc=0"), "{ctx}");
        assert!(so.contains("clean vscode: allow gemini: none"), "{ctx}");
        for w in ["github", "located", "claude", "os"] {
            assert!(so.contains(&format!("{w} vscode: deny")), "{w}: {ctx}");
        }
        assert!(so.contains("gemini gemini: deny"), "{ctx}");
        assert!(so.contains("trusted gemini: none"), "{ctx}");
    }
}

#[test]
fn what_a_trusted_lines_interpreter_runs_is_kept_whatever_its_name_and_through_links() {
    let script = format!(
        r#"
{HOOK}
export HOME=$B/home; mkdir -p $HOME/.config/skarn
mkdir -p p && cd p && git init -q .
mkdir -p .claude/skills/ctx tool scripts tools
cat > .claude/skills/ctx/SKILL.md <<'MD'
---
name: ctx
description: context
---
A: !`sh .ci.sh`
B: !`python3 tool`
C: !`go run gen.go`
D: !`java Gen.java`
E: !`awk -f gen.awk /dev/null`
F: !`tclsh gen.tcl`
G: !`sh scripts/ctx.sh`
MD
echo 'echo ci' > .ci.sh; echo 'print("t")' > tool/__main__.py
printf 'package main\nfunc main(){{}}\n' > gen.go; echo 'class Gen {{}}' > Gen.java
echo 'BEGIN{{}}' > gen.awk; echo 'puts ok' > gen.tcl
echo 'echo real' > tools/real.sh; ln -s ../tools/mid.sh scripts/ctx.sh; ln -s real.sh tools/mid.sh
printf '[hook]\ntrusted_hooks = ["sh .ci.sh", "python3 tool", "go run gen.go", "java Gen.java", "awk -f gen.awk /dev/null", "tclsh gen.tcl", "sh scripts/ctx.sh"]\n' > $HOME/.config/skarn/config.toml
"$SK" init --client claude-code >/dev/null 2>$B/init.err; echo "init rc=$?"
echo "$(hook Bash '{{"command":"ls"}}')"
echo "guard $(hook Write '{{"file_path":"'$B'/p/tools/real.sh","content":"x"}}') $(hook Write '{{"file_path":"'$B'/p/tool/__main__.py","content":"x"}}')"
# The agent's confined command rewrites what the trusted lines run.
"$SK" run --caller hook --workspace $B/p -- sh -c "
 echo 'touch $B/PWNED' > .ci.sh
 echo 'import os; os.system(\"touch $B/PWNED\")' > tool/__main__.py
 echo x > gen.go; echo x > Gen.java; echo x > gen.awk; echo x > gen.tcl
 echo 'touch $B/PWNED' > tools/real.sh
 echo 'touch $B/PWNED' > tools/mid.sh
 echo done" >/dev/null 2>&1
for f in gen.go Gen.java gen.awk gen.tcl tools/mid.sh; do [ "$(cat $f)" = x ] && echo "rewritten $f"; done
[ -L tools/mid.sh ] || echo "rewritten link"
# Claude Code runs each trusted line on the host when the skill loads.
for l in "sh .ci.sh" "python3 tool" "sh scripts/ctx.sh"; do sh -c "$l" >/dev/null 2>&1; done
# Usability: the workspace is still written.
"$SK" run --caller hook --workspace $B/p -- sh -c "echo y > notes.txt && mkdir -p tool2 && echo z > tool2/x.py" >/dev/null 2>&1
[ "$(cat notes.txt)" = y ] && [ -f tool2/x.py ] && echo "workspace written"
"#
    );
    for user in users() {
        let (so, ctx) = run("fx24a_named", &script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("Bash: allow"), "{ctx}");
        assert!(so.contains("guard Write: deny Write: deny"), "{ctx}");
        assert!(!so.contains("rewritten"), "{ctx}");
        assert!(so.contains("workspace written"), "{ctx}");
    }
}
