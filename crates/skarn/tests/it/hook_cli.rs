//! `skarn hook AGENT` end to end: hook JSON in, hook JSON out, then the
//! rewritten command really run through `sh -c` and judged from outside.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");
const SECRET: &str = "SECRET-KEY-MATERIAL-1234";

/// A fake home with an SSH key, and a workspace beside it.
struct Fixture {
    dir: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = TempDir::new("hook_cli");
        let ssh = dir.path().join("home/.ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::write(ssh.join("id"), SECRET).unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        Fixture { dir }
    }
    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }
    fn ws(&self) -> std::path::PathBuf {
        self.dir.path().join("ws")
    }
    fn hook(&self, args: &[&str], input: &str) -> Output {
        let mut c = Command::new(SKARN)
            .arg("hook")
            .args(args)
            .current_dir(self.ws())
            .env("HOME", self.home())
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("GEMINI_PROJECT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A hook that decides without reading all of its input may exit
        // first (EPIPE here): its output and status decide, not the write.
        let _ = c.stdin.take().unwrap().write_all(input.as_bytes());
        c.wait_with_output().unwrap()
    }
    /// Run `cmd` as the agent would: `sh -c` in the workspace.
    fn sh(&self, cmd: &str) -> Output {
        Command::new("sh")
            .args(["-c", cmd])
            .current_dir(self.ws())
            .env("HOME", self.home())
            .output()
            .unwrap()
    }
}

fn claude_input(ws: &Path, command: &str) -> String {
    json!({
        "session_id": "s", "transcript_path": "/nonexistent", "cwd": ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_use_id": "toolu_1",
        "tool_input": {"command": command, "description": "d", "timeout": 120000,
                       "run_in_background": false, "future_field": [1]}
    })
    .to_string()
}

fn json_out(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

#[test]
fn claude_code_confines_the_command_and_keeps_other_fields() {
    let f = Fixture::new();
    let key = f.home().join(".ssh/id");
    let cmd = format!("cat '{}' ~/.ssh/id; echo \"it's\" done", key.display());
    let v = json_out(&f.hook(&["claude-code"], &claude_input(&f.ws(), &cmd)));
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "allow");
    let upd = &out["updatedInput"];
    assert_eq!(upd["description"], "d");
    assert_eq!(upd["timeout"], 120000);
    assert_eq!(upd["run_in_background"], false);
    assert_eq!(upd["future_field"], json!([1]));
    let new = upd["command"].as_str().unwrap();
    assert!(
        new.starts_with(&format!("'{SKARN}' run --caller hook --workspace ")),
        "{new}"
    );
    let o = f.sh(new);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!all.contains(SECRET), "the key leaked: {all}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("it's done"),
        "{all}"
    );
    // The same command unconfined does read it (the fixture is real).
    assert!(String::from_utf8_lossy(&f.sh(&cmd).stdout).contains(SECRET));
    // A harmless command works.
    let v = json_out(&f.hook(&["claude-code"], &claude_input(&f.ws(), "echo ok")));
    let o = f.sh(v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n", "{o:?}");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn claude_code_fails_closed() {
    let f = Fixture::new();
    for bad in [
        "not json",
        "[1]",
        r#"{"tool_name": "Bash"}"#,
        r#"{"tool_name": "Bash", "tool_input": {"command": 3}, "cwd": "/"}"#,
        r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}}"#,
        r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "rel"}"#,
        r#"{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/"}"#,
    ] {
        let o = f.hook(&["claude-code"], bad);
        assert_eq!(o.status.code(), Some(2), "{bad}: {o:?}");
        assert!(o.stdout.is_empty(), "{bad}");
        assert!(!o.stderr.is_empty(), "{bad}");
    }
    // Not our tool, or exactly what the hook itself writes: no answer,
    // normal permission flow.
    let read = r#"{"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}, "cwd": "/"}"#;
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let exe = std::fs::canonicalize(SKARN).unwrap();
    let ours = format!(
        "{} run --caller hook --workspace {} -- bash -c 'ls'",
        q(exe.to_str().unwrap()),
        q(f.ws().to_str().unwrap())
    );
    for input in [read.to_string(), claude_input(&f.ws(), &ours)] {
        let o = f.hook(&["claude-code"], &input);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        assert!(o.stdout.is_empty(), "{o:?}");
    }
    // Any other program called skarn, or widening flags, is confined
    // again (a command could have planted `bin/skarn` in the workspace).
    for c in [
        "skarn run -- ls",
        "bin/skarn run --workspace . -- make",
        "skarn run --no-sandbox -- cat ~/.ssh/id",
    ] {
        let v = json_out(&f.hook(&["claude-code"], &claude_input(&f.ws(), c)));
        assert!(v["hookSpecificOutput"]["updatedInput"].is_object(), "{c}");
    }
    // bash's $'...' cannot hide a second command from the unsandboxed list.
    let v = json_out(&f.hook(
        &["claude-code", "--unsandboxed", "git"],
        &claude_input(&f.ws(), "git status $'\\''; cat ~/.ssh/id #'"),
    ));
    assert!(v["hookSpecificOutput"]["updatedInput"].is_object(), "{v}");
    // A wrapped command with more after it is confined again.
    let v = json_out(&f.hook(
        &["claude-code"],
        &claude_input(&f.ws(), "skarn run -- ls; cat x"),
    ));
    assert!(v["hookSpecificOutput"]["updatedInput"].is_object());
}

