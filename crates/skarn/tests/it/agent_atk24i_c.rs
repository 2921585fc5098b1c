//! Issue 24 after attack pass atk24i (helper h24e): every client's hook
//! output is model-facing (no advice to widen, whichever client runs the
//! confined command), and the skarn gateway's own MCP tools pass the hook
//! without configuration. Judged from outside: the hook's exit code and
//! JSON as the agent reads them, and what the command the agent then runs
//! prints.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn hook AGENT` on `input`, started in `ws` with `home`.
fn hook(agent: &str, input: &Value, ws: &Path, home: &Path) -> Output {
    let mut c = Command::new(exe());
    c.args(["hook", agent])
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDECODE")
        .env_remove("GEMINI_CLI")
        .env_remove("SKARN_CALLER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut c = c.spawn().unwrap();
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    c.wait_with_output().unwrap()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

/// The confined command a "run exactly this instead" refusal names.
fn named(text: &str) -> String {
    text.split_once("Run exactly this instead: ")
        .unwrap_or_else(|| panic!("no command named: {text}"))
        .1
        .trim_end()
        .to_string()
}

/// What `client`'s agent runs for the model's shell command `cmd`: the
/// rewritten command, or the one the refusal tells the model to run.
fn command_run(client: &str, cmd: &str, ws: &Path, home: &Path) -> String {
    let input = match client {
        "claude-code" => json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                "cwd": ws, "tool_input": {"command": cmd}}),
        "vscode" => json!({"hookEventName": "PreToolUse", "tool_name": "run_in_terminal",
                           "cwd": ws, "tool_input": {"command": cmd, "explanation": "x"}}),
        "gemini-cli" => json!({"hook_event_name": "BeforeTool",
                               "tool_name": "run_shell_command", "cwd": ws,
                               "tool_input": {"command": cmd}}),
        "codex" => json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": ws,
                          "tool_input": {"command": cmd}}),
        "windsurf" => json!({"agent_action_name": "pre_run_command",
                             "tool_info": {"command_line": cmd, "cwd": ws}}),
        "cursor" => json!({"hook_event_name": "beforeShellExecution", "command": cmd,
                           "cwd": ws, "workspace_roots": [ws]}),
        other => panic!("{other}"),
    };
    let o = hook(client, &input, ws, home);
    match client {
        "claude-code" | "vscode" => {
            assert_eq!(code(&o), 0, "{o:?}");
            json_of(&o)["hookSpecificOutput"]["updatedInput"]["command"]
                .as_str()
                .unwrap_or_else(|| panic!("{o:?}"))
                .to_string()
        }
        "gemini-cli" => {
            assert_eq!(code(&o), 0, "{o:?}");
            json_of(&o)["hookSpecificOutput"]["tool_input"]["command"]
                .as_str()
                .unwrap_or_else(|| panic!("{o:?}"))
                .to_string()
        }
        "codex" | "windsurf" => {
            assert_eq!(code(&o), 2, "{o:?}");
            named(&err(&o))
        }
        _ => {
            assert_eq!(code(&o), 0, "{o:?}");
            let v = json_of(&o);
            assert_eq!(v["permission"], "deny", "{v}");
            named(v["agent_message"].as_str().unwrap())
        }
    }
}

