//! `skarn exec` wired to the gateway (`--config`) and to the worker
//! (`--isolation`): real processes, real downstream server.

use std::process::Command;

use serde_json::json;

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn isolation_flag_is_honoured_and_reported() {
    for (mode, expect) in [("worker", "worker"), ("in_process", "in_process")] {
        let out = Command::new(SKARN)
            .env("XDG_STATE_HOME", crate::common::state_home())
            .args([
                "exec",
                "--json",
                "--isolation",
                mode,
                "--code",
                "return 6 * 7",
            ])
            .output()
            .unwrap();
        let v = json(&out);
        assert_eq!(v["value"], 42, "{v}");
        assert_eq!(v["isolation"], expect, "{v}");
    }
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["exec", "--isolation", "sideways", "--code", "return 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn limits_hold_inside_the_worker() {
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args([
            "exec",
            "--json",
            "--isolation",
            "worker",
            "--timeout",
            "1s",
            "--code",
            "for(;;){ try { for(;;){} } catch {} }",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "deadline", "{v}");
    assert_eq!(v["isolation"], "worker");
}

#[test]
fn config_connects_scripts_to_downstream_servers() {
    let example = sibling("skarn-example-server");
    let tmp = TempDir::new("exec-cfg");
    let dir = tmp.path();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.example]\ncommand = {:?}\n\n[servers.broken]\ncommand = \"/nonexistent/skarn-exec-test\"\n",
            example.display().to_string()
        ),
    )
    .unwrap();
    let script = r#"
        const r = await skarn.callTool("example", "add", { a: 2, b: 40 });
        let err = "";
        try { await skarn.callTool("broken", "anything", {}); } catch (e) { err = String(e); }
        return { sum: r.sum, err };
    "#;
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["exec", "--json", "--config"])
        .arg(&cfg)
        .args(["--code", script])
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["value"]["sum"], 42, "{v}");
    let err = v["value"]["err"].as_str().unwrap();
    assert!(
        err.contains("broken") && err.contains("failed to start"),
        "{err}"
    );
    // A named configuration that does not exist: one clear error, exit 2.
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["exec", "--config"])
        .arg(dir.join("missing.toml"))
        .args(["--code", "return 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_stderr_does_not_lose_the_value() {
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["exec", "--code", "skarn.log('noise'); return 5"])
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn deep_recursion_at_the_largest_stack_ends_as_a_limit_not_a_crash() {
    for mode in ["in_process", "worker"] {
        let out = Command::new(SKARN)
            .env("XDG_STATE_HOME", crate::common::state_home())
            .args(["exec", "--json", "--stack", "16M", "--isolation", mode])
            .args([
                "--code",
                "function f(n) { return f(n + 1) + 1 } return f(0)",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4), "{mode}");
        assert_eq!(json(&out)["error"]["kind"], "stack", "{mode}");
    }
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["exec", "--stack", "64M", "--code", "return 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_limits_mapping_and_invalid_arguments() {
    let example = sibling("skarn-example-server");
    let tmp = TempDir::new("exec-lim");
    let dir = tmp.path();
    let cfg = dir.join("skarn.toml");
    // `[gateway.limits]` with no `[gateway]` table before it.
    std::fs::write(
        &cfg,
        format!(
            "[gateway.limits]\ndeadline = \"1500ms\"\nmax_tool_calls = 7\n\n[servers.example]\ncommand = {:?}\n",
            example.display().to_string()
        ),
    )
    .unwrap();
    let run = |extra: &[&str], code: &str| {
        let out = Command::new(SKARN)
            .env("XDG_STATE_HOME", crate::common::state_home())
            .args(["exec", "--json", "--isolation", "in_process", "--config"])
            .arg(&cfg)
            .args(extra)
            .args(["--code", code])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (json(&out), stderr)
    };
    // The configuration's deadline applies; a flag overrides it.
    let (v, stderr) = run(&[], "for (;;) {}");
    assert_eq!(v["error"]["kind"], "deadline", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("1500 ms"),
        "{v}"
    );
    // Ran without the worker: stderr says so.
    assert!(stderr.contains("without the confined worker"), "{stderr}");
    let (v, _) = run(&["--timeout", "2s"], "for (;;) {}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("2 s"),
        "{v}"
    );
    // (The server's start counts against the deadline: a long one here, so
    // that only the call budget can end the script.)
    let (v, _) = run(
        &["--timeout", "60s"],
        "for (let i = 0; i < 8; i++) await skarn.listTools(); return 1",
    );
    assert_eq!(v["error"]["kind"], "tool_calls", "{v}");
    // One image block arrives as an array of MCP content blocks; structured
    // content as itself; invalid params as invalid_arguments.
    let (v, _) = run(
        &["--timeout", "60s"],
        r#"
        const img = await skarn.callTool("example", "image", {});
        const sum = await skarn.callTool("example", "add", { a: 1, b: 2 });
        let code = "";
        try { await skarn.callTool("example", "add_tool", {}); } catch (e) { code = e.code; }
        return { img, sum, code };
        "#,
    );
    assert_eq!(v["value"]["img"][0]["type"], "image", "{v}");
    assert_eq!(v["value"]["img"][0]["mimeType"], "image/png", "{v}");
    assert_eq!(v["value"]["sum"], json!({"sum": 3}), "{v}");
    assert_eq!(v["value"]["code"], "invalid_arguments", "{v}");
}
