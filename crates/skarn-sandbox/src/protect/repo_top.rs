//! The files host git (or a hook manager git runs) reads at the top of
//! every repository's work tree, not only the workspace's (attack atk22j
//! F8, F9: in a nested repository `vendor/foo` or a project of a
//! workspace holding several, the run wrote `.husky/pre-commit`,
//! `.pre-commit-config.yaml`, `lefthook.yml`, and a `.gitmodules` with a
//! URL of its choice; the host's next `git commit` or `git submodule
//! update` there ran or fetched what it named). ADR 0292.
//!
//! At a nested repository's top: existing ones are kept read-only (direct
//! mode) and new ones set aside after the run; the copy-on-write layer
//! refuses a change to them, a `.gitmodules` vetted item by item as the
//! workspace's is.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::protect::persistence::{ENTRIES, Entry, Reserve};
use crate::protect::persistence_families::LEFTHOOK;

/// The [`ENTRIES`] read at every repository's top (besides the family of
/// lefthook's files).
const AT_EVERY_TOP: &[&str] = &[
    ".gitmodules",
    ".lfsconfig",
    ".husky",
    ".pre-commit-config.yaml",
];

/// Whether `en` is read at the top of every repository.
pub fn at_every_top(en: &Entry) -> bool {
    AT_EVERY_TOP.contains(&en.path) || en.reserve == Reserve::IfAny(LEFTHOOK)
}

/// The entry that `rest` (names below a repository's top) is, or lies
/// below.
pub fn entry_of(rest: &[&OsStr]) -> Option<&'static Entry> {
    let rest: PathBuf = rest.iter().collect();
    ENTRIES
        .iter()
        .filter(|en| at_every_top(en))
        .find(|en| rest.starts_with(en.path))
}

/// The entries of `top` (a repository's work tree) that exist.
pub fn existing(top: &Path) -> Vec<PathBuf> {
    ENTRIES
        .iter()
        .filter(|en| at_every_top(en))
        .map(|en| top.join(en.path))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect()
}

/// After the run: set aside each entry at the top of `tops` made or
/// changed since `since`; one line each.
pub fn set_aside_new(tops: &[PathBuf], since: SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for top in tops {
        for en in ENTRIES.iter().filter(|en| at_every_top(en)) {
            let p = top.join(en.path);
            if !crate::protect::grant_walk::changed_since(&p, since) {
                continue;
            }
            let aside = crate::protect::set_aside::set_aside(&p, "skarn-quarantine");
            out.push(format!(
                "{} was made or changed during the run at the top of the repository {}: {}; {}",
                p.display(),
                top.display(),
                en.reason,
                aside.describe("review it before renaming it back or running git there")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_manager_files_are_found_below_a_repository_top() {
        fn n(s: &str) -> Vec<&OsStr> {
            s.split('/').map(OsStr::new).collect()
        }
        for p in [
            ".husky/pre-commit",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            ".config/lefthook.yml",
            ".gitmodules",
            ".lfsconfig",
        ] {
            assert!(entry_of(&n(p)).is_some(), "{p}");
        }
        for p in ["src/main.rs", ".husky-old", "README.md"] {
            assert!(entry_of(&n(p)).is_none(), "{p}");
        }
        let t = skarn_test_support::TempDir::new("repo-top");
        let top = t.dir("p");
        let since = SystemTime::now() + std::time::Duration::from_millis(20);
        std::thread::sleep(std::time::Duration::from_millis(40));
        t.file("p/.husky/pre-commit", "x\n");
        t.file("p/src.rs", "fn main() {}\n");
        assert_eq!(existing(&top), vec![top.join(".husky")]);
        let lines = set_aside_new(std::slice::from_ref(&top), since);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!top.join(".husky").exists() && top.join("src.rs").exists());
    }
}
