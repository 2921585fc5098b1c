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
        match vet(Some(&old), &new, &envrc) {
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
            matches!(vet(Some(&before), &after, &envrc), Verdict::Refuse(_)),
            "v{version}"
        );
        // The same index is fine when the path is not protected.
        assert!(!matches!(
            vet(Some(&before), &after, &|_, _| false),
            Verdict::Refuse(_)
        ));
        // Unchanged: nothing to do; garbage: refused.
        assert_eq!(vet(Some(&after), &after, &envrc), Verdict::Keep);
        assert!(matches!(
            vet(Some(&after), b"DIRCjunk", &envrc),
            Verdict::Refuse(_)
        ));
    }
}
