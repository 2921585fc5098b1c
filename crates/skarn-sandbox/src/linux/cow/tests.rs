use std::path::{Path, PathBuf};

use super::vet::{Change, Rules, check};

fn rules() -> Rules {
    Rules {
        ws: PathBuf::from("/w"),
        protected: vec![
            (PathBuf::from("/w/.envrc"), true),
            (PathBuf::from("/w/.git/hooks"), true),
            (PathBuf::from("/w/lefthook.yml"), false),
        ],
        ..Rules::default()
    }
}

fn ok(rel: &str, what: Change, host: bool) -> bool {
    check(
        &rules(),
        Path::new(rel),
        what,
        Path::new("/nonexistent"),
        host,
        None,
    )
    .is_ok()
}

#[test]
fn protected_paths_and_names_read_anywhere_are_refused() {
    assert!(!ok(".envrc", Change::File, false));
    assert!(!ok(".git/hooks/pre-commit", Change::File, false));
    assert!(!ok("pkg/.envrc", Change::File, false));
    assert!(!ok("pkg/.claude/settings.json", Change::File, false));
    assert!(!ok("pkg/rust-toolchain.toml", Change::File, false));
    assert!(!ok("x.code-workspace", Change::File, false));
    assert!(!ok(".git/config.worktree", Change::File, false));
    assert!(!ok(".git/objects/info/alternates", Change::File, false));
    assert!(!ok(".git/refs/heads/x", Change::Special, false));
    assert!(!ok(
        ".git/rebase-merge/git-rebase-todo",
        Change::File,
        false
    ));
    assert!(!ok("sub/.git", Change::File, false));
    // An existing unreserved path may not change; a missing one may be made.
    assert!(!ok("lefthook.yml", Change::File, true));
    assert!(ok("lefthook.yml", Change::File, false));
    // Removing a protected path is refused too.
    assert!(!ok(".envrc", Change::Delete, true));
}

#[test]
fn ordinary_work_is_applied() {
    assert!(ok("src/main.rs", Change::File, true));
    assert!(ok("target/debug/app", Change::File, false));
    assert!(ok("node_modules/pkg/index.js", Change::File, false));
    assert!(ok(
        ".venv/lib/python3.12/site-packages/pkg/__init__.py",
        Change::File,
        false
    ));
    assert!(ok(".venv/bin/python", Change::Special, false));
    assert!(ok(".git/objects/ab/cdef", Change::File, false));
    assert!(ok(".git/refs/heads/main", Change::File, true));
    assert!(ok(".git/index", Change::File, true));
    assert!(ok("sub/.git/hooks/pre-commit.sample", Change::File, false));
    assert!(!ok("sub/.git/hooks/pre-commit", Change::File, false));
    assert!(ok("src", Change::Delete, true));
}

/// Attack atk24d F9: the dependency and build trees are vetted like any
/// other directory (as the direct mode's check after the run does), and
/// a virtual environment's start-up files are refused.
#[test]
fn dependency_and_build_trees_are_vetted_too() {
    assert!(!ok("target/rust-toolchain.toml", Change::File, false));
    assert!(!ok("target/.cargo/config.toml", Change::File, false));
    assert!(!ok("target/x/.claude/settings.json", Change::File, false));
    assert!(!ok("node_modules/pkg/.envrc", Change::File, false));
    assert!(!ok("__pycache__/.hg/hgrc", Change::File, false));
    let sp = ".venv/lib/python3.11/site-packages";
    // (An unreadable `.pth` counts as one that runs code.)
    assert!(!ok(&format!("{sp}/evil.pth"), Change::File, false));
    assert!(!ok(&format!("{sp}/sitecustomize.py"), Change::File, false));
    assert!(!ok(&format!("{sp}/usercustomize.py"), Change::File, true));
    assert!(!ok(sp, Change::Special, false));
    assert!(!ok(".venv/pyvenv.cfg", Change::File, true));
    assert!(ok("new-env/pyvenv.cfg", Change::File, false));
    assert!(ok(sp, Change::Dir, false));
    assert!(ok(&format!("{sp}/pkg"), Change::Dir, false));
}
