//! `skarn run`, issue 22 (helper h22o): the git side of a run written in
//! place. Each test makes the attack for real and judges from outside:
//! the host checks out the run's branch and enters the directory (direnv
//! sources `.envrc`), and the planted code did not run.

use std::path::Path;

use crate::common::*;
use crate::run_atk22i_git::{host_git, skip_without_git};
use crate::support_git::{enter, planted_commit, repo, settle};
use skarn_test_support::TempDir;

/// On the host, in `dir`: check out `branch` and source `.envrc` as
/// direnv does on entering the directory.
fn host_enters(dir: &Path, home: &Path, branch: &str) {
    let _ = host_git(dir, home, &["checkout", "-q", "-f", branch]);
    enter(dir);
}

/// Run `script` (it ends with `echo RAN`) in the workspace `ws` with
/// `flags`; what the run said.
fn run(ws: &Path, home: &Path, flags: &[&str], script: &str) -> String {
    let o = run_command(ws, home, flags, &["sh", "-c", script])
        .current_dir(ws)
        .output()
        .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(
        said.contains("RAN"),
        "{flags:?}: the command did not run: {said}"
    );
    said
}

/// Shell lines (in a repository, inside the run) making a commit above
/// the planted one of [`planted_commit`] on branch `above`, stored only
/// in a pack (the planted commit stays loose).
const PACKED_ABOVE: &str = "G='git -c user.name=a -c user.email=a@a'; \
     a=$($G commit-tree agent^{tree} -p agent -m above); \
     echo $a | git pack-objects -q .git/objects/pack/pack >/dev/null; \
     rm -f .git/objects/$(echo $a | cut -c1-2)/$(echo $a | cut -c3-); \
     git update-ref refs/heads/above $a; ";

#[test]
fn packs_a_run_writes_in_a_nested_repository_or_a_write_grant_are_vetted() {
    // SECURITY.md's gap "packs made in nested repositories or in `--write`
    // grants outside the workspace are not read": `git gc` there kept
    // the planted commit in a pack, and a packed commit above a loose
    // unsafe one kept its object.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let mut failed = Vec::new();
    // (where, layer, how the run packs)
    let cases = [
        ("nested", "direct", "gc", "agent"),
        ("nested", "direct", "above", "above"),
        ("grant", "direct", "gc", "agent"),
        ("grant", "cow", "gc", "agent"),
        ("grant", "cow", "above", "above"),
    ];
    for (place, layer, how, branch) in cases {
        let t = TempDir::new("h22o-packs");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&ws, "a", "a\n");
        let repo_dir = if place == "nested" {
            let n = t.dir("ws/sub");
            repo(&n, "n", "n\n");
            n
        } else {
            let g = t.dir("grant");
            repo(&g, "g", "g\n");
            g
        };
        settle();
        let marker = t.join("PLANTED-RAN");
        let pack = if how == "gc" {
            "git gc -q; "
        } else {
            PACKED_ABOVE
        };
        let script = format!(
            "cd {} && {}{pack}ls .git/objects/pack; echo RAN",
            repo_dir.display(),
            planted_commit(&marker)
        );
        let grant = repo_dir.display().to_string();
        let mut flags = vec!["--report", "--workspace-layer", layer];
        if place == "grant" {
            flags.extend(["--write", grant.as_str()]);
        }
        let said = run(&ws, &home, &flags, &script);
        assert!(
            said.contains(".pack"),
            "{place} {layer} {how}: no pack: {said}"
        );
        host_enters(&repo_dir, &home, branch);
        if marker.exists() {
            failed.push(format!("{place} {layer} {how}: {said}"));
        }
        // The history from before the run is intact.
        let o = host_git(&repo_dir, &home, &["log", "-q", "master", "--format=%s"]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("init"),
            "{place} {layer} {how}: the repository lost its history: {} {said}",
            err(&o)
        );
    }
    assert!(
        failed.is_empty(),
        "the host checked out a packed commit the run planted .envrc in: {failed:#?}"
    );
}

#[test]
fn a_plain_gc_in_a_nested_repository_keeps_the_runs_commits_quietly() {
    // The other side: the run's own safe commit, packed in place, stays.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("h22o-gc-ok");
    let home = t.dir("home");
    let ws = t.dir("ws");
    repo(&ws, "a", "a\n");
    let sub = t.dir("ws/sub");
    repo(&sub, "n", "n\n");
    settle();
    let said = run(
        &ws,
        &home,
        &["--report", "--workspace-layer", "direct"],
        "cd sub && echo more > m && git add m && \
         git -c user.name=a -c user.email=a@a commit -qm mine && \
         git commit-graph write --reachable && git gc -q && echo RAN",
    );
    let o = host_git(&sub, &home, &["log", "-q", "--format=%s", "master"]);
    let log = String::from_utf8_lossy(&o.stdout);
    assert!(
        log.contains("mine") && log.contains("init"),
        "the run's own packed commit was lost: {log} {said}"
    );
    assert!(
        !said.contains("the pack ") && !said.contains("commit-graph"),
        "a plain gc was reported: {said}"
    );
}
