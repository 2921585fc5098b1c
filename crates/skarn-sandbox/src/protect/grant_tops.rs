//! The tops of writable grants other than the workspace (attack atk24k
//! F8, F9: the user's other project granted with `--write`).
//!
//! Their existing persistence paths are kept read-only like the
//! workspace's, but missing ones are not reserved: a placeholder in a
//! directory the user works in would be in the way. So after the run,
//! every [`crate::protect::persistence::ENTRIES`] path at such a top that
//! the run made (or changed) is set aside, the way the same names are
//! below the top ([`crate::protect::grant_walk`]): a host `cargo`,
//! `direnv`, editor or agent started there never reads the run's text.
//! Git's own files (and a bare repository's `HEAD`) are left to the repository vetting
//! ([`crate::protect::git::nested_git`]), which a `git init` there needs.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::protect::persistence::{ENTRIES, Reserve};

/// Set aside each persistence path at the top of `tops` made or changed
/// since `since`; one line per path set aside.
pub fn set_aside_new(tops: &[PathBuf], since: SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for top in tops {
        // (Not `HEAD`: a bare repository's, vetted with the repository.)
        for en in ENTRIES
            .iter()
            .filter(|e| e.reserve != Reserve::IfHome && e.path != "HEAD")
        {
            let p = top.join(en.path);
            if !crate::protect::grant_walk::changed_since(&p, since) {
                continue;
            }
            let aside = crate::protect::set_aside::set_aside(&p, "skarn-quarantine");
            out.push(format!(
                "{} was made or changed during the run at the top of the writable grant {}: {}; {}",
                p.display(),
                top.display(),
                en.reason,
                aside.describe("review it before renaming it back or running tools there")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_entries_at_a_grant_top_are_set_aside_and_old_ones_kept() {
        let t = skarn_test_support::TempDir::new("grant-tops");
        let top = t.dir("lib");
        let old = t.file("lib/.envrc", "old\n");
        let since = SystemTime::now() + std::time::Duration::from_millis(20);
        std::thread::sleep(std::time::Duration::from_millis(40));
        t.file("lib/rust-toolchain.toml", "[toolchain]\npath = \"/x\"\n");
        t.file("lib/src.rs", "fn main() {}\n");
        let lines = set_aside_new(std::slice::from_ref(&top), since);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("rust-toolchain.toml"), "{lines:?}");
        assert!(!top.join("rust-toolchain.toml").exists());
        assert!(old.exists() && top.join("src.rs").exists());
    }
}