#[test]
fn claude_code_decisions_and_unsandboxed_patterns() {
    let f = Fixture::new();
    let v = json_out(&f.hook(
        &["claude-code", "--unsandboxed", "git push"],
        &claude_input(&f.ws(), "git push origin main"),
    ));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(v["hookSpecificOutput"].get("updatedInput").is_none());
    // A compound command never matches a pattern.
    let v = json_out(&f.hook(
        &["claude-code", "--unsandboxed", "git"],
        &claude_input(&f.ws(), "git status; cat ~/.ssh/id"),
    ));
    assert!(v["hookSpecificOutput"]["updatedInput"].is_object());
    let v = json_out(&f.hook(
        &["claude-code", "--decision", "none"],
        &claude_input(&f.ws(), "ls"),
    ));
    assert!(v["hookSpecificOutput"].get("permissionDecision").is_none());
    assert!(v["hookSpecificOutput"]["updatedInput"].is_object());
    // [hook] in ~/.config/skarn/config.toml; flags win.
    let cfg = f.home().join(".config/skarn");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[hook]\ndecision = \"ask\"\nunsandboxed = [\"make*\"]\n",
    )
    .unwrap();
    let v = json_out(&f.hook(&["claude-code"], &claude_input(&f.ws(), "ls")));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    let v = json_out(&f.hook(&["claude-code"], &claude_input(&f.ws(), "make test")));
    assert!(v["hookSpecificOutput"].get("updatedInput").is_none());
    let v = json_out(&f.hook(
        &["claude-code", "--decision", "allow"],
        &claude_input(&f.ws(), "ls"),
    ));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    // A policy that may run commands unconfined never gets `allow`; an
    // untrusted workspace file cannot say so (skarn run ignores it too).
    std::fs::write(f.ws().join("skarn.toml"), "[run]\nfail_closed = false\n").unwrap();
    let v = json_out(&f.hook(
        &["claude-code", "--decision", "allow"],
        &claude_input(&f.ws(), "ls"),
    ));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    crate::common::trust(&f.ws().join("skarn.toml"), &f.home());
    let v = json_out(&f.hook(
        &["claude-code", "--decision", "allow"],
        &claude_input(&f.ws(), "ls"),
    ));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("fail_closed")
    );
    std::fs::remove_file(f.ws().join("skarn.toml")).unwrap();
    std::fs::write(cfg.join("config.toml"), "[hook]\ndecision = 1\n").unwrap();
    let o = f.hook(&["claude-code"], &claude_input(&f.ws(), "ls"));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

/// A leading environment assignment makes bash the program, whatever the
/// assignment's name: `git=1 bash -c ...` is confined despite `git*`.
#[test]
fn an_assignment_first_never_matches_a_prefix_pattern() {
    let f = Fixture::new();
    let marker = f.dir.path().join("pwn");
    let cmd = format!("git=1 bash -c 'id > {}'", marker.display());
    for pattern in ["git*", "git"] {
        let v = json_out(&f.hook(
            &["claude-code", "--unsandboxed", pattern],
            &claude_input(&f.ws(), &cmd),
        ));
        let out = &v["hookSpecificOutput"];
        assert_ne!(out["permissionDecision"], "ask", "{pattern}: {v}");
        let new = out["updatedInput"]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{pattern}: left unconfined: {v}"));
        let _ = f.sh(new);
        assert!(
            !marker.exists(),
            "{pattern}: bash wrote outside the sandbox"
        );
    }
    // A plain `git` command still matches, and the command unconfined
    // does write the file (the check above is real).
    let v = json_out(&f.hook(
        &["claude-code", "--unsandboxed", "git*"],
        &claude_input(&f.ws(), "git status"),
    ));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask", "{v}");
    f.sh(&cmd);
    assert!(marker.exists());
}