/// Item 4: VS Code, Codex, Cursor and Windsurf set no variable that tells
/// `skarn run` a model reads its output, so the confined command printed
/// the advice to widen (here an untrusted `skarn.toml`'s "run `skarn
/// trust`") into what the model reads. The hook now marks every command
/// it confines (`--caller hook`); checked per client on the command that
/// client runs, in an environment with no agent's variable.
#[test]
fn every_clients_confined_command_prints_the_fact_not_the_advice() {
    let t = TempDir::new("h24e_caller");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("skarn.toml"), "[run]\nnet = \"all\"\n").unwrap();
    for client in [
        "claude-code",
        "vscode",
        "gemini-cli",
        "codex",
        "windsurf",
        "cursor",
    ] {
        let cmd = command_run(client, "echo ran-$((40+2))", &ws, &home);
        let o = Command::new("sh")
            .args(["-c", &cmd])
            .current_dir(&ws)
            .env("HOME", &home)
            .env_remove("CLAUDECODE")
            .env_remove("GEMINI_CLI")
            .env_remove("SKARN_CALLER")
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (out, e) = (String::from_utf8_lossy(&o.stdout), err(&o));
        assert!(out.contains("ran-42"), "{client}: {cmd}: {o:?}");
        assert!(e.contains("not trusted"), "{client}: the fact is said: {e}");
        assert!(
            !e.contains("skarn trust"),
            "{client}: the advice reaches the model: {e}"
        );
        if client == "cursor" {
            // The model runs the named command: the hook lets it pass.
            let i = json!({"hook_event_name": "beforeShellExecution", "command": cmd,
                           "cwd": ws, "workspace_roots": [ws]});
            let v = json_of(&hook("cursor", &i, &ws, &home));
            assert_ne!(v["permission"], "deny", "{v}");
        }
    }
    // A person at a terminal still gets the advice.
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .env_remove("CLAUDECODE")
        .env_remove("GEMINI_CLI")
        .env_remove("SKARN_CALLER")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(err(&o).contains("skarn trust"), "{}", err(&o));
}

/// Item 4, the hook's own refusals: a tool it does not know is refused
/// with the fact; how the user allows it (`[hook] allow_tools`, naming a
/// tool the server chose) goes where the user reads it (`systemMessage`),
/// not into the reason the model reads.
#[test]
fn the_hooks_own_refusals_carry_no_advice_for_the_model() {
    let t = TempDir::new("h24e_refusal");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let i = json!({"hookEventName": "PreToolUse", "tool_name": "mcp_evil_shell",
                   "cwd": ws, "tool_input": {}});
    let v = json_of(&hook("vscode", &i, &ws, &home));
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{v}");
    let why = out["permissionDecisionReason"].as_str().unwrap();
    assert!(
        why.contains("refused") && !why.contains("allow_tools"),
        "{v}"
    );
    assert!(
        v["systemMessage"].as_str().unwrap().contains("allow_tools"),
        "{v}"
    );
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "unified_exec",
                   "cwd": ws, "tool_input": {"cmd": "id"}});
    let o = hook("codex", &i, &ws, &home);
    assert_eq!(code(&o), 2, "{o:?}");
    assert!(
        err(&o).contains("refused") && !err(&o).contains("allow_tools"),
        "{o:?}"
    );
    let i = json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_fs_replace_all",
                   "cwd": ws, "tool_input": {}});
    let v = json_of(&hook("gemini-cli", &i, &ws, &home));
    assert_eq!(v["decision"], "deny", "{v}");
    assert!(
        !v["reason"].as_str().unwrap().contains("allow_tools"),
        "{v}"
    );
}

/// Item 3: in VS Code every MCP tool reaches the hook, and the skarn
/// gateway's own tools (`search`, `read_tool_docs`, `execute`, `run`,
/// which the gateway confines itself) were refused until the user listed
/// them in `[hook] allow_tools`. They pass now; any other server's tool,
/// or a look-alike name, is still refused.
#[test]
fn the_gateways_own_tools_pass_the_hook_without_configuration() {
    let t = TempDir::new("h24e_gwtools");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let vscode = |tool: &str| {
        let i = json!({"hookEventName": "PreToolUse", "tool_name": tool, "cwd": ws,
                       "tool_input": {"command": "make test", "query": "x"}});
        let o = hook("vscode", &i, &ws, &home);
        assert_eq!(code(&o), 0, "{o:?}");
        if o.stdout.is_empty() {
            None
        } else {
            json_of(&o)["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .map(str::to_owned)
        }
    };
    for tool in [
        "mcp_skarn_search",
        "mcp_skarn_read_tool_docs",
        "mcp_skarn_execute",
        "mcp_skarn_run",
    ] {
        assert_eq!(vscode(tool), None, "{tool} is refused");
    }
    for tool in ["mcp_skarn_write_file", "mcp_skarn2_run", "mcp_shell_run"] {
        assert_eq!(vscode(tool).as_deref(), Some("deny"), "{tool} passes");
    }
    // Claude Code's name for them, should a wider matcher send them.
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "mcp__skarn__execute",
                   "cwd": ws, "tool_input": {"code": "1"}});
    let o = hook("claude-code", &i, &ws, &home);
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
}

