//! `skarn run`: standard input, the reusable self-confinement pieces,
//! and no placeholders left behind by overlapping or killed runs.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn stdin_passes_through() {
    let t = TempDir::new("stdin");
    let mut c = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(t.path())
        .args(["--", "tr", "a-z", "A-Z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin
        .take()
        .unwrap()
        .write_all(b"hello sandbox\n")
        .unwrap();
    let mut s = String::new();
    c.stdout.take().unwrap().read_to_string(&mut s).unwrap();
    assert_eq!(s, "HELLO SANDBOX\n");
    assert!(c.wait().unwrap().success());
}

#[test]
fn reusable_self_confinement_pieces_hold() {
    // What a self-confining worker does, applied to a fresh process.
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let addr = tcp.local_addr().unwrap().to_string();
    let o = Command::new(exe())
        .args(["__sandbox-helper", "probe", "self-confine", &addr])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert_eq!(out(&o), "confined\n");
    assert!(tcp.accept().is_err());
    assert!(!std::path::Path::new("/tmp/skarn-self-confine-probe").exists());
}

#[test]
fn overlapping_runs_leave_no_placeholders_behind() {
    use std::io::Write;
    use std::os::unix::fs::FileTypeExt;
    let t = TempDir::new("overlap");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // Run A holds the workspace (and its placeholders) until told to end.
    let mut a = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", "echo ready; read x"])
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(a.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    // Run B starts and ends meanwhile: A's `.envrc` placeholder is no
    // `.envrc`, so B reserves nothing more (nix and direnv files) that
    // neither run could remove afterwards.
    let o = run_in(&ws, &home, &[], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    a.stdin.take().unwrap().write_all(b"end\n").unwrap();
    assert!(a.wait().unwrap().success());
    let sockets: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|f| f.is_socket()))
        .map(|e| e.file_name())
        .collect();
    assert!(sockets.is_empty(), "placeholders left: {sockets:?}");
}

#[test]
fn killing_skarn_leaves_no_placeholders_behind() {
    let t = TempDir::new("kill");
    let ws = t.dir("ws");
    let mut c = Command::new(exe())
        .args([
            "run",
            "--no-config",
            "--workspace-layer",
            "direct",
            "--workspace",
        ])
        .arg(&ws)
        .args(["--", "sh", "-c", "echo ready; sleep 30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(c.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    assert!(
        std::fs::symlink_metadata(ws.join(".envrc")).is_ok(),
        "placeholder reserved during the run"
    );
    // The .git mount point is an empty directory: not a repository to host git.
    assert!(ws.join(".git").is_dir());
    let o = Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["rev-parse", "--absolute-git-dir"])
        .output();
    if let Ok(o) = o {
        assert_ne!(out(&o).trim(), ws.join(".git").display().to_string());
    }
    c.kill().unwrap();
    c.wait().unwrap();
    // The reaper cleans up once the helper is gone.
    let mut left = true;
    for _ in 0..100 {
        left = [".envrc", ".vscode", ".git", ".gemini"]
            .iter()
            .any(|p| std::fs::symlink_metadata(ws.join(p)).is_ok());
        if !left {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !left,
        "placeholders left: {:?}",
        std::fs::read_dir(&ws)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    );
    // And the next run is unaffected.
    let o = run_in(&ws, &t.dir("home"), &[], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}
