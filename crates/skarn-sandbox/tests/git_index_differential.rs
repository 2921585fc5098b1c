//! Differential test: our reading of a repository's index against git's
//! (`git ls-files -s -z`), on real indexes of every version with bytes
//! changed at random and the checksum made good again (a run can write
//! any index, with a valid checksum). Whenever we read an index, we read
//! the same stage-0 entries git reads; an index we cannot read is refused
//! by the callers, so only a reading that differs is a failure.
//! `PROPTEST_CASES` raises the case count for long local runs.
#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use skarn_sandbox::protect::git::index_vet::staged_entries;
use skarn_test_support::git_index::git_ls_files;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .ok()
}

fn with_checksum(mut body: Vec<u8>) -> Vec<u8> {
    use sha1::Digest as _;
    let sum = sha1::Sha1::digest(&body);
    body.extend_from_slice(&sum);
    body
}

/// Real indexes (versions 2, 3 and 4; names of several lengths sharing
/// prefixes; a skip-worktree flag; cached trees), without their checksum.
fn seeds(repo: &Path) -> Vec<Vec<u8>> {
    let names = [
        "a",
        "b/c.txt",
        "b/cd.txt",
        ".envrc",
        "long-name-of-a-file.rs",
        "z/y/x/w",
    ];
    for n in names {
        let p = repo.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, n).unwrap();
    }
    git(repo, &["add", "."]).unwrap();
    git(repo, &["commit", "-qm", "one"]).unwrap();
    let mut out = Vec::new();
    for v in ["2", "3", "4"] {
        git(repo, &["update-index", "--index-version", v]).unwrap();
        if v == "3" {
            git(repo, &["update-index", "--skip-worktree", "a"]).unwrap();
        }
        let b = std::fs::read(repo.join(".git/index")).unwrap();
        out.push(b[..b.len() - 20].to_vec());
    }
    out
}

fn compare(repo: &Path, body: Vec<u8>) -> Result<(), String> {
    let bytes = with_checksum(body);
    let Some(ours) = staged_entries(&bytes, 20) else {
        return Ok(());
    };
    std::fs::write(repo.join(".git/index"), &bytes).unwrap();
    let Some(theirs) = git_ls_files(repo) else {
        return Ok(());
    };
    if ours == theirs {
        return Ok(());
    }
    // A loaded host can make one git run fail oddly: look twice.
    match git_ls_files(repo) {
        Some(again) if again != ours => Err(format!(
            "git reads {again:?}\nwe read {ours:?}\nindex {bytes:?}"
        )),
        _ => Ok(()),
    }
}

#[test]
fn index_reading_matches_git() {
    if git(Path::new("/"), &["--version"]).is_none_or(|o| !o.status.success()) {
        skarn_test_support::skip!("git is not installed");
    }
    let t = skarn_test_support::TempDir::new("ix-diff");
    let repo = t.dir("r");
    git(&repo, &["init", "-q"]).unwrap();
    let seeds = seeds(&repo);
    for s in &seeds {
        compare(&repo, s.clone()).unwrap();
        assert!(staged_entries(&with_checksum(s.clone()), 20).is_some());
    }
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let n = seeds.len();
    let strategy = (
        0..n,
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        any::<prop::sample::Index>(),
        0..3usize,
    );
    runner
        .run(&strategy, |(which, edits, cut, mode)| {
            let mut body = seeds[which].clone();
            for (at, byte) in edits {
                // Mostly the flags and names (the bytes a reader can read
                // differently), sometimes anywhere.
                let i = at.index(body.len());
                body[i] = byte;
            }
            match mode {
                // Cut the extensions or the end of the entries.
                1 => {
                    let keep = 12 + cut.index(body.len() - 12);
                    body.truncate(keep);
                }
                // A name-length nibble of the first entry's flags.
                2 => {
                    let f = 12 + 60;
                    body[f] = (body[f] & 0xf0) | (body[f + 1] % 16);
                }
                _ => {}
            }
            compare(&repo, body).map_err(TestCaseError::fail)
        })
        .unwrap();
}
