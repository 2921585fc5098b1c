//! `skarn run`: links, FIFOs and device nodes planted in a git directory
//! (which host git would write through or hang on) do not outlive the run;
//! checked from outside with the host's git.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Output;

use crate::common::*;
use skarn_test_support::TempDir;

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A repository on the host with one commit.
fn host_repo(ws: &Path) {
    ok(&git(ws, &["init", "-q"]));
    std::fs::write(ws.join("f"), "1\n").unwrap();
    ok(&git(ws, &["add", "f"]));
    ok(&git(ws, &["commit", "-qm", "first"]));
}

/// Host git commits in `ws` (a new change).
fn host_commit(ws: &Path) {
    std::fs::write(ws.join("f"), "changed\n").unwrap();
    ok(&git(ws, &["add", "f"]));
    ok(&git(ws, &["commit", "-qm", "next"]));
}

fn is_odd(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .is_ok_and(|m| m.file_type().is_symlink() || m.file_type().is_fifo())
}

/// Every symbolic link or FIFO under `dir` (not following links).
fn odd_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_symlink() || ft.is_fifo() {
                found.push(e.path().display().to_string());
            } else if ft.is_dir() {
                stack.push(e.path());
            }
        }
    }
    found
}

/// A file outside the workspace, the link target: host git must leave it.
fn target(t: &TempDir) -> std::path::PathBuf {
    let p = t.dir("outside").join("dotfile");
    std::fs::write(&p, "# original\n").unwrap();
    p
}

#[test]
fn staged_repository_with_a_reflog_link_is_refused() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-staged");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let dot = target(&t);
    let script = format!(
        "git init -q . && git config user.name 'x; touch /tmp/poc_pwned #' && \
         git config user.email a@b && mkdir -p .git/logs && ln -s {} .git/logs/HEAD && \
         ln -s {}.new .git/refs/heads/evil && echo ok",
        dot.display(),
        dot.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("logs/HEAD") && e.contains(&dot.display().to_string()),
        "{e}"
    );
    assert!(e.contains("refs/heads/evil"), "{e}");
    assert!(odd_under(&ws).is_empty(), "{:?}", odd_under(&ws));
    // The user's next git in that directory writes nothing outside it.
    host_repo(&ws);
    host_commit(&ws);
    assert_eq!(std::fs::read_to_string(&dot).unwrap(), "# original\n");
    assert!(!t.path().join("outside/dotfile.new").exists());
}

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn reflog_link_planted_in_an_existing_repository_is_removed() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-existing");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    host_repo(&ws);
    let dot = target(&t);
    let script = format!(
        "rm .git/logs/HEAD && ln -s {d} .git/logs/HEAD && rm .git/logs/refs/heads/* && \
         for r in .git/logs/refs/heads; do ln -s {d} $r/$(git branch --show-current); done && \
         ln -s {d} .git/ORIG_HEAD && echo ok",
        d = dot.display()
    );
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "ok\n");
    let e = err(&o);
    // Refused by the git layer (ADR 0181) before it reaches the host, or
    // removed by the sweep after the run (which names the target).
    let layer = e.contains(".git/logs/HEAD was not applied");
    assert!(
        layer || e.contains(".git/logs/HEAD was made a symbolic link to"),
        "{e}"
    );
    assert!(layer || e.contains(&dot.display().to_string()), "{e}");
    assert!(odd_under(&ws.join(".git")).is_empty());
    host_commit(&ws);
    ok(&git(&ws, &["reset", "-q", "HEAD~1"])); // writes ORIG_HEAD
    assert_eq!(std::fs::read_to_string(&dot).unwrap(), "# original\n");
    // git still has the history (the reflog starts again).
    let log = git(&ws, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "first\n");
}

#[test]
fn nested_links_under_refs_and_info_are_removed() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-nested");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    host_repo(&ws);
    let dot = target(&t);
    let script = format!(
        "mkdir -p .git/refs/heads/deep/er .git/info && ln -s {d} .git/refs/heads/deep/er/x && \
         rm -f .git/info/exclude && ln -s {d} .git/info/exclude && \
         mkdir -p .git/objects/info && ln -s {d} .git/objects/info/commit-graph && echo ok",
        d = dot.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for p in [
        "refs/heads/deep/er/x",
        "info/exclude",
        "objects/info/commit-graph",
    ] {
        assert!(!is_odd(&ws.join(".git").join(p)), "{p} left");
        assert!(err(&o).contains(p), "{p} not reported: {}", err(&o));
    }
    host_commit(&ws);
    ok(&git(&ws, &["pack-refs", "--all"]));
    assert_eq!(std::fs::read_to_string(&dot).unwrap(), "# original\n");
}

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn fifo_at_commit_editmsg_is_removed() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-fifo");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    host_repo(&ws);
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &[
            "sh",
            "-c",
            "rm -f .git/COMMIT_EDITMSG && mkfifo .git/COMMIT_EDITMSG && echo ok",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Refused by the git layer (ADR 0181) before it reaches the host, or
    // removed by the sweep after the run.
    assert!(
        err(&o).contains("COMMIT_EDITMSG was made a FIFO")
            || err(&o).contains(".git/COMMIT_EDITMSG was not applied"),
        "{}",
        err(&o)
    );
    // Checked before git runs: a FIFO left there would hang it.
    assert!(!is_odd(&ws.join(".git/COMMIT_EDITMSG")));
    host_commit(&ws);
}

#[test]
fn links_the_user_made_before_the_run_are_kept() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-own");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    host_repo(&ws);
    std::fs::write(ws.join("exclude-shared"), "*.log\n").unwrap();
    std::fs::remove_file(ws.join(".git/info/exclude")).unwrap();
    std::os::unix::fs::symlink("../../exclude-shared", ws.join(".git/info/exclude")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "git status --short >/dev/null; echo ok"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("symbolic link"), "{}", err(&o));
    assert!(is_odd(&ws.join(".git/info/exclude")));
}

#[test]
fn ordinary_git_inside_leaves_nothing_to_report() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitlink-usable");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let work = "echo a > a && git add a && git -c user.name=a -c user.email=b commit -qm one && \
                git branch side && git checkout -q side && echo b > b && git add b && \
                git -c user.name=a -c user.email=b commit -qm two && git checkout -q - && \
                git merge -q --no-edit side && git tag v1 && git log --oneline >/dev/null && \
                git reset -q --hard && git gc -q && git pack-refs --all && echo ok";
    // A new repository (staged), then work in the existing one.
    for script in [
        format!("git init -q && {work}"),
        work.replace("v1", "v2")
            .replace("side", "side2")
            .replace("echo a >", "echo a2 >")
            .replace("echo b >", "echo b2 >"),
    ] {
        let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert_eq!(out(&o), "ok\n", "{}", err(&o));
        let e = err(&o);
        for bad in ["symbolic link", "FIFO", "refused", "dropped", "warning"] {
            assert!(!e.contains(bad), "{bad}: {e}");
        }
        // The sweep leaves what git made: the repository works on the host.
        let log = git(&ws, &["log", "--format=%s"]);
        assert!(String::from_utf8_lossy(&log.stdout).contains("two"));
        ok(&git(&ws, &["fsck", "--no-progress"]));
    }
}
