//! `skarn doctor` reports the Code Mode isolation `auto` picks and each
//! configured MCP server by name, with its health, cause and tool count.

use std::process::Command;

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

#[test]
fn doctor_lists_servers_with_health_and_code_mode_isolation() {
    let example = sibling("skarn-example-server");
    let tmp = TempDir::new("doctor-srv");
    let dir = tmp.path();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.example]\ncommand = {:?}\n\n[servers.broken]\ncommand = \"/nonexistent/skarn-test-server\"\n",
            example.display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--json", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let servers = v["servers"].as_array().expect("servers listed");
    let by = |n: &str| servers.iter().find(|s| s["name"] == n).cloned().unwrap();
    assert_eq!(by("example")["status"], "ready");
    assert!(by("example")["tools"].as_u64().unwrap() > 0);
    assert_eq!(by("broken")["status"], "failed");
    assert!(
        by("broken")["cause"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/skarn-test-server"),
        "{servers:?}"
    );
    assert!(v["code_mode"]["auto_picks"].is_string());

    // A configuration file the user named but that does not exist: exit 2.
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--config"])
        .arg(dir.join("missing.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 23 item 9: a sandboxed server that dies at start (a Python
/// traceback) is shown with its own error in `skarn doctor`, not with the
/// sandbox's generic failure line.
#[cfg(target_os = "linux")]
#[test]
fn a_server_dying_at_start_shows_its_own_error() {
    if !std::path::Path::new("/usr/bin/python3").exists() {
        skarn_test_support::skip!("python3 is not installed");
    }
    let tmp = TempDir::new("doctor-tb");
    let dir = tmp.path();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[servers.py]\ncommand = \"/usr/bin/python3\"\n\
         args = [\"-c\", \"import json\\ndef connect():\\n    raise RuntimeError('DB_URL is not set')\\nconnect()\"]\n",
    )
    .unwrap();
    let out = Command::new(SKARN)
        .args(["doctor", "--json", "--config"])
        .arg(&cfg)
        .env("HOME", &home)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let s = v["servers"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "py"))
        .cloned()
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(s["status"], "failed", "{s}");
    let cause = s["cause"].as_str().unwrap();
    for w in ["Traceback", "RuntimeError: DB_URL is not set"] {
        assert!(cause.contains(w), "{w}: {cause}");
    }
}
