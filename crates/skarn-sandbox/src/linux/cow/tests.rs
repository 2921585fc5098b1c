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

/// Attack atk22k F12 in the layer: anything but a regular file in the
/// place of a file whose content is judged.
#[test]
fn a_link_in_place_of_a_package_json_is_refused() {
    for p in [
        "package.json",
        "packages/a/package.json",
        "package.yaml",
        "a/package.yml",
    ] {
        assert!(!ok(p, Change::Special, true), "{p}");
        assert!(!ok(p, Change::Special, false), "{p}");
        assert!(!ok(p, Change::Dir, false), "{p}");
    }
    assert!(ok("node_modules/x/package.json", Change::Dir, true));
    assert!(ok("package.json", Change::Delete, true));
}

/// Attack atk22k F15, F15b: a Git LFS object whose content is not the
/// object it names, and git-crypt's keys, in any repository.
#[test]
fn lfs_objects_are_their_content_and_git_crypt_keys_are_refused() {
    let t = skarn_test_support::TempDir::new("cow-git-stores");
    let good = t.file("good", "GOODGOOD");
    let evil = t.file("evil", "EVILEVIL");
    let oid = "f51a35353b43c7c5073ff195fe06373a7e960d53e1d3429ad7b2d326a372b536";
    let at = |rel: &str, up: &Path| {
        check(&rules(), Path::new(rel), Change::File, up, true, None).is_ok()
    };
    for repo in [
        ".git",
        "vendor/x/.git",
        ".git/modules/m",
        ".git/modules/a/b/modules/c",
    ] {
        let p = format!("{repo}/lfs/objects/f5/1a/{oid}");
        assert!(at(&p, &good), "{p}");
        assert!(!at(&p, &evil), "{p}");
        assert!(
            !at(&format!("{repo}/lfs/objects/f5/1b/{oid}"), &good),
            "{repo}"
        );
        assert!(!at(&format!("{repo}/lfs/objects/x"), &good), "{repo}");
        assert!(at(&format!("{repo}/lfs/tmp/part"), &evil), "{repo}");
        assert!(
            !at(&format!("{repo}/git-crypt/keys/default"), &good),
            "{repo}"
        );
    }
    // git-annex's objects, which the work tree's links lead to.
    let key = format!("SHA256E-s8--{oid}.bin");
    let annex = format!("vendor/x/.git/annex/objects/Xq/9z/{key}/{key}");
    assert!(at(&annex, &good));
    assert!(!at(&annex, &evil));
    let worm = "WORM-s8-m1--a.bin";
    assert!(!at(&format!(".git/annex/objects/a/b/{worm}/{worm}"), &good));
    assert!(at(&format!("src/lfs/objects/f5/1a/{oid}"), &evil));
    assert!(ok(".git/git-crypt/keys/default", Change::Delete, true));
    assert!(ok(".git/lfs/objects/f5", Change::Dir, false));
}
