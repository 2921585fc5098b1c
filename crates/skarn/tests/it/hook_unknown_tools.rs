//! Issue 24 item 2: VS Code sends every tool call to the hook (its
//! matchers are ignored). `editFiles` (`tool_input.files[]`, as VS Code's
//! hooks reference shows it) is judged by the file guard, and a tool the
//! hook does not know (CMake, Python environment and notebook tools, an
//! MCP tool) is refused, for every client whose hook skarn answers. Judged
//! as each agent reads the answer: VS Code and Claude Code the
//! `hookSpecificOutput.permissionDecision`, Gemini CLI `decision`, Codex
//! the exit status 2.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

fn hook(client: &str, input: &Value, home: &Path, dir: &Path) -> Output {
    let mut c = Command::new(exe())
        .args(["hook", client])
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
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    c.wait_with_output().unwrap()
}

fn vscode(tool: &str, ti: Value, ws: &Path, home: &Path) -> Output {
    let i = json!({"hookEventName": "PreToolUse", "tool_name": tool, "cwd": ws,
                   "tool_input": ti, "tool_use_id": "t1"});
    hook("vscode", &i, home, ws)
}

/// The decision VS Code / Claude Code reads (`None`: no answer, the call
/// goes on as the agent's own rules say).
fn decision(o: &Output) -> Option<String> {
    assert_eq!(code(o), 0, "{o:?}");
    if o.stdout.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .map(str::to_owned)
}

fn project() -> (TempDir, std::path::PathBuf, std::path::PathBuf) {
    let t = TempDir::new("hook_unknown");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join(".git/refs")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    (t, ws, home)
}

#[test]
fn vscode_edit_files_is_judged_by_the_file_guard() {
    let (_t, ws, home) = project();
    for files in [
        json!([".vscode/settings.json"]),
        json!(["src/ok.ts", ws.join("skarn.toml")]),
        json!([{"filePath": ws.join(".github/hooks/x.json")}]),
        json!([7]),
    ] {
        let o = vscode("editFiles", json!({ "files": files }), &ws, &home);
        assert_eq!(decision(&o).as_deref(), Some("deny"), "{files}: {o:?}");
    }
    let o = vscode("editFiles", json!({"files": ["src/main.ts"]}), &ws, &home);
    assert_eq!(decision(&o), None, "a project file: {o:?}");
}

#[test]
fn vscode_refuses_every_tool_it_does_not_know() {
    let (_t, ws, home) = project();
    for tool in [
        "Build_CMakeTools",
        "RunCtest_CMakeTools",
        "create_virtual_environment",
        "create_new_jupyter_notebook",
        "run_agent_script",
        "memory",
        "mcp_docs_write_file",
        "some_tool_added_next_month",
    ] {
        let o = vscode(tool, json!({"anything": "x"}), &ws, &home);
        assert_eq!(decision(&o).as_deref(), Some("deny"), "{tool}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("allow_tools"));
    }
    for tool in ["read_file", "grep_search", "get_terminal_output"] {
        let o = vscode(tool, json!({"filePath": ws.join("a")}), &ws, &home);
        assert_eq!(decision(&o), None, "{tool}: {o:?}");
    }
    // The user allows a tool they know (a prefix with `*`).
    let cfg = home.join(".config/skarn");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[hook]\nallow_tools = [\"mcp_docs_*\"]\n",
    )
    .unwrap();
    let o = vscode("mcp_docs_search", json!({}), &ws, &home);
    assert_eq!(decision(&o), None, "{o:?}");
    let o = vscode("Build_CMakeTools", json!({}), &ws, &home);
    assert_eq!(decision(&o).as_deref(), Some("deny"), "{o:?}");
}

#[test]
fn other_clients_refuse_an_unknown_tool_that_reaches_the_hook() {
    let (_t, ws, home) = project();
    // Claude Code: a tool the matcher (`*`) sent that skarn does not
    // handle (MCP tools pass: their servers are wrapped; b24v).
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "FsWriteFile",
                   "cwd": ws, "tool_input": {"path": "/x"}});
    let o = hook("claude-code", &i, &home, &ws);
    assert_eq!(decision(&o).as_deref(), Some("deny"), "{o:?}");
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "TodoWrite",
                   "cwd": ws, "tool_input": {"todos": []}});
    let o = hook("claude-code", &i, &home, &ws);
    assert_eq!(decision(&o), None, "{o:?}");
    // Gemini CLI: {"decision": "deny"}.
    let i = json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_fs_replace_all",
                   "cwd": ws, "tool_input": {}});
    let o = hook("gemini-cli", &i, &home, &ws);
    assert_eq!(code(&o), 0, "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    // Codex honours only a refusal: exit 2.
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "unified_exec",
                   "cwd": ws, "tool_input": {"cmd": "touch /tmp/x"}});
    let o = hook("codex", &i, &home, &ws);
    assert_eq!(code(&o), 2, "{o:?}");
}
