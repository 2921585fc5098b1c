#![cfg(unix)]
use super::*;
use std::os::unix::fs::symlink;

/// A tree with chains, `..` in link texts, a loop, a dangling link and a
/// file used as a directory.
fn tree() -> (skarn_test_support::TempDir, PathBuf) {
    let t = skarn_test_support::TempDir::new("link-facts");
    let d = std::fs::canonicalize(t.path()).unwrap();
    std::fs::create_dir_all(d.join("a/b/c")).unwrap();
    std::fs::write(d.join("a/b/c/f"), "x").unwrap();
    symlink("b/c", d.join("a/rel")).unwrap();
    symlink(d.join("a/rel"), d.join("abs")).unwrap();
    symlink("../a/b/../b/c/f", d.join("a/up")).unwrap();
    symlink("loop2", d.join("loop1")).unwrap();
    symlink("loop1", d.join("loop2")).unwrap();
    symlink("missing/x", d.join("dangling")).unwrap();
    (t, d)
}

fn cases(d: &Path) -> Vec<PathBuf> {
    [
        "a",
        "a/rel",
        "a/rel/f",
        "abs",
        "abs/f",
        "abs/../b",
        "a/up",
        "a/up/..",
        "loop1",
        "dangling",
        "a/b/c/f/g",
        "a/rel/../c/f",
        "a/./b",
        "nothing/here",
    ]
    .iter()
    .map(|r| d.join(r))
    .collect()
}

#[test]
fn answers_as_realpath_does_inside_a_scope() {
    let (_t, d) = tree();
    let _s = Scope::enter();
    for p in cases(&d) {
        let ours = canonicalize(&p).map_err(|e| e.kind());
        let kernel = std::fs::canonicalize(&p).map_err(|e| e.kind());
        assert_eq!(ours, kernel, "{}", p.display());
    }
}

#[test]
fn each_name_is_asked_once_per_scope_and_never_outside() {
    let (_t, d) = tree();
    assert_eq!(asked(), None);
    {
        let _s = Scope::enter();
        canonicalize(&d.join("abs/f")).unwrap();
        let first = asked().unwrap();
        for _ in 0..10 {
            canonicalize(&d.join("abs/f")).unwrap();
        }
        assert_eq!(asked(), Some(first), "asked again");
        {
            let _inner = Scope::enter();
        }
        assert_eq!(asked(), Some(first), "an inner scope ended the outer one");
    }
    assert_eq!(asked(), None, "kept after the scope");
    // Outside a scope a change is seen at once.
    std::fs::remove_file(d.join("a/rel")).unwrap();
    assert!(canonicalize(&d.join("abs/f")).is_err());
}
