use super::*;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn envrc(p: &[u8], _tracked: bool) -> bool {
    p == b".envrc"
}

#[test]
fn sha1_matches_known_digests() {
    let hex = |d: [u8; 20]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(hex(sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_eq!(
        hex(sha1(b"abc")),
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    let long = vec![b'a'; 1000];
    assert_eq!(hex(sha1(&long)), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

/// Real indexes of every version: a protected path staged through the
/// index refuses it; flags the run set are cleared, and git reads the
/// result.
#[test]
fn staged_protected_paths_refuse_and_new_flags_are_cleared() {
    if !git(Path::new("/"), &["--version"]) {
        skarn_test_support::skip!("git is not installed");
    }
    for version in ["2", "3", "4"] {
        let t = skarn_test_support::TempDir::new("index-vet");
        let ws = t.dir("ws");
        t.file("ws/a.txt", "a\n");
        t.file("ws/b.txt", "b\n");
        assert!(git(&ws, &["init", "-q"]));
        assert!(git(&ws, &["add", "a.txt", "b.txt"]));
        assert!(git(&ws, &["update-index", "--index-version", version]));
        let index = ws.join(".git/index");
        let old = std::fs::read(&index).unwrap();
        // Flags set by the run: cleared, and git still reads the index.
        assert!(git(&ws, &["update-index", "--skip-worktree", "a.txt"]));
        assert!(git(&ws, &["update-index", "--assume-unchanged", "b.txt"]));
        let new = std::fs::read(&index).unwrap();
        match vet(Some(&old), &new, 20, &envrc) {
            Verdict::Rewrite(bytes, notes) => {
                assert_eq!(notes.len(), 2, "{notes:?}");
                std::fs::write(&index, bytes).unwrap();
                let o = Command::new("git")
                    .arg("-C")
                    .arg(&ws)
                    .args(["ls-files", "-v"])
                    .output()
                    .unwrap();
                let s = String::from_utf8_lossy(&o.stdout);
                assert!(o.status.success(), "v{version}: {o:?}");
                assert_eq!(s, "H a.txt\nH b.txt\n", "v{version}");
            }
            v => panic!("v{version}: {v:?}"),
        }
        // A protected path staged through the index only: refused.
        let before = std::fs::read(&index).unwrap();
        let blob = Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(["hash-object", "-w", "a.txt"])
            .output()
            .unwrap();
        let blob = String::from_utf8_lossy(&blob.stdout).trim().to_string();
        let info = format!("100644,{blob},.envrc");
        assert!(git(&ws, &["update-index", "--add", "--cacheinfo", &info]));
        let after = std::fs::read(&index).unwrap();
        assert!(
            matches!(vet(Some(&before), &after, 20, &envrc), Verdict::Refuse(_)),
            "v{version}"
        );
        // The same index is fine when the path is not protected.
        assert!(!matches!(
            vet(Some(&before), &after, 20, &|_, _| false),
            Verdict::Refuse(_)
        ));
        // Unchanged: nothing to do; garbage: refused.
        assert_eq!(vet(Some(&after), &after, 20, &envrc), Verdict::Keep);
        assert!(matches!(
            vet(Some(&after), b"DIRCjunk", 20, &envrc),
            Verdict::Refuse(_)
        ));
    }
}

/// An entry's fixed part: stat data (`fill`), mode, object id, flags.
fn entry_head(mode: u32, oid: &[u8], flags: u16, fill: u8) -> Vec<u8> {
    let mut e = vec![fill; 24];
    for x in [mode, 0, 0, 0] {
        e.extend_from_slice(&x.to_be_bytes());
    }
    e.extend_from_slice(oid);
    e.extend_from_slice(&flags.to_be_bytes());
    e
}

/// A version 2 index git reads as `!` and `.envrc` (the first name's
/// length in its flags is 1, and the byte after it is not a NUL), while a
/// reader that takes names up to their NUL reads `!yAAA…` and `q`: the
/// staged `.envrc` was invisible to it (a parser differential).
fn index_hiding_envrc(blob: &[u8]) -> Vec<u8> {
    let mut b = b"DIRC".to_vec();
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend(entry_head(0o100644, blob, 1, 0));
    b.extend_from_slice(b"!y");
    b.extend(entry_head(0o100644, blob, 6, b'A'));
    b.extend_from_slice(b".envrc\0\0\0\0");
    assert_eq!(b.len(), 148);
    b.extend_from_slice(b"ZZZZ");
    b.extend_from_slice(&24u32.to_be_bytes());
    b.extend_from_slice(&[0; 24]);
    b[168..170].copy_from_slice(&1u16.to_be_bytes());
    b[170] = b'q';
    b[172..176].copy_from_slice(b"YYYY");
    let sum = sha1(&b);
    b.extend_from_slice(&sum);
    b
}

/// Names are read with the length git reads from the flags: an index
/// crafted so that reading up to the NUL sees other entries than git does
/// is refused, and git itself reads the staged `.envrc` in it.
#[test]
fn a_name_length_git_reads_from_the_flags_is_the_one_read_here() {
    if !git(Path::new("/"), &["--version"]) {
        skarn_test_support::skip!("git is not installed");
    }
    let t = skarn_test_support::TempDir::new("index-vet-len");
    let ws = t.dir("ws");
    t.file("ws/f", "echo planted\n");
    assert!(git(&ws, &["init", "-q"]));
    let o = Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["hash-object", "-w", "f"])
        .output()
        .unwrap();
    let hex = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let blob: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let crafted = index_hiding_envrc(&blob);
    std::fs::write(ws.join(".git/index"), &crafted).unwrap();
    let o = Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["ls-files", "-s"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(listed.contains("\t.envrc\n"), "git reads: {listed}");
    assert!(
        matches!(vet(None, &crafted, 20, &envrc), Verdict::Refuse(_)),
        "{:?}",
        staged_entries(&crafted, 20)
    );
    if let Some(seen) = staged_entries(&crafted, 20) {
        assert!(seen.iter().any(|(p, _, _)| p == b".envrc"), "{seen:?}");
    }
}

/// The object format is the repository's, never guessed from the file:
/// an index with a valid SHA-256 checksum does not parse as one of a
/// SHA-1 repository (git reads it with 20-byte ids there).
#[test]
fn the_hash_length_is_the_callers() {
    let mut b = b"DIRC".to_vec();
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    let sum = sha2::Sha256::digest(&b);
    b.extend_from_slice(&sum);
    assert!(staged_entries(&b, 32).is_some());
    assert!(staged_entries(&b, 20).is_none());
}

/// An entry with an empty path (which git never stages, and lists as
/// `./`) makes the index one that does not parse, so callers refuse it
/// (found by the `git_index` fuzz target's differential).
#[test]
fn an_empty_path_is_refused() {
    let mut b = b"DIRC".to_vec();
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend_from_slice(&1u32.to_be_bytes());
    b.extend(entry_head(0o100644, &[7; 20], 0, 0));
    b.extend_from_slice(&[0; 8]);
    let sum = sha1(&b);
    b.extend_from_slice(&sum);
    assert!(staged_entries(&b, 20).is_none());
    assert!(matches!(vet(None, &b, 20, &envrc), Verdict::Refuse(_)));
}
