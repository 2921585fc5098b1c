//! `skarn run --compress`: the sandboxed command's interleaved output comes
//! back compressed, every diagnostic kept, the exit status passed through,
//! and the full output recoverable with `skarn recall`.
#![cfg(target_os = "linux")] // needs the Linux sandbox or worker
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;
use std::process::Command;

fn temp_dir(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("skarn-crun-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

#[test]
fn run_compress_keeps_diagnostics_and_exit_status() {
    let ws = temp_dir("ws");
    let state = temp_dir("state");
    let script = "for i in $(seq 1 300); do echo \"test suite::case_$i ... ok\"; done; \
                  echo 'error[E0425]: cannot find value `x` in this scope' >&2; \
                  echo 'test result: FAILED. 300 passed; 1 failed'; exit 3";
    let out = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--compress", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", script])
        // The recall store must lie outside the directory skarn runs in.
        .current_dir(&ws)
        .env("SKARN_RECALL_DIR", &state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "stdout: {text}");
    assert!(
        text.contains("error[E0425]: cannot find value `x` in this scope"),
        "{text}"
    );
    assert!(
        text.contains("test result: FAILED. 300 passed; 1 failed"),
        "{text}"
    );
    assert!(text.lines().count() < 50, "not compressed: {text}");
    // The handle on the last line recalls the full raw output.
    let id = text
        .split("skarn recall ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_hexdigit()).next())
        .expect("recall handle")
        .to_owned();
    let full = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["recall", &id])
        .env("SKARN_RECALL_DIR", &state)
        .output()
        .unwrap();
    let full = String::from_utf8_lossy(&full.stdout);
    assert!(full.contains("test suite::case_150 ... ok"), "{full}");
    // Nothing was saved inside the workspace.
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&ws);
    let _ = std::fs::remove_dir_all(&state);
}

#[test]
fn run_compress_reports_missing_command() {
    let ws = temp_dir("nf");
    let out = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--compress", "--workspace"])
        .arg(&ws)
        .args(["--", "definitely-not-a-command-skarn"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let _ = std::fs::remove_dir_all(&ws);
}
