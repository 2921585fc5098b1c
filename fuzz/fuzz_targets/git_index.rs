//! A repository's index as a run may leave it (`protect::git::index_vet`,
//! ADR 0235): the input is the index without its checksum, which is made
//! good here (a run writes a valid one). Never panics; whenever we read
//! the index and git (`git ls-files -s -z`) reads it too, both read the
//! same stage-0 entries (an index we cannot read is refused by callers).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha1::Digest as _;
use skarn_sandbox::protect::git::index_vet::{staged_entries, vet};
use std::process::Command;
use std::sync::OnceLock;

fn repo() -> &'static tempfile::TempDir {
    static T: OnceLock<tempfile::TempDir> = OnceLock::new();
    T.get_or_init(|| {
        let t = tempfile::tempdir().expect("tempdir");
        let ok = Command::new("git")
            .arg("-C")
            .arg(t.path())
            .args(["init", "-q"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init failed: set SKARN_FUZZ_NO_GIT=1 to fuzz without git");
        t
    })
}

fn git_entries(index: &[u8]) -> Option<skarn_test_support::git_index::Entries> {
    let dir = repo().path();
    std::fs::write(dir.join(".git/index"), index).ok()?;
    skarn_test_support::git_index::git_ls_files(dir)
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let mut index = data.to_vec();
    index.extend_from_slice(&sha1::Sha1::digest(data));
    let _ = vet(None, &index, 20, &|p, _| p == b".envrc");
    let _ = vet(Some(data), &index, 32, &|_, _| false);
    let Some(ours) = staged_entries(&index, 20) else {
        return;
    };
    if std::env::var_os("SKARN_FUZZ_NO_GIT").is_some() {
        return;
    }
    if let Some(theirs) = git_entries(&index) {
        assert_eq!(ours, theirs, "git and we read the index differently");
    }
});
