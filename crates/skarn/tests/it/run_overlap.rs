//! Two runs in one workspace at the same time (a background command of an
//! agent and its next one): the second starts and works, and neither
//! takes the other's plants for the user's files (attack atk24c F4, F5).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use skarn_test_support::TempDir;

/// Wait until `p` is a socket (a live run's placeholder), at most 20 s.
fn wait_for_placeholder(p: &Path) {
    use std::os::unix::fs::FileTypeExt;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no placeholder at {} after 20 s", p.display());
}

#[test]
fn a_second_run_starts_while_another_holds_its_placeholders() {
    let t = TempDir::new("overlap-start");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let mut a = run_command(&ws, &home, &[], &["sleep", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_placeholder(&ws.join("skarn.toml"));
    let b = run_in(&ws, &home, &[], &["echo", "second-run-ok"]);
    let _ = a.kill();
    let _ = a.wait();
    assert_eq!(code(&b), 0, "{}", err(&b));
    assert_eq!(out(&b).trim(), "second-run-ok");
}