#[test]
fn other_agents() {
    let f = Fixture::new();
    // Gemini CLI: the command is rewritten through tool_input.
    let g = json!({"hook_event_name": "BeforeTool", "cwd": f.ws(), "tool_name": "run_shell_command",
                   "tool_input": {"command": "echo ok", "description": "x"}});
    let v = json_out(&f.hook(&["gemini-cli"], &g.to_string()));
    let new = v["hookSpecificOutput"]["tool_input"]["command"]
        .as_str()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&f.sh(new).stdout), "ok\n");
    let g = json!({"hook_event_name": "BeforeTool", "cwd": "/", "tool_name": "read_file", "tool_input": {}});
    assert_eq!(
        json_out(&f.hook(&["gemini-cli"], &g.to_string())),
        json!({})
    );
    // Codex: deny only; the reason carries the confined command.
    let c = json!({"hook_event_name": "PreToolUse", "cwd": f.ws(), "tool_name": "Bash",
                   "tool_input": {"command": "echo ok"}});
    let o = f.hook(&["codex"], &c.to_string());
    assert_eq!(o.status.code(), Some(2));
    let why = String::from_utf8_lossy(&o.stderr);
    let new = why.split("instead: ").nth(1).unwrap().trim();
    assert_eq!(String::from_utf8_lossy(&f.sh(new).stdout), "ok\n");
    let c = json!({"cwd": f.ws(), "tool_name": "Bash", "tool_input": {"command": new}});
    let o = f.hook(&["codex"], &c.to_string());
    assert_eq!((o.status.code(), o.stdout.len()), (Some(0), 0), "{o:?}");
    // Cursor: deny with the confined command for the agent.
    let k = json!({"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "/x",
                   "workspace_roots": [f.ws()]});
    let v = json_out(&f.hook(&["cursor"], &k.to_string()));
    assert_eq!(v["permission"], "deny");
    assert!(v["agent_message"].as_str().unwrap().contains("--workspace"));
}

