//! Issue 24 item 14: a direct run and a copy-on-write run (`--workspace-layer
//! cow`) in the same workspace at once. The direct run reserves missing
//! protected names with placeholders and leaves them to the last run out;
//! when that is the copy-on-write run (which makes none), it must remove
//! them too. Judged on the host's workspace after both ended: only the
//! user's files and what the runs wrote, no placeholder, no empty `.git`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

const COW: &[&str] = &["--workspace-layer", "cow"];

fn listing(ws: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A run that writes `file`, says ready and waits for a line.
fn held(ws: &Path, home: &Path, flags: &[&str], file: &str) -> Child {
    let mut c = run_command(
        ws,
        home,
        flags,
        &["sh", "-c", &format!("echo x > {file}; echo ready; read x")],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    c
}

fn release(mut c: Child) {
    c.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(c.wait().unwrap().success());
}

fn check(ws: &Path) {
    assert_eq!(
        listing(ws),
        ["cow.txt", "direct.txt", "keep.txt"],
        "placeholders or an empty .git left behind"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_direct_run_inside_a_cow_run_leaves_no_placeholder() {
    let t = TempDir::new("overlap-cow-first");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("keep.txt"), "mine").unwrap();
    let cow = held(&ws, &home, COW, "cow.txt");
    let o = run_in(&ws, &home, &[], &["sh", "-c", "echo x > direct.txt"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    release(cow);
    check(&ws);
}

#[test]
fn a_cow_run_inside_a_direct_run_leaves_no_placeholder() {
    let t = TempDir::new("overlap-direct-first");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("keep.txt"), "mine").unwrap();
    let direct = held(&ws, &home, &[], "direct.txt");
    let o = run_in(&ws, &home, COW, &["sh", "-c", "echo x > cow.txt"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    release(direct);
    check(&ws);
}
