//! Issue 24, attack pass atk24i (F1, F4-F6, F8, F12): each finding made as the attack made it
//! and judged from outside (what `skarn run` did, the hook's JSON as the
//! agent reads it, the text a model gets from the gateway).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

const SIMULATE: &str = "SKARN_SANDBOX_SIMULATE_MISSING";

/// `skarn hook claude-code` on a Bash call, with `env` set.
fn bash_hook(ws: &Path, home: &Path, command: &str, env: &[(&str, &str)]) -> Value {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": command}});
    let mut c = Command::new(exe());
    c.args(["hook", "claude-code"])
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove(SIMULATE)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut c = c.spawn().unwrap();
    let _ = c.stdin.take().unwrap().write_all(i.to_string().as_bytes());
    let o: Output = c.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

/// F4: with seccomp missing (here pretended by the testing aid, which only
/// a test build honours) the run went ahead under the default
/// `fail_closed`, silently, and the hook still answered `allow ... runs
/// confined`. A missing seccomp now refuses the run, and the hook asks.
#[test]
fn a_missing_seccomp_refuses_the_run_and_the_hook_does_not_allow() {
    let t = TempDir::new("atk24i_f4");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let ran = ws.join("ran");
    let touch = format!("touch {}", ran.display());
    let o = run_command(&ws, &home, &[], &["sh", "-c", &touch])
        .env(SIMULATE, "seccomp")
        .output()
        .unwrap();
    assert!(!ran.exists(), "ran without seccomp: {}", err(&o));
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("seccomp"), "{}", err(&o));
    let v = bash_hook(&ws, &home, "ls", &[(SIMULATE, "seccomp")]);
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "ask", "{v}");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("seccomp"),
        "{v}"
    );
    // The same host with the layer present: the run goes ahead, the hook allows.
    let o = run_command(&ws, &home, &[], &["sh", "-c", &touch])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ran.exists());
    let v = bash_hook(&ws, &home, "ls", &[]);
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "allow",
        "{v}"
    );
}

/// Words that tell the reader how to widen the sandbox.
const ADVICE: &[&str] = &[
    "skarn trust",
    "allow:",
    "net =",
    "--net",
    "--no-sandbox",
    "--fail-open",
    "allow_private",
    "--allow-home-workspace",
];

fn assert_no_advice(text: &str) {
    for a in ADVICE {
        assert!(!text.contains(a), "advice {a:?} reaches the model: {text}");
    }
}

/// A command whose connection the empty network namespace refuses
/// (counted as a denial), then a failure.
const CONNECT: &str = "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), 2)\" \
                       2>/dev/null; exit 3";

/// F1: `skarn run` under the hook (Claude Code sets CLAUDECODE for the
/// commands it runs) printed advice to widen into the output the model
/// reads: the failure line's `net = "allow:HOST"`, an untrusted
/// `skarn.toml`'s "run `skarn trust`", `--no-sandbox` on a refusal. The
/// model gets the facts; a person at a terminal still gets the advice.
#[test]
fn the_hooks_commands_print_the_fact_not_the_advice() {
    if !host_has("python3", "-V") {
        skarn_test_support::skip!("python3 is missing");
    }
    let t = TempDir::new("atk24i_f1");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("skarn.toml"), "[run]\nnet = \"all\"\n").unwrap();
    let run = |model: bool, env: &[(&str, &str)]| {
        let mut c = Command::new(exe());
        c.args(["run", "--workspace"])
            .arg(&ws)
            .args(["--", "sh", "-c", CONNECT])
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("SKARN_CALLER")
            .env_remove("GEMINI_CLI")
            .env_remove(SIMULATE)
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        if model {
            c.env("CLAUDECODE", "1");
        } else {
            c.env_remove("CLAUDECODE");
        }
        c.output().unwrap()
    };
    let o = run(false, &[]);
    let e = err(&o);
    assert!(
        e.contains("skarn trust") && e.contains("--net allow:HOST"),
        "{e}"
    );
    let o = run(true, &[]);
    let e = err(&o);
    assert_eq!(code(&o), 3, "{e}");
    assert!(e.contains("not trusted") && e.contains("network: "), "{e}");
    assert_no_advice(&e);
    let o = run(true, &[(SIMULATE, "seccomp")]);
    assert!(err(&o).contains("refusing to run"), "{}", err(&o));
    assert_no_advice(&err(&o));
}

/// F1 through the gateway's `run` tool (its result is what the model
/// reads) and F8 through `search` (a server's failure cause): the fact,
/// never the line that says how to widen; the user's stderr keeps it.
#[test]
fn the_gateways_run_and_search_results_carry_no_advice() {
    if !host_has("python3", "-V") {
        skarn_test_support::skip!("python3 is missing");
    }
    let t = TempDir::new("atk24i_f1gw");
    let (dir, home) = (t.dir("proj"), t.dir("home"));
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[run]\nnet = \"all\"\n[gateway]\nshell = true\n[servers.docs]\n\
         url = \"http://127.0.0.1:9/mcp\"\n",
    )
    .unwrap();
    let mut g = crate::agent_gateway::Gw::start(&cfg, &home);
    let r = g.call(2, "run", json!({ "command": CONNECT }));
    let text = r["result"].to_string();
    assert!(text.contains("exit 3") && text.contains("network: "), "{r}");
    assert_no_advice(&text);
    let mut found = String::new();
    for id in 3..40 {
        let r = g.call(id, "search", json!({ "query": "docs" }));
        found = r["result"].to_string();
        if found.contains("loopback") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let stderr = g.stop();
    assert!(found.contains("127.0.0.1 is a loopback address"), "{found}");
    assert_no_advice(&found);
    assert!(stderr.contains("allow_private"), "{stderr}");
}

