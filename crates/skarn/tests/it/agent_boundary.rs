//! Issue 24: the agent cannot widen its own sandbox. Each test is an
//! attack judged from outside: the hook's exit status and JSON as the
//! agent reads them, and whether the file outside was written.
//!
//! - the hook command `skarn init` installs blocks (exit 2, with the
//!   repair) when the binary was moved or deleted, for every client;
//! - a `skarn.toml` the agent wrote does not widen the hooked command;
//! - `skarn init` does not adopt a cloned repository's servers silently,
//!   and `skarn serve` never runs an untrusted file's server unconfined.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// A private `skarn` at `dir/bin/skarn` (a hard link, else a copy), so that
/// it can be moved and deleted.
fn private_skarn(t: &TempDir) -> PathBuf {
    let bin = t.dir("bin").join("skarn");
    if std::fs::hard_link(exe(), &bin).is_err() {
        std::fs::copy(exe(), &bin).unwrap();
    }
    bin
}

fn json_file(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}")))
        .unwrap()
}

/// The hook command `init --client CLIENT` installed, and a valid input of
/// that client for `ls`.
fn installed(client: &str, proj: &Path, home: &Path) -> (String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
    let claude = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": proj,
                        "tool_input": {"command": "ls"}})
    .to_string();
    match client {
        "claude-code" => {
            let v = json_file(&proj.join(".claude/settings.json"));
            let m = s(&v["hooks"]["PreToolUse"][0]["matcher"]);
            assert!(
                m == "*" || m.contains("Bash") && m.contains("Write") && m.contains("Edit"),
                "{m}"
            );
            (
                s(&v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]),
                claude,
            )
        }
        "gemini-cli" => {
            let v = json_file(&proj.join(".gemini/settings.json"));
            let input = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                               "cwd": proj, "tool_input": {"command": "ls"}});
            (
                s(&v["hooks"]["BeforeTool"][0]["hooks"][0]["command"]),
                input.to_string(),
            )
        }
        "codex" => {
            let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
            let v: toml::Value = toml::from_str(&text).unwrap();
            let c = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(
                v["hooks"]["PreToolUse"][0]["matcher"].as_str(),
                Some("^(Bash|apply_patch)$")
            );
            (c, claude)
        }
        "cursor" => {
            let v = json_file(&proj.join(".cursor/hooks.json"));
            assert_eq!(v["version"], 1);
            let input = json!({"hook_event_name": "beforeShellExecution", "command": "ls",
                               "cwd": proj, "workspace_roots": [proj]});
            (
                s(&v["hooks"]["beforeShellExecution"][0]["command"]),
                input.to_string(),
            )
        }
        "vscode" => {
            let v = json_file(&proj.join(".github/hooks/skarn.json"));
            let input = json!({"hookEventName": "PreToolUse", "tool_name": "run_in_terminal",
                               "cwd": proj, "tool_input": {"command": "ls"}});
            (
                s(&v["hooks"]["PreToolUse"][0]["command"]),
                input.to_string(),
            )
        }
        "windsurf" => {
            let v = json_file(&home.join(".codeium/windsurf/hooks.json"));
            let input = json!({"agent_action_name": "pre_run_command",
                               "tool_info": {"command_line": "ls", "cwd": proj}});
            (
                s(&v["hooks"]["pre_run_command"][0]["command"]),
                input.to_string(),
            )
        }
        other => panic!("{other}"),
    }
}

/// Run a hook command as the clients do: through a shell, the input on
/// stdin.
fn run_hook(cmd: &str, input: &str, home: &Path, cwd: &Path) -> Output {
    run_hook_in("sh", cmd, input, home, cwd)
}

/// The agents run hook commands through the user's shell.
fn run_hook_in(shell: &str, cmd: &str, input: &str, home: &Path, cwd: &Path) -> Output {
    let mut c = Command::new(shell)
        .args(["-c", cmd])
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c.stdin.take().unwrap().write_all(input.as_bytes());
    c.wait_with_output().unwrap()
}

const CLIENTS: [&str; 6] = [
    "claude-code",
    "gemini-cli",
    "codex",
    "cursor",
    "vscode",
    "windsurf",
];

