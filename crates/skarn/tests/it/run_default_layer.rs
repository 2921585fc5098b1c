//! The default `skarn run` (ADR 0226: the workspace through a copy-on-write
//! layer) shows an empty workspace empty, inside and to host programs
//! while it runs, and still sees files the host makes during the run.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

fn listing(ws: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Start `script` under the default `skarn run`; the lines it prints up to
/// `READY`, and the child waiting on its stdin.
fn start(ws: &Path, home: &Path, script: &str) -> (Child, Vec<String>) {
    let mut child = run_command(ws, home, &[], &["sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skarn");
    let mut lines = Vec::new();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap() == 0 {
            let o = child.wait_with_output().unwrap();
            panic!("the run ended before READY: {lines:?} {}", err(&o));
        }
        if l.trim_end() == "READY" {
            break;
        }
        lines.push(l.trim_end().to_string());
    }
    // The rest of stdout is read by wait_with_output.
    child.stdout = Some(reattach(r));
    (child, lines)
}

/// The reader's pipe handed back to the child (nothing buffered is lost:
/// the script prints nothing between READY and its `read`).
fn reattach(r: BufReader<std::process::ChildStdout>) -> std::process::ChildStdout {
    assert!(r.buffer().is_empty(), "nothing after READY yet");
    r.into_inner()
}

fn finish(mut child: Child) -> std::process::Output {
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_readmes_first_command_lists_nothing_extra_inside_or_on_the_host() {
    let t = TempDir::new("clean-ls");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let (child, inside) = start(&ws, &home, "ls -la; echo READY; read x");
    // Host programs (zip -r, tar, a glob) see the workspace as it is while
    // the run is under way: empty, no placeholder.
    let during = listing(&ws);
    let o = finish(child);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(during.is_empty(), "the host saw {during:?} during the run");
    let names: Vec<&str> = inside
        .iter()
        .skip(1) // total N
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(names, [".", ".."], "inside: {inside:?}");
    assert!(
        !inside.iter().any(|l| l.starts_with('s')),
        "no socket inside: {inside:?}"
    );
    assert!(
        listing(&ws).is_empty(),
        "nothing left after: {:?}",
        listing(&ws)
    );
    assert_eq!(listing(t.path()), vec!["home", "ws"]);
}

#[test]
fn a_missing_protected_name_stays_protected_without_a_placeholder() {
    let t = TempDir::new("clean-protect");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let (child, _) = start(
        &ws,
        &home,
        "echo 'echo PWN' > .envrc; mkdir -p .vscode && echo {} > .vscode/tasks.json; \
         echo ok > work.txt; echo READY; read x",
    );
    // No window: the plant is not on the host while the run goes on...
    let during = listing(&ws);
    let o = finish(child);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(during.is_empty(), "the host saw {during:?} during the run");
    // ...nor after; the ordinary file landed.
    assert_eq!(listing(&ws), vec!["work.txt"], "{}", err(&o));
    assert!(
        err(&o).contains(".envrc"),
        "the refusal is said: {}",
        err(&o)
    );
}

#[test]
fn host_edits_during_the_run_are_seen_inside() {
    // What overlayfs shows of the host's changes during a run (figures in
    // ADR 0226): a new name the run had not looked up, an edit in place, a
    // removal. A name looked up while missing, or a file replaced by
    // rename, is seen only by the next run (a cached dentry): not asserted.
    let t = TempDir::new("clean-dentry");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("edit.txt"), "old\n").unwrap();
    std::fs::write(ws.join("gone.txt"), "x\n").unwrap();
    let (child, before) = start(
        &ws,
        &home,
        "ls -A sub; cat edit.txt; echo READY; read x; cat new.txt sub/new.txt edit.txt; \
         test -e gone.txt || echo gone",
    );
    assert_eq!(before, ["old"]);
    std::fs::write(ws.join("new.txt"), "top\n").unwrap();
    std::fs::write(ws.join("sub/new.txt"), "deep\n").unwrap();
    std::fs::write(ws.join("edit.txt"), "new\n").unwrap();
    std::fs::remove_file(ws.join("gone.txt")).unwrap();
    let o = finish(child);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "top\ndeep\nnew\ngone\n", "{}", err(&o));
}
