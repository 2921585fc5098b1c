#![cfg(unix)]

use super::*;
use std::os::unix::fs::symlink;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skarn-fact-deps-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(&d).unwrap()
}

#[test]
fn resolves_as_realpath_does() {
    let d = tmp("resolve");
    std::fs::create_dir_all(d.join("a/b/bin")).unwrap();
    std::fs::write(d.join("a/b/bin/prog"), "x").unwrap();
    symlink("../b/bin/prog", d.join("a/b/rel")).unwrap();
    symlink(d.join("a/b"), d.join("abs")).unwrap();
    symlink("abs/bin", d.join("chain")).unwrap();
    symlink("loop2", d.join("loop1")).unwrap();
    symlink("loop1", d.join("loop2")).unwrap();
    symlink("missing", d.join("dangling")).unwrap();
    let cases = [
        "a/b/rel",
        "abs/bin/prog",
        "chain/prog",
        "chain/../bin/prog",
        "abs/../a/./b",
        "a/b/bin/prog/x",
        "a/b/bin/prog/..",
        "loop1",
        "dangling",
        "missing/x",
        "a/b/rel/..",
    ];
    let mut deps = Deps::new();
    for c in cases {
        let p = d.join(c);
        let want = std::fs::canonicalize(&p).ok();
        let got = deps.resolve(&p).map(|(r, _)| r);
        assert_eq!(got, want, "{c}");
    }
    assert_eq!(
        deps.resolve(&d.join("chain/prog")).map(|(_, n)| n),
        Some(Node::File)
    );
    assert_eq!(
        deps.resolve(&d.join("abs")).map(|(_, n)| n),
        Some(Node::Dir)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_change_of_anything_read_is_seen() {
    let d = tmp("still");
    std::fs::create_dir_all(d.join("dir")).unwrap();
    std::fs::write(d.join("dir/f"), "one").unwrap();
    symlink(d.join("dir/f"), d.join("link")).unwrap();
    let check = |deps: &Deps| {
        let mut b = Vec::new();
        deps.put(&mut b).unwrap();
        still(&mut Fields(&b)).unwrap()
    };
    let record = || {
        let mut deps = Deps::new();
        let (real, _) = deps.resolve(&d.join("link")).unwrap();
        deps.open_file(&real).unwrap();
        deps
    };
    let deps = record();
    assert!(check(&deps), "nothing changed");
    // The file's content (same size).
    std::fs::write(d.join("dir/f"), "two").unwrap();
    assert!(!check(&deps), "a file's content changed");
    let deps = record();
    // A new entry in a directory walked through.
    std::fs::write(d.join("dir/g"), "").unwrap();
    assert!(!check(&deps), "a directory's entries changed");
    let deps = record();
    // The link replaced (its directory changes).
    std::fs::remove_file(d.join("link")).unwrap();
    symlink(d.join("dir/g"), d.join("link")).unwrap();
    assert!(!check(&deps), "a link was replaced");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_directory_walked_through_is_kept_by_its_identity() {
    let d = tmp("through");
    std::fs::create_dir_all(d.join("busy/lib")).unwrap();
    std::fs::write(d.join("busy/lib/f"), "one").unwrap();
    let check = |deps: &Deps| {
        let mut b = Vec::new();
        deps.put(&mut b).unwrap();
        still(&mut Fields(&b)).unwrap()
    };
    let record = || {
        let mut deps = Deps::new();
        let (real, n) = deps.resolve(&d.join("busy/lib/f")).unwrap();
        assert_eq!(n, Node::File);
        deps.open_file(&real).unwrap();
        deps
    };
    let deps = record();
    // Only walked through (its next name, `lib`, is a stamped directory):
    // a fresh change there makes the fact neither stale nor unsure.
    std::fs::write(d.join("busy/other"), "").unwrap();
    assert!(
        check(&deps),
        "an unrelated entry of a walked-through directory"
    );
    let mut deps = record();
    let (stamps, _) = deps.take();
    let kind = |p: &Path| stamps.iter().find(|s| s.0 == p).map(|s| s.1);
    assert_eq!(kind(&d.join("busy")), Some(THROUGH));
    assert_eq!(kind(&d.join("busy/lib")), Some(DIR));
    assert_eq!(kind(&d.join("busy/lib/f")), Some(FILE));
    let deps = record();
    // The parent of the file read keeps its full stamp.
    std::fs::write(d.join("busy/lib/g"), "").unwrap();
    assert!(!check(&deps), "the file's directory changed");
    let deps = record();
    // The walked-through directory's next name replaced by another one.
    std::fs::rename(d.join("busy/lib"), d.join("busy/old")).unwrap();
    std::fs::create_dir(d.join("busy/lib")).unwrap();
    std::fs::write(d.join("busy/lib/f"), "one").unwrap();
    assert!(!check(&deps), "a directory on the way was replaced");
    let deps = record();
    // The next name made a link to a directory.
    std::fs::rename(d.join("busy/lib"), d.join("busy/new")).unwrap();
    symlink(d.join("busy/new"), d.join("busy/lib")).unwrap();
    assert!(!check(&deps), "a directory on the way was made a link");
    // A name missing: its parent in full.
    let mut deps = Deps::new();
    assert!(deps.kernel_path(&d.join("busy/none/x")).is_some());
    std::fs::create_dir(d.join("busy/none")).unwrap();
    assert!(!check(&deps), "a missing name appeared");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A record with no stamps is never taken as holding (atk30a F2: a
/// planted 41-byte launcher record of "no stamps, nothing found" held
/// forever and dropped the installation protection).
#[test]
fn a_record_of_no_stamps_never_holds() {
    let mut b = Vec::new();
    Deps::new().put(&mut b).unwrap();
    assert_eq!(still(&mut Fields(&b)), Some(false));
    assert_eq!(still(&mut Fields(&[0, 0, 0, 0])), Some(false));
}