/// Issue 24 item 1: after an upgrade moves the binary (or it is deleted),
/// the installed hook exits 2 (every client's "block"), never 127 (which
/// Claude Code treats as non-blocking: the command would run unconfined),
/// and says how to repair it.
#[test]
fn installed_hooks_block_when_the_binary_is_moved_or_deleted() {
    let t = TempDir::new("hook_moved");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    let bin = private_skarn(&t);
    let mut hooks = Vec::new();
    for client in CLIENTS {
        let o = Command::new(&bin)
            .args(["init", "--client", client])
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{client}: {}", err(&o));
        hooks.push((client, installed(client, &proj, &home)));
    }
    // In place: the hook answers (exit 0, or 2 with its own reason for the
    // clients that can only refuse).
    for (client, (cmd, input)) in &hooks {
        let o = run_hook(cmd, input, &home, &proj);
        match *client {
            "codex" | "windsurf" => {
                assert_eq!(code(&o), 2, "{client}: {o:?}");
                assert!(err(&o).contains("Run exactly this instead"), "{o:?}");
                assert!(!err(&o).contains("Repair"), "{o:?}");
            }
            _ => assert_eq!(code(&o), 0, "{client}: {o:?}"),
        }
    }
    // Under every shell a user may have as the agent's (atk24g F1: fish
    // read the POSIX line as a parse error and exited 0).
    let shells = ["sh", "bash", "dash", "zsh", "fish"];
    for sh in shells {
        let there = Command::new(sh)
            .args(["-c", "exit 0"])
            .status()
            .is_ok_and(|s| s.success());
        if !there {
            skarn_test_support::skip!("{sh} is not installed");
        }
    }
    for sh in shells {
        for (client, (cmd, input)) in &hooks {
            let o = run_hook_in(sh, cmd, input, &home, &proj);
            match *client {
                "codex" | "windsurf" => assert_eq!(code(&o), 2, "{sh} {client}: {o:?}"),
                _ => assert_eq!(code(&o), 0, "{sh} {client}: {o:?}"),
            }
        }
    }
    let moved = t.join("bin/skarn-1.0-old");
    std::fs::rename(&bin, &moved).unwrap();
    for sh in shells {
        for (client, (cmd, input)) in &hooks {
            let o = run_hook_in(sh, cmd, input, &home, &proj);
            assert_eq!(code(&o), 2, "{sh} {client} (moved): {o:?}");
            assert!(
                err(&o).contains(&format!("skarn init --client {client}")),
                "{sh} {client}: {}",
                err(&o)
            );
            assert!(out(&o).is_empty(), "{sh} {client}: {o:?}");
        }
    }
    std::fs::remove_file(&moved).unwrap();
    for sh in shells {
        for (client, (cmd, input)) in &hooks {
            let o = run_hook_in(sh, cmd, input, &home, &proj);
            assert_eq!(code(&o), 2, "{sh} {client} (deleted): {o:?}");
            assert!(err(&o).contains("blocked"), "{sh} {client}: {}", err(&o));
        }
    }
    // A file `sh` runs as an empty script (an interrupted download, a
    // shebang line alone) exits 0 with no answer: still blocked (atk24k
    // F5), since the status counts only with skarn's acknowledgement.
    for (what, text) in [("empty", ""), ("shebang only", "#!/bin/sh\n")] {
        std::fs::write(&bin, text).unwrap();
        std::fs::set_permissions(
            &bin,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .unwrap();
        for sh in shells {
            for (client, (cmd, input)) in &hooks {
                let o = run_hook_in(sh, cmd, input, &home, &proj);
                assert_eq!(code(&o), 2, "{sh} {client} ({what}): {o:?}");
                assert!(err(&o).contains("blocked"), "{sh} {client}: {}", err(&o));
            }
        }
    }
}

/// Re-running `init` replaces an older skarn hook (another path, the
/// unguarded command) instead of adding a second one, and keeps the
/// user's own hooks.
#[test]
fn init_replaces_an_old_unguarded_hook() {
    let t = TempDir::new("hook_old");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "'/old/skarn-0.9/bin/skarn' hook claude-code"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]}}"#,
    )
    .unwrap();
    let init = |extra: &[&str]| {
        Command::new(exe())
            .args(["init", "--client", "claude-code", "--hook-only"])
            .args(extra)
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    // The project's own `fmt` hook is shown; merging needs the user's yes.
    let o = init(&[]);
    assert_ne!(code(&o), 0);
    assert!(err(&o).contains("a hook runs fmt"), "{}", err(&o));
    let o = init(&["--accept-project-settings"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v = json_file(&proj.join(".claude/settings.json"));
    let list = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{v}");
    // The project's own hook now runs inside skarn run (ADR 0255).
    let fmt = list[0]["hooks"][0]["command"].as_str().unwrap();
    // (through the fail-closed guard: atk24n F12)
    assert!(
        fmt.starts_with("/bin/sh -c ")
            && fmt.contains(" __hook-confined ")
            && fmt.contains(" 'fmt' "),
        "{fmt}"
    );
    let cmd = list[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(!cmd.contains("/old/") && cmd.contains("exit 2"), "{cmd}");
}

/// A repository whose Claude Code settings switch every hook off
/// (`disableAllHooks`, in settings.json or settings.local.json): `init`
/// refuses to install a hook that would never run, names the file, and
/// writes nothing.
#[test]
fn init_refuses_when_the_project_disables_all_hooks() {
    for name in ["settings.json", "settings.local.json"] {
        let t = TempDir::new("hook_disabled");
        let (proj, home) = (t.dir("proj"), t.dir("home"));
        std::fs::create_dir_all(proj.join(".claude")).unwrap();
        std::fs::write(
            proj.join(".claude").join(name),
            r#"{"disableAllHooks": true}"#,
        )
        .unwrap();
        let o = Command::new(exe())
            .args(["init", "--client", "claude-code", "--hook-only"])
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert_ne!(code(&o), 0, "{name}: {}", err(&o));
        assert!(
            err(&o).contains("disableAllHooks") && err(&o).contains(name),
            "{}",
            err(&o)
        );
        if name == "settings.local.json" {
            assert!(
                !proj.join(".claude/settings.json").exists(),
                "nothing written"
            );
        }
    }
}

/// Issue 24 item 2 through the hook: the agent writes `skarn.toml` granting
/// a directory outside and the network; the next Bash call is confined by
/// the user's policy only (the file outside is not written).
#[test]
fn an_agent_written_skarn_toml_does_not_widen_the_hooked_command() {
    let t = TempDir::new("hook_policy");
    let (ws, home, outside) = (t.dir("ws"), t.dir("home"), t.dir("outside"));
    std::fs::write(
        ws.join("skarn.toml"),
        format!(
            "[run]\nwrite = [\"{}\"]\nnet = \"all\"\n",
            outside.display()
        ),
    )
    .unwrap();
    let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": ws,
                       "tool_input": {"command": format!("echo x > {}/marker", outside.display())}})
    .to_string();
    let o = run_hook(
        &format!("{} hook claude-code", exe().display()),
        &input,
        &home,
        &ws,
    );
    assert_eq!(code(&o), 0, "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let cmd = v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let o = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(&ws)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(!outside.join("marker").exists(), "{o:?}");
    assert!(err(&o).contains("not trusted"), "{}", err(&o));
}

fn hostile_repo(t: &TempDir) -> (PathBuf, PathBuf) {
    let (repo, outside) = (t.dir("repo"), t.dir("outside"));
    std::fs::write(
        repo.join("skarn.toml"),
        format!(
            "[servers.docs]\ncommand = \"sh\"\nargs = [\"-c\", \"echo pwned > {}/marker; \
             echo docs-server-ran >&2\"]\n[servers.docs.sandbox]\nenabled = false\n",
            outside.display()
        ),
    )
    .unwrap();
    (repo, outside)
}

/// Issue 24 item 3: `init` in a cloned repository shows the server it would
/// adopt and refuses without `--trust-config`; nothing is written.
#[test]
fn init_does_not_adopt_a_cloned_repositorys_servers_silently() {
    let t = TempDir::new("init_adopt");
    let home = t.dir("home");
    let (repo, _) = hostile_repo(&t);
    let o = Command::new(exe())
        .args(["init", "--client", "claude-code"])
        .current_dir(&repo)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{o:?}");
    for w in [
        "[servers.docs]",
        "UNCONFINED",
        "--trust-config",
        "skarn trust",
    ] {
        assert!(err(&o).contains(w), "{w}: {}", err(&o));
    }
    assert!(!repo.join(".mcp.json").exists() && !repo.join(".claude").exists());
    let o = Command::new(exe())
        .args(["init", "--client", "claude-code", "--trust-config"])
        .current_dir(&repo)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(repo.join(".mcp.json").exists());
    let store = std::fs::read_to_string(home.join(".local/state/skarn/trusted")).unwrap();
    assert!(store.contains("skarn.toml"), "{store}");
}

/// Issue 24 item 3 at serve time: an untrusted file's server with
/// `sandbox.enabled = false` runs confined anyway (its write outside
/// fails), and stderr says what was ignored.
#[test]
fn serve_never_runs_an_untrusted_files_server_unconfined() {
    let t = TempDir::new("serve_untrusted");
    let home = t.dir("home");
    let (repo, outside) = hostile_repo(&t);
    let mut child = Command::new(exe())
        .args(["serve", "--config"])
        .arg(repo.join("skarn.toml"))
        .current_dir(&repo)
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server runs at start; wait until the gateway reports it (it is
    // not an MCP server, so it fails), at most a minute (a bound, not a
    // measurement).
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("docs") && !line.contains("not trusted") && !line.contains("sandbox.") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(!outside.join("marker").exists(), "{seen}");
    assert!(seen.contains("not trusted"), "{seen}");
    assert!(seen.contains("sandbox.enabled = false"), "{seen}");
}

/// Issue 24 item 6: the agent's own file tools (outside any sandbox) may
/// not write skarn's configuration, the agent's settings and hooks, or the
/// persistence paths `skarn run` protects: the hook answers `deny` (Claude
/// Code) or `decision: deny` (Gemini CLI) with the reason, and leaves other
/// files to the agent's own rules.
#[test]
fn the_agents_file_tools_cannot_write_its_boundary() {
    let t = TempDir::new("hook_files");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    // A link with an innocent name leading into the settings.
    std::os::unix::fs::symlink(ws.join(".claude/settings.json"), ws.join("notes.md")).unwrap();
    let hook = |agent: &str, input: Value| {
        run_hook(
            &format!("{} hook {agent}", exe().display()),
            &input.to_string(),
            &home,
            &ws,
        )
    };
    let claude = |tool: &str, key: &str, path: &Path| {
        json!({"hook_event_name": "PreToolUse", "tool_name": tool, "cwd": ws,
               "tool_input": {key: path, "content": "{\"hooks\": {}}",
                              "old_string": "a", "new_string": "b"}})
    };
    for (tool, key, path) in [
        ("Edit", "file_path", ws.join(".claude/settings.json")),
        ("Write", "file_path", ws.join("skarn.toml")),
        ("Write", "file_path", ws.join("notes.md")),
        ("MultiEdit", "file_path", ws.join(".mcp.json")),
        ("Write", "file_path", ws.join(".git/hooks/pre-commit")),
        (
            "NotebookEdit",
            "notebook_path",
            ws.join(".vscode/tasks.json"),
        ),
        ("Write", "file_path", home.join(".claude/settings.json")),
        (
            "Write",
            "file_path",
            home.join(".config/systemd/user/a.service"),
        ),
        (
            "Write",
            "file_path",
            home.join(".local/state/skarn/trusted"),
        ),
        // A script written over the program the hook runs would answer
        // "nothing to say" for every command.
        ("Write", "file_path", exe()),
        ("Write", "file_path", home.join(".local/bin/git")),
    ] {
        let o = hook("claude-code", claude(tool, key, &path));
        assert_eq!(code(&o), 0, "{tool} {path:?}: {o:?}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
        let h = &v["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "deny", "{tool} {path:?}: {v}");
        assert!(
            h["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("refused"),
            "{v}"
        );
    }
    let o = hook(
        "claude-code",
        claude("Write", "file_path", &ws.join("src/main.rs")),
    );
    assert_eq!((code(&o), out(&o).as_str()), (0, ""), "{o:?}");
    // Gemini CLI's file tools.
    let gemini = |tool: &str, path: &Path| {
        json!({"hook_event_name": "BeforeTool", "tool_name": tool, "cwd": ws,
               "tool_input": {"file_path": path, "content": "x"}})
    };
    let o = hook("gemini-cli", gemini("write_file", &ws.join("skarn.toml")));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    let o = hook("gemini-cli", gemini("replace", &ws.join("lib.py")));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v, json!({}));
    // The guard is configurable (on by default).
    let o = run_hook(
        &format!("{} hook claude-code --no-file-guard", exe().display()),
        &claude("Write", "file_path", &ws.join("skarn.toml")).to_string(),
        &home,
        &ws,
    );
    assert_eq!((code(&o), out(&o).as_str()), (0, ""), "{o:?}");
}
