//! Issue 22 (hardening): the repository index a run leaves. Content for
//! a protected path staged through the index only (`git update-index
//! --add --cacheinfo`), and `skip-worktree` / `assume-unchanged` flags the
//! run set, must not reach host git unseen: the host's next `git commit`,
//! `git checkout -- .` or `git status` is checked from outside, in both
//! workspace layers.

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: &[&[&str]] = &[&[], &["--workspace-layer", "cow"]];

fn repo(t: &TempDir) -> std::path::PathBuf {
    let ws = t.dir("ws");
    t.file("ws/.envrc", "echo fine\n");
    t.file("ws/a.txt", "a\n");
    t.file("ws/b.txt", "b\n");
    assert!(git(&ws, &["init", "-q"]).status.success());
    assert!(git(&ws, &["add", "."]).status.success());
    assert!(git(&ws, &["commit", "-qm", "init"]).status.success());
    ws
}

fn host_git(ws: &Path, args: &[&str]) -> String {
    let o = git(ws, args);
    assert!(o.status.success(), "git {args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn content_staged_for_protected_paths_through_the_index_never_reaches_host_git() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    for flags in LAYERS {
        let t = TempDir::new("git-index-staged");
        let home = t.dir("home");
        let ws = repo(&t);
        let before = host_git(&ws, &["ls-files", "-s"]);
        let o = run_in(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                "b=$(echo 'touch PLANTED' | git hash-object -w --stdin) && \
                 git update-index --cacheinfo 100644,$b,.envrc && \
                 git update-index --add --cacheinfo 100644,$b,.vscode/tasks.json && \
                 git ls-files -s | grep -c $b",
            ],
        );
        // The attempt itself worked inside.
        assert_eq!(out(&o).trim(), "2", "{flags:?}: {}", err(&o));
        // Host git: the index is as before; a checkout of the index and a
        // commit bring nothing planted.
        assert_eq!(host_git(&ws, &["ls-files", "-s"]), before, "{flags:?}");
        host_git(&ws, &["checkout", "--", "."]);
        assert_eq!(
            std::fs::read_to_string(ws.join(".envrc")).unwrap(),
            "echo fine\n",
            "{flags:?}"
        );
        assert!(!ws.join(".vscode/tasks.json").exists(), "{flags:?}");
        let _ = git(&ws, &["commit", "-qm", "host commit"]);
        let tree = host_git(&ws, &["ls-tree", "-r", "HEAD"]);
        assert!(!tree.contains(".vscode"), "{flags:?}: {tree}");
        // Said: the direct mode names the staged paths; the layer refuses
        // the changed index whole.
        assert!(
            err(&o).contains("through the index only")
                || err(&o).contains("not applied to the workspace: .git/index"),
            "{flags:?}: {}",
            err(&o)
        );
    }
}

#[test]
fn index_flags_the_run_set_are_cleared_and_its_other_staging_kept() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    for flags in LAYERS {
        let t = TempDir::new("git-index-flags");
        let home = t.dir("home");
        let ws = repo(&t);
        let o = run_in(
            &ws,
            &home,
            flags,
            &[
                "sh",
                "-c",
                "echo changed >> a.txt && git update-index --skip-worktree a.txt && \
                 echo changed >> b.txt && git update-index --assume-unchanged b.txt && \
                 echo c > c.txt && git add c.txt && git status --porcelain",
            ],
        );
        // Inside, the flags hid both changes.
        assert_eq!(out(&o), "A  c.txt\n", "{flags:?}: {}", err(&o));
        // On the host, git shows them again; the ordinary staging stayed.
        assert_eq!(
            host_git(&ws, &["ls-files", "-v"]),
            "H .envrc\nH a.txt\nH b.txt\nH c.txt\n"
        );
        let st = host_git(&ws, &["status", "--porcelain"]);
        assert!(
            st.contains(" M a.txt") && st.contains(" M b.txt"),
            "{flags:?}: {st}"
        );
        assert!(st.contains("A  c.txt"), "{flags:?}: {st}");
    }
}
