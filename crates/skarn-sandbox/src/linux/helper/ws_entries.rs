//! The workspace's own entries, listed once by the reservation step: most
//! persistence paths (`.envrc`, `.vscode`, `lefthook.yml`, ...) are direct
//! children of the workspace, so one directory read answers whether each
//! exists instead of one `lstat` per name (about 90 fewer system calls for
//! a fresh repository). Paths deeper down are still examined one by one.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Above this many entries the listing is dropped and every name is
/// examined on its own (reading a huge directory would cost more).
const MAX_ENTRIES: usize = 4096;

/// The names directly in one directory, each with whether it is a socket
/// (the kind of a run's placeholder).
pub(super) struct WsEntries {
    dir: PathBuf,
    names: Option<HashMap<OsString, bool>>,
}

impl WsEntries {
    /// List `dir` (nothing listed when it cannot be read or is too big).
    pub(super) fn read(dir: &Path) -> WsEntries {
        WsEntries {
            dir: dir.to_path_buf(),
            names: list(dir),
        }
    }

    /// The listing's answer for `p` when `p` is directly in the directory:
    /// `Some(None)` absent, `Some(Some(is_socket))` present.
    fn lookup(&self, p: &Path) -> Option<Option<bool>> {
        let names = self.names.as_ref()?;
        if p.parent() != Some(self.dir.as_path()) {
            return None;
        }
        Some(names.get(p.file_name()?).copied())
    }

    /// Whether `p` exists (as `lstat` would say).
    pub(super) fn exists(&self, p: &Path) -> bool {
        match self.lookup(p) {
            Some(found) => found.is_some(),
            None => std::fs::symlink_metadata(p).is_ok(),
        }
    }

    /// Whether `p` could be a placeholder (false only for an entry the
    /// listing saw that is not a socket).
    pub(super) fn may_be_placeholder(&self, p: &Path) -> bool {
        !matches!(self.lookup(p), Some(Some(false)))
    }
}

fn list(dir: &Path) -> Option<HashMap<OsString, bool>> {
    use std::os::unix::fs::FileTypeExt;
    let mut names = HashMap::new();
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        if names.len() == MAX_ENTRIES {
            return None;
        }
        let is_socket = e.file_type().ok()?.is_socket();
        names.insert(e.file_name(), is_socket);
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_for_direct_children_like_lstat() {
        let tmp = skarn_test_support::TempDir::new("wsent");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join(".envrc"), "").unwrap();
        std::os::unix::fs::symlink("/nowhere", d.join("dangling")).unwrap();
        crate::protect::placeholder::make_socket_inode(&d.join(".vscode")).unwrap();
        let w = WsEntries::read(&d);
        for name in [
            ".envrc", "sub", "dangling", ".vscode", "missing", "sub/x", "sub/..",
        ] {
            let p = d.join(name);
            assert_eq!(
                w.exists(&p),
                std::fs::symlink_metadata(&p).is_ok(),
                "{name}"
            );
        }
        assert!(!w.may_be_placeholder(&d.join(".envrc")));
        assert!(w.may_be_placeholder(&d.join(".vscode")));
        assert!(w.may_be_placeholder(&d.join("missing")));
        assert!(w.may_be_placeholder(&d.join("sub/x")));
        // Made after the listing: not seen, so the answer says absent.
        std::fs::write(d.join("later"), "").unwrap();
        assert!(!w.exists(&d.join("later")));
    }
}