/// F11 (atk24i): a gateway server granted the project lives as long as the
/// agent's session, and the live-run check refused every Write there "for
/// now", naming a helper pid and a state directory, with "wait until it has
/// ended" as the way out. No hook-side check can let the write through
/// soundly while the server may swap names (ADR 0242): the refusal now
/// names the server, the grant and what ends it, and the write outside the
/// grant still passes.
#[test]
fn a_writable_gateway_server_is_named_in_the_file_tools_refusal() {
    let t = TempDir::new("h24e_f11");
    let (p, home) = (t.dir("p"), t.dir("home"));
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join("data")).unwrap();
    let cfg = p.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.fs]\ncommand = {:?}\n[servers.fs.sandbox]\nwrite = [{:?}]\n",
            sibling("skarn-example-server").display().to_string(),
            p.join("data").display().to_string()
        ),
    )
    .unwrap();
    trust(&cfg, &home);
    let mut g = crate::agent_gateway::Gw::start(&cfg, &home);
    let _ = g.call(2, "search", json!({"query": "add"}));
    let write = |file: &Path| {
        let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": p,
                       "tool_input": {"file_path": file, "content": "x"}});
        hook("claude-code", &i, &p, &home)
    };
    let o = write(&p.join("data/notes.md"));
    let stop = g.stop();
    assert_eq!(code(&o), 0, "{o:?}");
    let v = json_of(&o);
    let why = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused: {v} (serve: {stop})"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(
        why.contains("MCP server fs")
            && why.contains("[servers.fs.sandbox] write")
            && why.contains("shell command"),
        "{why}"
    );
    // Once the server has stopped, the same write passes.
    let o = write(&p.join("data/notes.md"));
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
}

/// atk24j F4: the note for a workspace the home's start-up files name
/// ("kept read-only ... to keep it writable, pass
/// --trust-home-config-workspace or set [run] trust_home_config_workspace
/// = true") reached the model whole. The model gets the fact.
#[test]
fn the_home_config_workspace_note_carries_no_advice_for_the_model() {
    let t = TempDir::new("h24e_f4j");
    let home = t.dir("home");
    let p = home.join("proj");
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join("tools")).unwrap();
    std::fs::write(p.join("tools/prompt.fish"), "true\n").unwrap();
    let confd = home.join(".config/fish/conf.d");
    std::fs::create_dir_all(&confd).unwrap();
    std::fs::write(
        confd.join("proj.fish"),
        format!("source {}/tools/prompt.fish\n", p.display()),
    )
    .unwrap();
    let run = |flags: &[&str]| {
        Command::new(exe())
            .arg("run")
            .args(flags)
            .arg("--workspace")
            .arg(&p)
            .args(["--", "true"])
            .env("HOME", &home)
            .env_remove("CLAUDECODE")
            .env_remove("GEMINI_CLI")
            .env_remove("SKARN_CALLER")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(
        err(&o).contains("trust_home_config_workspace"),
        "{}",
        err(&o)
    );
    let o = run(&["--caller", "hook"]);
    let e = err(&o);
    assert!(e.contains("is read-only for this run"), "{e}");
    assert!(
        !e.contains("trust_home_config_workspace") && !e.contains("--trust-home"),
        "{e}"
    );
}
