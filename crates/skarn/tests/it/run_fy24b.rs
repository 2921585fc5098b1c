//! Attack atk24u F1, F2: a trusted line's script read as the shell and
//! its interpreter read it (`sh -e x`, `bash -o pipefail x`, `python3 -W
//! ignore x`, `sh < x`, `source x`, `cat x | sh`) and resolved as the
//! interpreter loads it (`python3 .`'s `__main__.py`, `node srv`'s
//! `srv.js`, `package.json` `main` out of the directory, a script not
//! made yet). The confined side rewrites each; the trusted lines then
//! run on the host (the client's step, by a script) and must not run the
//! planted code. Root and uid 65534.

use crate::support_secret_sources::users;

/// The trusted lines (also the skill's `!` lines).
const LINES: &[&str] = &[
    "sh -e .c1.sh",
    "bash -o pipefail .c2.sh",
    "python3 -W ignore tool1",
    "sh < .c3.sh",
    "source .c4.sh",
    "cat .c5.sh | sh",
    "python3 -X dev tool2",
    "sh .c10.sh",
    "python3 gen",
    "python3 .",
    "node srv",
    "node app",
];

fn run(tag: &str, script: &str, user: bool) -> (String, String) {
    crate::support_hook::run_attempt_markers(tag, script, user)
}

fn setup(lines: &[&str]) -> String {
    let skill: String = lines.iter().map(|l| format!("- !`{l}`\n")).collect();
    let trusted: Vec<String> = lines.iter().map(|l| format!("{l:?}")).collect();
    format!(
        r#"
export HOME=$B/home; mkdir -p $HOME/.config/skarn
mkdir -p p && cd p && git init -q .
mkdir -p .claude/skills/ctx tool1 tool2 app lib
cat > .claude/skills/ctx/SKILL.md <<'MD'
---
name: ctx
description: context
---
{skill}MD
for i in 1 2 3 4 5; do echo "echo c$i" > .c$i.sh; done
echo 'print(1)' > tool1/__main__.py; echo 'print(2)' > tool2/__main__.py; echo 'print(0)' > __main__.py
echo 'console.log(1)' > srv.js; echo '{{"name":"app","main":"../lib/m.js"}}' > app/package.json; echo 'console.log(2)' > lib/m.js
cat > $HOME/.config/skarn/config.toml <<'TOML'
[hook]
trusted_hooks = [{}]
TOML
"$SK" init --client claude-code >/dev/null 2>$B/init.err; echo "init rc=$?"
"#,
        trusted.join(", ")
    )
}

#[test]
fn a_trusted_lines_script_is_kept_as_the_shell_and_interpreter_read_it() {
    let script = format!(
        r#"{}
# The agent's confined command rewrites (or makes) what the lines run.
"$SK" run --caller hook --workspace $B/p -- sh -c "
 for i in 1 2 3 4 5; do echo \"id > $B/PWNED-c\$i\" > .c\$i.sh || echo held c\$i; done
 echo 'id > $B/PWNED-missing-sh' > .c10.sh || echo held c10
 mkdir gen && echo 'import os; os.system(\"id > $B/PWNED-missing-py\")' > gen/__main__.py || echo held gen
 echo 'import os; os.system(\"id > $B/PWNED-tool1\")' > tool1/__main__.py || echo held tool1
 echo 'import os; os.system(\"id > $B/PWNED-tool2\")' > tool2/__main__.py || echo held tool2
 echo 'import os; os.system(\"id > $B/PWNED-dot\")' > __main__.py || echo held dot
 echo 'require(\"fs\").writeFileSync(\"$B/PWNED-srv\",\"x\")' > srv.js || echo held srv
 echo 'require(\"fs\").writeFileSync(\"$B/PWNED-srv-bare\",\"x\")' > srv || echo held srv-bare
 echo 'require(\"fs\").writeFileSync(\"$B/PWNED-main\",\"x\")' > lib/m.js || echo held main
 echo done" 2>&1 | grep '^held' | tr '\n' ' ' | sed 's/^/heldlist /'; echo
# (Missing ones are reserved: what the run made there is not applied.)
[ ! -e .c10.sh ] && [ ! -e gen ] && [ ! -e srv ] && echo "not made"
# The client runs each trusted line on the host when the skill loads.
while IFS= read -r l; do bash -c "$l" >/dev/null 2>&1; done <<'L'
{}
L
# Usability: the lines still run inside skarn run, the workspace is written.
"$SK" run --caller hook --workspace $B/p -- bash -c "sh -e .c1.sh && cat .c5.sh | sh && python3 . && node srv && echo y > notes.txt" 2>&1 | tr '\n' ' '
echo; [ "$(cat notes.txt)" = y ] && echo "workspace written"
"#,
        setup(LINES),
        LINES.join("\n")
    );
    for user in users() {
        let (so, ctx) = run("fy24b_lines", &script, user);
        assert!(so.contains("init rc=0"), "{ctx}");
        assert!(
            so.contains(
                "heldlist held c1 held c2 held c3 held c4 held c5 held tool1 held tool2 \
                 held dot held srv held main"
            ),
            "{ctx}"
        );
        assert!(so.contains("not made"), "{ctx}");
        assert!(so.contains("c1 c5 0 1"), "{ctx}");
        assert!(so.contains("workspace written"), "{ctx}");
    }
}

#[test]
fn a_trusted_line_whose_reading_is_unsure_is_not_trusted() {
    let lines = ["node --frob srv", "sh $SCRIPT"];
    let script = format!(
        "{}\ngrep -c 'NOT trusted' $B/init.err | sed 's/^/refused /'\n",
        setup(&lines)
    );
    for user in users() {
        let (so, ctx) = run("fy24b_unsure", &script, user);
        assert!(!so.contains("init rc=0"), "{ctx}");
        assert!(so.contains("refused 2"), "{ctx}");
    }
}
