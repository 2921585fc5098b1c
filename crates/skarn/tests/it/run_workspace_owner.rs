//! Root in a workspace owned by another uid (a CI container's checkout, a
//! bind-mounted repository, `tar x` as root) writes it as root does bare
//! (issue 23 item 4, ADR 0180): the workspace is bound through an id
//! mapping that swaps its owner and root. Checked from outside: the
//! host's files changed, new ones belong to the owner, and the
//! protections inside the workspace still hold.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::common::*;
use skarn_test_support::{TempDir, is_root};

const OWNER: u32 = 1234;

fn chown_tree(p: &Path, uid: u32) {
    let o = std::process::Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(p)
        .output()
        .unwrap();
    assert!(o.status.success(), "chown: {}", err(&o));
}

#[test]
fn root_writes_a_workspace_owned_by_another_uid() {
    if !is_root() {
        skarn_test_support::skip!("needs root: only root runs in a checkout of another uid");
    }
    let t = TempDir::new("owner-ws");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("f.txt"), "old\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "// old\n").unwrap();
    chown_tree(&ws, OWNER);
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo new > f.txt && echo '// new' > src/lib.rs && mkdir made && \
             echo x > made/x && rm src/lib.rs && echo y > src/lib.rs && \
             echo PWN > .envrc 2>/dev/null; id -u",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).trim(), "0", "the command still runs as root");
    assert_eq!(std::fs::read_to_string(ws.join("f.txt")).unwrap(), "new\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        "y\n"
    );
    for p in ["made", "made/x", "src/lib.rs", "f.txt"] {
        let md = std::fs::metadata(ws.join(p)).unwrap();
        assert_eq!(
            (md.uid(), md.gid()),
            (OWNER, OWNER),
            "{p} belongs to the owner"
        );
    }
    // The protections inside the workspace still hold.
    assert!(
        !ws.join(".envrc").exists(),
        "a persistence path is still protected"
    );
    assert!(
        !err(&o).contains("writes outside"),
        "no failure line: {}",
        err(&o)
    );
}

#[test]
fn git_works_in_a_checkout_owned_by_another_uid() {
    if !is_root() {
        skarn_test_support::skip!("needs root: only root runs in a checkout of another uid");
    }
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("owner-git");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::write(ws.join("a"), "a\n").unwrap();
    chown_tree(&ws, OWNER);
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "git add a && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("one"), "{}", out(&o));
    // Seen from the host (as the owner would): one commit.
    let l = std::process::Command::new("git")
        .args(["-c", "safe.directory=*", "-C"])
        .arg(&ws)
        .args(["log", "--oneline"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&l.stdout).contains("one"));
}

/// The default layer (ADR 0226) in a checkout of another uid: root writes
/// it through the layer stacked on the owner's id mapping, what it made is
/// the owner's on disk, the repository's hooks and configuration and a
/// missing protected name stay protected, and the host sees neither a
/// placeholder nor an unvetted file while the run goes on.
#[test]
fn the_default_layer_writes_a_checkout_of_another_uid_as_its_owner() {
    use std::io::{BufRead, BufReader, Write};
    if !is_root() {
        skarn_test_support::skip!("needs root: only root runs in a checkout of another uid");
    }
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("owner-layer");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::write(ws.join("a"), "a\n").unwrap();
    chown_tree(&ws, OWNER);
    let script = "echo made > made.txt && mkdir d && echo x > d/x && echo b >> a && \
                  { echo '#!/bin/sh' > .git/hooks/pre-commit; } 2>/dev/null; \
                  git config core.fsmonitor /bin/true; { echo PWN > .envrc; } 2>/dev/null; \
                  echo READY; read x";
    let mut child = run_command(&ws, &home, &[], &["sh", "-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn skarn");
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut l = String::new();
    while r.read_line(&mut l).unwrap() > 0 && l.trim_end() != "READY" {
        l.clear();
    }
    let mut during: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    during.sort();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(during, [".git", "a"], "the host saw these during the run");
    assert_eq!(std::fs::read_to_string(ws.join("a")).unwrap(), "a\nb\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap(),
        "made\n"
    );
    for p in ["made.txt", "d", "d/x", "a"] {
        let md = std::fs::symlink_metadata(ws.join(p)).unwrap();
        assert_eq!(
            (md.uid(), md.gid()),
            (OWNER, OWNER),
            "{p} belongs to the owner"
        );
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists(), "a hook planted");
    assert!(!ws.join(".envrc").exists(), ".envrc planted");
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!cfg.contains("fsmonitor"), "core.fsmonitor applied: {cfg}");
}
