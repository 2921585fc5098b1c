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

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn a_second_run_starts_while_another_holds_its_placeholders() {
    let t = TempDir::new("overlap-start");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let mut a = run_command(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &["sleep", "5"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for_placeholder(&ws.join("skarn.toml"));
    let b = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &["echo", "second-run-ok"],
    );
    let _ = a.kill();
    let _ = a.wait();
    assert_eq!(code(&b), 0, "{}", err(&b));
    assert_eq!(out(&b).trim(), "second-run-ok");
}

/// Whether host git, run in `dir`, ran a planted fsmonitor (it writes
/// `marker`).
fn host_git_ran(dir: &Path, marker: &Path) -> bool {
    let _ = git(dir, &["status", "--short"]);
    marker.exists()
}

#[test]
fn a_second_run_never_puts_back_the_first_runs_planted_repository() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("overlap-plant");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let (ma, mb) = (t.path().join("marker-a"), t.path().join("marker-b"));
    let plant = |m: &Path| {
        format!(
            "git init -q pkg && git -C pkg config core.fsmonitor 'echo x > {}; false'",
            m.display()
        )
    };
    // A plants, then lives on while B starts.
    let a_script = format!("{}; sleep 3", plant(&ma));
    let a = run_command(&ws, &home, &[], &["sh", "-c", &a_script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ws.join("pkg/.git/config").exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // B sees A's plant as there before it, outlives A (which sets it
    // aside), then makes its own in the free name.
    let b_script = format!("sleep 5; [ -e pkg/.git ] || {{ {}; }}", plant(&mb));
    let b = run_in(&ws, &home, &[], &["sh", "-c", &b_script]);
    let a = a.wait_with_output().unwrap();
    assert_eq!(code(&a), 0, "{}", err(&a));
    let _ = b;
    let cfg = std::fs::read_to_string(ws.join("pkg/.git/config")).unwrap_or_default();
    assert!(
        !cfg.contains("fsmonitor"),
        "a planted config is in place: {cfg}"
    );
    if ws.join("pkg").is_dir() {
        assert!(
            !host_git_ran(&ws.join("pkg"), &ma),
            "host git ran A's plant"
        );
        assert!(
            !host_git_ran(&ws.join("pkg"), &mb),
            "host git ran B's plant"
        );
    }
}