/// F5: a Claude Code hook that cannot start or times out let the call go
/// ahead; `init` now writes `onFailure: "block"` on skarn's hook entry.
#[test]
fn init_makes_claude_codes_hook_block_on_failure() {
    let t = TempDir::new("atk24i_f5");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    let o = Command::new(exe())
        .args(["init", "--client", "claude-code"])
        .current_dir(&proj)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: Value =
        serde_json::from_slice(&std::fs::read(proj.join(".claude/settings.json")).unwrap())
            .unwrap();
    let entries = v["hooks"]["PreToolUse"].as_array().unwrap();
    let ours: Vec<&Value> = entries
        .iter()
        .flat_map(|e| e["hooks"].as_array().unwrap())
        .filter(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.contains("skarn-hook") && c.contains("'claude-code'"))
        })
        .collect();
    assert!(!ours.is_empty(), "{v}");
    for h in ours {
        assert_eq!(h["onFailure"], "block", "{h}");
    }
}

/// F6: `skarn trust` named the widened keys of `[run]` and `[gateway]`
/// but not their values: `write = ["build"]` and `write = ["/etc"]` looked
/// the same on the screen the user approves. Each is shown with its value,
/// escaped as the server lines are.
#[test]
fn trust_shows_what_each_widened_key_is_set_to() {
    let t = TempDir::new("atk24i_f6");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    let victim = t.dir("victim");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let cfg = proj.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[run]\nwrite = [\"{}\", \"~/.ssh\"]\nread = [\"~/.aws\"]\nnet = \"all\"\n\
             [gateway]\nworkspace = \"{}/\\u001b[8mx\"\n[gateway.limits]\nmemory = \"2G\"\n",
            victim.display(),
            victim.display()
        ),
    )
    .unwrap();
    let o = Command::new(exe())
        .arg("trust")
        .arg(&cfg)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let e = err(&o);
    assert_eq!(code(&o), 0, "{e}");
    for want in [
        format!("write = [\"{}\", \"~/.ssh\"]", victim.display()),
        "read = [\"~/.aws\"]".to_string(),
        "net = \"all\"".to_string(),
        "memory = \"2G\"".to_string(),
        format!("workspace = \"{}/", victim.display()),
    ] {
        assert!(e.contains(&want), "{want:?} not shown: {e}");
    }
    assert!(!e.contains('\u{1b}'), "{e}");
}

/// F12: Codex runs a hook of `~/.codex/config.toml` only once the user has
/// approved it in Codex (`[hooks.state."<file>:pre_tool_use:G:H"]
/// trusted_hash`); the hook `init` writes has none, so Codex silently ran
/// every command without it. `init` says how to approve it, and `doctor`
/// says when no approval is on record.
#[test]
fn codexs_hook_approval_is_asked_for_and_checked() {
    let t = TempDir::new("atk24i_f12");
    let (dir, home) = (t.dir("dir"), t.dir("home"));
    let o = Command::new(exe())
        .args(["init", "--client", "codex", "--hook-only"])
        .current_dir(&dir)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("/hooks") && err(&o).contains("approve"),
        "{}",
        err(&o)
    );
    let doctor = || {
        let o = Command::new(exe())
            .arg("doctor")
            .current_dir(&dir)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", state_home())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        out(&o)
    };
    let d = doctor();
    assert!(
        d.contains("codex hook: warning") && d.contains("no approval"),
        "{d}"
    );
    // The user approves it in Codex, which records the hash.
    let cfg = home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "\n[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
        cfg.display()
    ));
    std::fs::write(&cfg, text).unwrap();
    let d = doctor();
    assert!(!d.contains("codex hook: warning"), "{d}");
}

/// F5, an entry written before: `doctor` names a skarn hook entry of the
/// project's Claude Code settings that lacks `onFailure: "block"`.
#[test]
fn doctor_names_a_claude_hook_that_fails_open() {
    let t = TempDir::new("atk24i_f5doc");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    let init = Command::new(exe())
        .args(["init", "--client", "claude-code", "--hook-only"])
        .current_dir(&proj)
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&init), 0, "{}", err(&init));
    let doctor = || {
        let o = Command::new(exe())
            .arg("doctor")
            .current_dir(&proj)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", state_home())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        out(&o)
    };
    assert!(!doctor().contains("onFailure"), "{}", doctor());
    // The entry as an older `init` wrote it.
    let f = proj.join(".claude/settings.json");
    let old = std::fs::read_to_string(&f)
        .unwrap()
        .replace(",\"onFailure\":\"block\"", "");
    let old = old.replace("\"onFailure\": \"block\"", "\"x\": 0");
    std::fs::write(&f, old).unwrap();
    let d = doctor();
    assert!(d.contains("no onFailure"), "{d}");
}
