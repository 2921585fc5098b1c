//! Attack pass atk24j on issue 24, the file guard: writes `skarn run`
//! keeps read-only or sets aside, which the agent's file tools (writing
//! outside any sandbox) could still make. Judged as the agent reads the
//! hook's answer (Claude Code's `permissionDecision`, Gemini CLI's
//! `decision`); each case is one the attack showed the host then ran.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// The hook's decision for `agent`'s file tool writing `file` ("deny" or
/// "none").
fn decision(agent: &str, ws: &Path, home: &Path, file: &Path) -> String {
    let input = match agent {
        "gemini-cli" => json!({"hook_event_name": "BeforeTool", "tool_name": "write_file",
                               "cwd": ws, "tool_input": {"file_path": file, "content": "X=1\n"}}),
        _ => json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": ws,
                    "tool_input": {"file_path": file, "content": "X=1\n"}}),
    };
    let mut c = Command::new(exe())
        .args(["hook", agent])
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    let o = c.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    if o.stdout.is_empty() {
        return "none".into();
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .or(v["decision"].as_str())
        .unwrap_or("none")
        .to_string()
}

fn project(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let (ws, home) = (t.dir("home/ws"), t.path().join("home"));
    git(&ws, &["init", "-q"]);
    (ws, home)
}

/// F1, F11, F13: a venv's activation scripts and interpreters, a conda
/// environment's, the files mise runs, `.lfsconfig` below the top, a
/// customize module outside `site-packages`, the module an executable
/// `.pth` line imports.
#[test]
fn environment_and_tool_start_up_files_are_refused() {
    let t = TempDir::new("atk24j_env");
    let (ws, home) = project(&t);
    std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
    std::fs::write(ws.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(ws.join(".venv/bin/activate"), "# activate\n").unwrap();
    std::fs::create_dir_all(ws.join("env/conda-meta")).unwrap();
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::write(ws.join("scripts/env.sh"), ": env\n").unwrap();
    std::fs::write(
        ws.join("mise.toml"),
        "[env]\n_.source = \"scripts/env.sh\"\n",
    )
    .unwrap();
    let sp = ws.join(".venv/lib/python3.12/site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    std::fs::write(
        sp.join("__editable__.proj-0.1.pth"),
        "import __editable___proj_0_1_finder; __editable___proj_0_1_finder.install('x')\n",
    )
    .unwrap();
    std::fs::write(
        sp.join("__editable___proj_0_1_finder.py"),
        "def install(x): pass\n",
    )
    .unwrap();
    for f in [
        ".venv/bin/activate",
        ".venv/bin/python3",
        "env/bin/python",
        "env/etc/conda/activate.d/evil.sh",
        "scripts/env.sh",
        "sub/.lfsconfig",
        "src/sitecustomize.py",
        "src/usercustomize.py",
        ".venv/lib/python3.12/site-packages/__editable___proj_0_1_finder.py",
    ] {
        assert_eq!(
            decision("claude-code", &ws, &home, &ws.join(f)),
            "deny",
            "{f}"
        );
    }
    for f in [
        "src/main.py",
        "scripts/other.sh",
        ".venv/lib/python3.12/site-packages/x.py",
    ] {
        assert_eq!(
            decision("claude-code", &ws, &home, &ws.join(f)),
            "none",
            "{f}"
        );
    }
}

/// F6: a sub-directory made into a git directory, in either order of
/// the writes.
#[test]
fn a_git_directory_below_the_top_cannot_be_made() {
    let t = TempDir::new("atk24j_gitdir");
    let (ws, home) = project(&t);
    std::fs::create_dir_all(ws.join("src/objects")).unwrap();
    std::fs::create_dir_all(ws.join("lib")).unwrap();
    std::fs::write(ws.join("lib/HEAD"), "ref: refs/heads/main\n").unwrap();
    for f in [
        "src/HEAD",
        "src/config",
        "lib/refs/heads/main",
        "lib/objects/.keep",
        "lib/config",
    ] {
        assert_eq!(
            decision("claude-code", &ws, &home, &ws.join(f)),
            "deny",
            "{f}"
        );
    }
    assert_eq!(
        decision("claude-code", &ws, &home, &ws.join("docs/config")),
        "none"
    );
}

/// F8: another name of a protected home file inside the workspace.
#[test]
fn a_hard_link_to_a_file_outside_is_refused() {
    let t = TempDir::new("atk24j_hardlink");
    let (ws, home) = project(&t);
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    if std::fs::hard_link(home.join(".bashrc"), ws.join("notes.md")).is_err() {
        skarn_test_support::skip!("hard links are not allowed here");
    }
    assert_eq!(
        decision("claude-code", &ws, &home, &ws.join("notes.md")),
        "deny"
    );
    std::fs::write(ws.join("plain.md"), "x").unwrap();
    assert_eq!(
        decision("claude-code", &ws, &home, &ws.join("plain.md")),
        "none"
    );
}

/// F12: Gemini CLI loads the project's `.env` into its own environment
/// (every command it starts inherits `BASH_ENV`, ...): its `write_file`
/// may not create it; other agents do not load it.
#[test]
fn geminis_own_env_file_is_refused() {
    let t = TempDir::new("atk24j_genv");
    let (ws, home) = project(&t);
    assert_eq!(decision("gemini-cli", &ws, &home, &ws.join(".env")), "deny");
    assert_eq!(
        decision("gemini-cli", &ws, &home, &ws.join("sub/.env")),
        "none"
    );
    assert_eq!(
        decision("claude-code", &ws, &home, &ws.join(".env")),
        "none"
    );
}

/// F10: with another PreToolUse hook on Bash, Claude Code may keep
/// skarn's `allow` and drop its rewrite, auto-approving the model's
/// original command unconfined. Then the hook gives no `allow` with a
/// rewrite: it refuses and names the confined command, which passes when
/// the model runs it.
#[test]
fn beside_another_bash_hook_claude_gets_no_allow_with_a_rewrite() {
    let t = TempDir::new("atk24j_peers");
    let (ws, home) = project(&t);
    let bash = |cmd: &str| {
        let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": ws,
                       "tool_input": {"command": cmd}});
        let mut c = Command::new(exe())
            .args(["hook", "claude-code"])
            .current_dir(&ws)
            .env("HOME", &home)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = c.stdin.take().unwrap().write_all(i.to_string().as_bytes());
        let o = c.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{o:?}");
        if o.stdout.is_empty() {
            return Value::Null;
        }
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["hookSpecificOutput"].clone()
    };
    let v = bash("id");
    assert_eq!(v["permissionDecision"], "allow", "{v}");
    assert!(v["updatedInput"].is_object(), "{v}");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "rtk-rewrite.sh"}]}]}}"#,
    )
    .unwrap();
    // Unwrapped and untrusted, it stops everything (ADR 0255)...
    assert_eq!(bash("id")["permissionDecision"], "deny");
    // ...trusted (the user keeps it unconfined), the peer rule applies.
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[hook]\ntrusted_hooks = [\"rtk-rewrite.sh\"]\n",
    )
    .unwrap();
    let v = bash("id");
    assert_eq!(v["permissionDecision"], "deny", "{v}");
    assert!(v.get("updatedInput").is_none(), "{v}");
    let why = v["permissionDecisionReason"].as_str().unwrap();
    let named = why.split_once("Run exactly this instead: ").unwrap().1;
    assert!(named.contains(" run --caller hook --workspace "), "{why}");
    // The model runs the named command: no answer (the agent's own rules).
    assert_eq!(bash(named), Value::Null);
}

