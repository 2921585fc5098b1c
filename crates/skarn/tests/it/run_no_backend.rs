//! A build without a sandbox backend for its OS (Linux, macOS and Windows
//! have one; any other target): `skarn run` refuses with one clear error
//! and exit status 2, and the command does not run (checked from outside:
//! the file it would create does not exist); `skarn doctor` says so.

use std::process::Command;

use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");
const NO_BACKEND: &str = "skarn run: no sandbox backend for this OS in this build";

#[test]
fn run_refuses_and_the_command_does_not_run() {
    let ws = TempDir::new("run_no_backend");
    // git is on every CI runner; run, it would create this directory.
    let marker = ws.path().join("ran");
    let o = Command::new(SKARN)
        .current_dir(ws.path())
        .args(["run", "--workspace"])
        .arg(ws.path())
        .args(["--no-config", "--", "git", "init", "-q"])
        .arg(&marker)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(NO_BACKEND), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!marker.exists());
}

#[test]
fn doctor_says_nothing_is_enforced() {
    let o = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--json", "-c", "no-such-skarn.toml"])
        .env_remove("SKARN_CONFIG")
        .output()
        .unwrap();
    // A named configuration that does not exist is an error: use the default.
    assert_eq!(o.status.code(), Some(2));
    let dir = TempDir::new("run_no_backend");
    let o = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .current_dir(dir.path())
        .args(["doctor", "--json"])
        .env_remove("SKARN_CONFIG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], serde_json::Value::Null);
    assert_eq!(v["reason"], NO_BACKEND);
    assert_eq!(v["code_mode"]["auto_picks"], "in_process");
    let o = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .current_dir(dir.path())
        .args(["doctor", "--self-test"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