#[test]
fn vscode_and_windsurf() {
    let f = Fixture::new();
    // VS Code: Claude Code's output, on run_in_terminal; other tools pass.
    let v = json!({"hookEventName": "PreToolUse", "cwd": f.ws(), "tool_name": "run_in_terminal",
                   "tool_input": {"command": "echo ok", "explanation": "e", "isBackground": false}});
    let out = json_out(&f.hook(&["vscode"], &v.to_string()));
    let upd = &out["hookSpecificOutput"]["updatedInput"];
    assert_eq!(
        (upd["explanation"].as_str(), upd["isBackground"].as_bool()),
        (Some("e"), Some(false))
    );
    assert_eq!(
        String::from_utf8_lossy(&f.sh(upd["command"].as_str().unwrap()).stdout),
        "ok\n"
    );
    // editFiles is a file tool (issue 24): naming no file it is
    // malformed, and blocked (exit 2).
    let v = json!({"cwd": "/", "tool_name": "editFiles", "tool_input": {"files": []}});
    let o = f.hook(&["vscode"], &v.to_string());
    assert_eq!((o.status.code(), o.stdout.len()), (Some(2), 0));
    let v = json!({"cwd": "/", "tool_name": "read_file", "tool_input": {"filePath": "/a"}});
    let o = f.hook(&["vscode"], &v.to_string());
    assert_eq!((o.status.code(), o.stdout.len()), (Some(0), 0));
    // Windsurf: block with the confined command.
    let w = json!({"agent_action_name": "pre_run_command", "trajectory_id": "t", "execution_id": "e",
                   "timestamp": "2026-12-01T00:00:00Z",
                   "tool_info": {"command_line": "echo ok", "cwd": f.ws()}});
    let o = f.hook(&["windsurf"], &w.to_string());
    assert_eq!(o.status.code(), Some(2));
    let why = String::from_utf8_lossy(&o.stderr);
    let new = why.split("instead: ").nth(1).unwrap().trim();
    assert_eq!(String::from_utf8_lossy(&f.sh(new).stdout), "ok\n");
    let o = f.hook(&["windsurf"], r#"{"agent_action_name": "pre_run_command"}"#);
    assert_eq!(o.status.code(), Some(2));
}

/// VS Code's tools that run code other than through `run_in_terminal`
/// (attack atk24d F8): each gets a deny naming the confined way, exit 0,
/// as VS Code reads it; the terminal tools that run nothing still pass.
#[test]
fn vscode_code_running_tools_are_denied() {
    let f = Fixture::new();
    let ws = f.ws();
    let pwn = f.dir.path().join("pwn");
    let touch = format!("touch {}", pwn.display());
    let calls = [
        ("send_to_terminal", json!({"id": "1", "command": touch})),
        (
            "create_and_run_task",
            json!({"workspaceFolder": ws, "task": {"label": "x", "type": "shell", "command": touch}}),
        ),
        ("run_task", json!({"id": "shell: x", "workspaceFolder": ws})),
        (
            "run_vscode_command",
            json!({"commandId": "workbench.action.terminal.sendSequence", "name": "x",
                   "args": [{"text": touch}]}),
        ),
        (
            "run_notebook_cell",
            json!({"filePath": ws.join("a.ipynb"), "cellId": "c1"}),
        ),
        ("runTests", json!({"files": [ws.join("t.py")]})),
        ("copilot_runTests1", json!({"files": [ws.join("t.py")]})),
        ("install_extension", json!({"id": "x.y", "name": "y"})),
        // atk24e F5.
        ("install_python_packages", json!({"packageList": ["x"]})),
        ("configure_python_environment", json!({"resourcePath": ws})),
        ("notebook_install_packages", json!({"packageList": ["x"]})),
        (
            "configure_notebook",
            json!({"filePath": ws.join("a.ipynb")}),
        ),
        (
            "run_vs_code_task",
            json!({"id": "shell: x", "workspaceFolder": ws}),
        ),
    ];
    for (tool, input) in calls {
        let v = json!({"hookEventName": "PreToolUse", "cwd": ws, "tool_name": tool,
                       "tool_input": input});
        let out = json_out(&f.hook(&["vscode"], &v.to_string()));
        let o = &out["hookSpecificOutput"];
        assert_eq!(o["permissionDecision"], "deny", "{tool}: {out}");
        let why = o["permissionDecisionReason"].as_str().unwrap();
        assert!(
            why.contains(tool) && why.contains("run_in_terminal"),
            "{why}"
        );
        if tool == "create_and_run_task" {
            assert!(why.contains(".vscode/tasks.json is protected"), "{why}");
        }
    }
    assert!(!pwn.exists() && !ws.join(".vscode").exists());
    for tool in ["get_terminal_output", "kill_terminal", "read_file"] {
        let v = json!({"hookEventName": "PreToolUse", "cwd": ws, "tool_name": tool,
                       "tool_input": {"id": "1"}});
        let o = f.hook(&["vscode"], &v.to_string());
        assert_eq!(
            (o.status.code(), o.stdout.len()),
            (Some(0), 0),
            "{tool}: {o:?}"
        );
    }
}

/// Attack finding atk24e F10: a file tool's path given as a URI
/// (`file:///...`, `vscode-remote://...`) is refused, whatever it names.
#[test]
fn a_file_tool_path_given_as_a_uri_is_refused() {
    let f = Fixture::new();
    let ws = f.ws();
    for uri in ["file:///root/.bashrc", "vscode-remote://ssh-remote+h/etc/x"] {
        let v = json!({"hookEventName": "PreToolUse", "cwd": ws, "tool_name": "create_file",
                       "tool_input": {"filePath": uri, "content": "x"}});
        let out = json_out(&f.hook(&["vscode"], &v.to_string()));
        let o = &out["hookSpecificOutput"];
        assert_eq!(o["permissionDecision"], "deny", "{uri}: {out}");
    }
}

/// atk24g F4: Claude Code's `PowerShell` tool (Windows) is in the
/// installed matcher and refused, so its commands never run unconfined.
#[test]
fn claude_codes_powershell_tool_is_refused() {
    let f = Fixture::new();
    let input = json!({
        "session_id": "s", "cwd": f.ws(), "hook_event_name": "PreToolUse",
        "tool_name": "PowerShell", "tool_use_id": "toolu_1",
        "tool_input": {"command": "Remove-Item -Recurse C:\\\\Users", "description": "d"}
    })
    .to_string();
    let v = json_out(&f.hook(&["claude-code"], &input));
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{v}");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("Bash")),
        "{v}"
    );
}

/// atk24h F12: the hook has its own time limit, below the agents' (past
/// theirs they let the call go ahead): stuck on input that never ends, it
/// blocks the call (exit 2) and says why.
#[test]
fn a_hook_that_cannot_answer_in_time_blocks_the_call() {
    let f = Fixture::new();
    let mut c = Command::new(SKARN)
        .args(["hook", "claude-code", "--timeout", "300ms"])
        .current_dir(f.ws())
        .env("HOME", f.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = c.stdin.take();
    let o = c.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("timeout"),
        "{o:?}"
    );
    // The same limit from [hook] timeout.
    std::fs::create_dir_all(f.home().join(".config/skarn")).unwrap();
    std::fs::write(
        f.home().join(".config/skarn/config.toml"),
        "[hook]\ntimeout = \"250ms\"\n",
    )
    .unwrap();
    let mut c = Command::new(SKARN)
        .args(["hook", "claude-code"])
        .current_dir(f.ws())
        .env("HOME", f.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = c.stdin.take();
    let o = c.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}