/// F9: `init --user` wrote `~/.claude/settings.json` while Claude Code
/// read `$CLAUDE_CONFIG_DIR`, and `init --client codex` `~/.codex` while
/// Codex read `$CODEX_HOME`: the hook was never started. init writes where
/// the client reads, and the file guard refuses writes there.
#[test]
fn init_writes_where_the_client_reads_its_user_files() {
    let t = TempDir::new("atk24j_cfgdir");
    let (ws, home) = project(&t);
    let (claude, codex) = (home.join("claude-work"), home.join("codex-work"));
    for (client, var, dir, file) in [
        ("claude-code", "CLAUDE_CONFIG_DIR", &claude, "settings.json"),
        ("codex", "CODEX_HOME", &codex, "config.toml"),
    ] {
        std::fs::create_dir_all(dir).unwrap();
        let mut args = vec!["init", "--client", client];
        if client == "claude-code" {
            args.push("--user");
        }
        let o = Command::new(exe())
            .args(&args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env(var, dir)
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{client}: {}", err(&o));
        let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            text.contains("hook"),
            "{client}: {}: {text}",
            dir.join(file).display()
        );
        // The agent's file tools may not write there.
        let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": ws,
                       "tool_input": {"file_path": dir.join(file), "content": "{}"}});
        let mut c = Command::new(exe())
            .args(["hook", "claude-code"])
            .current_dir(&ws)
            .env("HOME", &home)
            .env(var, dir)
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = c.stdin.take().unwrap().write_all(i.to_string().as_bytes());
        let o = c.wait_with_output().unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("\"deny\""),
            "{client}: {o:?}"
        );
    }
}
