//! The attack pass atk24c on issue 24 (notes: findings-atk24c), the
//! findings of builder s33b: the `.envrc` reader misses commands after a
//! reserved word, `eval` and redirections (F3). Each is the attack,
//! judged from outside: the file not written, the planted code not run
//! by bash reading the `.envrc` as direnv does.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::agent_files::{git_ok, judge, run_sh};
use crate::common::*;
use skarn_test_support::TempDir;

/// F3: the one-line `if ...; then source_env x; fi`, `{ source_env x; }`,
/// `eval "$(cat x)"` and `done < x`: each file is read-only to a
/// sandboxed command (missing or not) and refused to the file tools; the
/// `.envrc` read by bash afterwards runs nothing the run wrote.
#[test]
fn files_an_envrc_reads_after_a_reserved_word_are_protected() {
    let cases = [
        (
            "if [ -f .envrc.user ]; then source_env .envrc.user; fi\n",
            ".envrc.user",
        ),
        ("{ source_env .envrc.x; }\n", ".envrc.x"),
        (
            "for f in .envrc.f; do source_env \"$f\"; done\n",
            ".envrc.f",
        ),
        ("time source_env .envrc.t\n", ".envrc.t"),
        ("eval \"$(cat .envrc.e)\"\n", ".envrc.e"),
        (
            "while read -r l; do eval \"$l\"; done < .envrc.r\n",
            ".envrc.r",
        ),
    ];
    for (text, name) in cases {
        let t = TempDir::new("atk24c_envrc");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git_ok(&ws, &["init", "-q", "."]);
        std::fs::write(ws.join(".envrc"), text).unwrap();
        // Past the after-run check's clock margin.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mark = t.path().join("ran");
        let o = run_sh(
            &ws,
            &home,
            &format!(
                "echo 'echo RAN > {}' > {name}; echo ok > other.txt",
                mark.display()
            ),
        );
        assert!(
            !std::fs::read_to_string(ws.join(name))
                .unwrap_or_default()
                .contains("RAN"),
            "{text:?}: {name} was written: {o:?}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
            "ok\n",
            "{o:?}"
        );
        // What direnv does at the next `cd` (its stdlib's calls source).
        let _ = std::process::Command::new("bash")
            .arg("-c")
            .arg("source_env() { [ -f \"$1\" ] && . \"$1\"; }; . ./.envrc")
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(!mark.exists(), "{text:?}: the planted code ran");
        let why = judge(&ws.join(name).display().to_string(), &ws, &home);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("direnv")),
            "{name}: {why:?}"
        );
    }
}

/// The hook run as `skarn hook <args>` in `dir` with `input` on stdin.
pub(crate) fn hook(args: &[&str], input: &str, home: &Path, dir: &Path) -> Output {
    let mut c = Command::new(exe())
        .arg("hook")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c.stdin.take().unwrap().write_all(input.as_bytes());
    c.wait_with_output().unwrap()
}

/// Claude Code's answer: `Some(reason)` for a deny, `None` for none.
pub(crate) fn claude_file(
    tool: &str,
    tool_input: Value,
    ws: &Path,
    home: &Path,
    flags: &[&str],
) -> Option<String> {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": tool, "tool_input": tool_input});
    let mut args = vec!["claude-code"];
    args.extend(flags);
    let o = hook(&args, &i.to_string(), home, ws);
    assert_eq!(code(&o), 0, "{tool}: {o:?}");
    if o.stdout.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    Some(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

/// Issue 24 item 6: the agent's own file tools stay inside the boundary
/// of its commands. A Write, Edit, MultiEdit or NotebookEdit (as Claude
/// Code sends them), Codex's apply_patch and Gemini CLI's write_file
/// outside the workspace and the user's write grants is refused, as a
/// `skarn run` there cannot write it either; inside, no objection; the
/// user's `[run] write` grant and `[hook] file_boundary = false` /
/// `--no-file-boundary` open it.
#[test]
fn file_tools_stay_inside_what_commands_can_write() {
    let t = TempDir::new("atk24c_boundary");
    let (ws, home, shared) = (t.dir("ws"), t.dir("home"), t.dir("shared"));
    git_ok(&ws, &["init", "-q", "."]);
    let target = shared.join("notes.sh");
    let profile = Path::new("/etc/profile.d/skarn-atk24c-never.sh");
    let inside = ws.join("src/main.rs");
    let shapes = |p: &Path| {
        vec![
            ("Write", json!({"file_path": p, "content": "id > /tmp/x\n"})),
            (
                "Edit",
                json!({"file_path": p, "old_string": "a", "new_string": "b", "replace_all": false}),
            ),
            (
                "MultiEdit",
                json!({"file_path": p, "edits": [{"old_string": "a", "new_string": "b"}]}),
            ),
            (
                "NotebookEdit",
                json!({"notebook_path": p, "new_source": "x", "cell_type": "code", "edit_mode": "insert"}),
            ),
        ]
    };
    for p in [target.as_path(), profile] {
        for (tool, ti) in shapes(p) {
            let why = claude_file(tool, ti, &ws, &home, &[]);
            assert!(
                why.as_deref()
                    .is_some_and(|w| w.contains("outside the workspace")),
                "{tool} {}: {why:?}",
                p.display()
            );
        }
    }
    for (tool, ti) in shapes(&inside) {
        assert_eq!(claude_file(tool, ti, &ws, &home, &[]), None, "{tool}");
    }
    // Relative, climbing out of the workspace.
    let rel = json!({"file_path": "../shared/notes.sh", "content": "x"});
    assert!(claude_file("Write", rel, &ws, &home, &[]).is_some());
    // The same write from a confined command fails: one boundary.
    let o = run_sh(&ws, &home, &format!("echo planted > {}", target.display()));
    assert!(!target.exists(), "{o:?}");
    assert!(!profile.exists());
    // Codex apply_patch (blocks with exit 2) and Gemini CLI write_file.
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+id\n*** End Patch\n",
        target.display()
    );
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "cwd": ws,
                   "tool_input": {"command": patch}});
    let o = hook(&["codex"], &i.to_string(), &home, &ws);
    assert_eq!(code(&o), 2, "{o:?}");
    assert!(err(&o).contains("outside the workspace"), "{}", err(&o));
    let i = json!({"hook_event_name": "BeforeTool", "tool_name": "write_file", "cwd": ws,
                   "tool_input": {"file_path": target, "content": "x"}});
    let o = hook(&["gemini-cli"], &i.to_string(), &home, &ws);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(v["decision"], "deny", "{o:?}");
    // The flag turns it off; so does the key.
    let w = json!({"file_path": target, "content": "x"});
    assert_eq!(
        claude_file("Write", w.clone(), &ws, &home, &["--no-file-boundary"]),
        None
    );
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let cfg = home.join(".config/skarn/config.toml");
    std::fs::write(&cfg, "[hook]\nfile_boundary = false\n").unwrap();
    assert_eq!(claude_file("Write", w.clone(), &ws, &home, &[]), None);
    // The user's own write grant: the file tools may write there too.
    std::fs::write(
        &cfg,
        format!("[run]\nwrite = [{:?}]\n", shared.display().to_string()),
    )
    .unwrap();
    assert_eq!(claude_file("Write", w.clone(), &ws, &home, &[]), None);
    // A workspace skarn.toml's grant is not trusted: still refused.
    std::fs::remove_file(&cfg).unwrap();
    std::fs::write(
        ws.join("skarn.toml"),
        format!("[run]\nwrite = [{:?}]\n", shared.display().to_string()),
    )
    .unwrap();
    assert!(claude_file("Write", w, &ws, &home, &[]).is_some());
}
