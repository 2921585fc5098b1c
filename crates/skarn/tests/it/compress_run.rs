//! `skarn run --compress`: the sandboxed command's interleaved output comes
//! back compressed, every diagnostic kept, the exit status passed through,
//! and the full output recoverable with `skarn recall`.

use std::process::Command;

use skarn_test_support::TempDir;

#[test]
fn run_compress_keeps_diagnostics_and_exit_status() {
    let (ws_dir, state_dir) = (TempDir::new("crun-ws"), TempDir::new("crun-state"));
    let (ws, state) = (ws_dir.path(), state_dir.path());
    let script = "for i in $(seq 1 300); do echo \"test suite::case_$i ... ok\"; done; \
                  echo 'error[E0425]: cannot find value `x` in this scope' >&2; \
                  echo 'test result: FAILED. 300 passed; 1 failed'; exit 3";
    let out = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--compress", "--workspace"])
        .arg(ws)
        .args(["--", "sh", "-c", script])
        // The recall store must lie outside the directory skarn runs in.
        .current_dir(ws)
        .env("SKARN_RECALL_DIR", state)
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
        .env("SKARN_RECALL_DIR", state)
        .output()
        .unwrap();
    let full = String::from_utf8_lossy(&full.stdout);
    assert!(full.contains("test suite::case_150 ... ok"), "{full}");
    // Nothing was saved inside the workspace.
    assert_eq!(std::fs::read_dir(ws).unwrap().count(), 0);
}

#[test]
fn run_compress_reports_missing_command() {
    let ws_dir = TempDir::new("crun-nf");
    let ws = ws_dir.path();
    let out = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--compress", "--workspace"])
        .arg(ws)
        .args(["--", "definitely-not-a-command-skarn"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
}
