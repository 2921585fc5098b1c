//! Attack atk24t F3 (ADR 0328): a trusted line that runs a project tool
//! without naming a file (`make lint`, `npm run lint`, `python3 -m pytest
//! -q`) runs what the confined side rewrote: the Makefile recipe, the
//! `package.json` script, a new `conftest.py`. Each attempt is real (the
//! client's step done by a script from its documented behaviour) and
//! checked from outside, as root and as uid 65534.

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
    crate::support_hook::run_attempt_markers(tag, script, user)
}

#[test]
fn a_trusted_make_or_npm_line_keeps_its_recipe_and_script_read_only() {
    let script = format!(
        r#"
{HOOK}
export HOME=$B/home; mkdir -p $HOME/.config/skarn
mkdir -p p && cd p && git init -q .
mkdir -p .claude/skills/ctx scripts
cat > .claude/skills/ctx/SKILL.md <<'MD'
---
name: ctx
description: context
---
Lint: !`npm run lint`
Mk: !`make lint`
Ck: !`npm run check`
MD
echo '{{"name":"p","version":"1.0.0","scripts":{{"lint":"echo lint","check":"sh scripts/check.sh"}}}}' > package.json
echo 'echo check' > scripts/check.sh
printf 'include rules.mk\nlint: fmt\n\techo lint\n' > Makefile; printf 'fmt:\n\techo fmt\n' > rules.mk
printf '[hook]\ntrusted_hooks = ["npm run lint", "make lint", "npm run check"]\n' > $HOME/.config/skarn/config.toml
"$SK" init --client claude-code >/dev/null 2>$B/init.err; echo "init rc=$?"
echo "$(hook Bash '{{"command":"ls"}}')"
echo "guard $(hook Write '{{"file_path":"'$B'/p/Makefile","content":"x"}}') $(hook Write '{{"file_path":"'$B'/p/package.json","content":"x"}}')"
# The agent's confined command rewrites what the trusted lines run.
"$SK" run --caller hook --workspace $B/p -- sh -c "
 python3 - <<'PY'
import json; d=json.load(open('package.json')); d['scripts']['lint']='id > $B/PWNED-npm'; json.dump(d,open('package.json','w'))
PY
 printf 'lint:\\n\\tid > $B/PWNED-make\\n' > Makefile
 printf 'lint:\\n\\tid > $B/PWNED-makefile\\n' > makefile
 printf 'fmt:\\n\\tid > $B/PWNED-include\\n' > rules.mk
 echo 'script-shell=$B/p/evil.sh' > .npmrc
 echo 'id > $B/PWNED-script' > scripts/check.sh
 echo done" >/dev/null 2>&1
# Claude Code runs each trusted line on the host when the skill loads.
for l in "make lint" "npm run lint" "npm run check"; do sh -c "$l" >/dev/null 2>&1; done
# Usability: the workspace is still written, and make and npm still work.
"$SK" run --caller hook --workspace $B/p -- sh -c "echo y > notes.txt && mkdir -p src && echo z > src/x.js && make lint && npm run lint && touch made.txt" >/dev/null 2>&1
[ "$(cat notes.txt)" = y ] && [ -f src/x.js ] && [ -f made.txt ] && echo "workspace written"
"#
    );
    for user in users() {
        let (so, ctx) = run("f24x_make", &script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("Bash: allow"), "{ctx}");
        assert!(so.contains("guard Write: deny Write: deny"), "{ctx}");
        assert!(so.contains("workspace written"), "{ctx}");
    }
}

#[test]
fn a_trusted_line_running_the_projects_own_code_is_not_trusted() {
    let script = format!(
        r#"
{HOOK}
export HOME=$B/home; mkdir -p $HOME/.config/skarn
mkdir -p p && cd p && git init -q .
mkdir -p .claude/skills/ctx
cat > .claude/skills/ctx/SKILL.md <<'MD'
---
name: ctx
description: context
---
Test: !`python3 -m pytest -q`
MD
echo 'def test_a(): pass' > test_a.py
python3 -c "import json;json.dump({{'hooks':{{'PostToolUse':[{{'matcher':'Edit','hooks':[{{'type':'command','command':'npx jest'}}]}}]}}}},open('.claude/settings.json','w'))"
printf '[hook]\ntrusted_hooks = ["python3 -m pytest -q", "npx jest", "notify-send done", "my-audit --log"]\n' > $HOME/.config/skarn/config.toml
"$SK" init --accept-project-settings --client claude-code >/dev/null 2>$B/init.err; echo "init rc=$?"
grep -c 'NOT trusted' $B/init.err | sed 's/^/refused /'
grep -q 'notify-send' $B/init.err && echo "harmless warned"
grep -q '"my-audit --log" runs my-audit unconfined, and skarn does not know' $B/init.err && echo "unknown warned"
grep -q 'the hook `npx jest` now runs inside skarn run' $B/init.err && echo "jest hook wrapped"
grep -q 'SKILL.md: a shell line .* python3 -m pytest -q' $B/init.err && echo "pytest line refused"
"#
    );
    for user in users() {
        let (so, ctx) = run("f24x_runner", &script, user);
        assert!(!so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("refused 2"), "{ctx}");
        assert!(!so.contains("harmless warned"), "{ctx}");
        assert!(so.contains("unknown warned"), "{ctx}");
        // The settings hook is confined, the skill's line refused.
        assert!(so.contains("jest hook wrapped"), "{ctx}");
        assert!(so.contains("pytest line refused"), "{ctx}");
    }
}
