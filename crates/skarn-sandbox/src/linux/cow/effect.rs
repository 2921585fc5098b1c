//! Whether applying a layer can change anything in the workspace (ADR
//! 0259): the protections only the walk of the workspace finds (nested
//! repositories' files, what a nested `.envrc` sources, what a nested
//! repository's configuration names) decide nothing for a layer that
//! holds only directories the workspace already has, with the same mode:
//! applying such a layer makes, changes and removes nothing (see
//! [`super::apply`]), so the walk is not needed for it.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{FileType, OFlags};

use super::apply::{is_opaque, is_whiteout, list, lstat_at, open_dir};

/// Levels looked at; a deeper layer counts as a change.
const MAX_DEPTH: usize = 64;

/// Whether applying the layer whose upper directory is `upper` to the
/// workspace `ws` may make, change or remove anything there: any entry
/// that is not a directory (a file, a link, a whiteout), a directory the
/// workspace lacks, has as another kind or with other mode bits, or an
/// opaque one (it removes the workspace's entries). Anything that cannot
/// be read counts as a change.
pub fn changes_workspace(upper: &Path, ws: &Path) -> bool {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let (Ok(u), Ok(h)) = (
        rustix::fs::open(upper, flags, rustix::fs::Mode::empty()),
        rustix::fs::open(ws, flags, rustix::fs::Mode::empty()),
    ) else {
        return true;
    };
    dir_changes(u.as_fd(), h.as_fd(), 0)
}

fn dir_changes(upper: BorrowedFd<'_>, host: BorrowedFd<'_>, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return true;
    }
    let Ok(names) = list(upper) else {
        return true;
    };
    for n in &names {
        let Some(st) = lstat_at(upper, n) else {
            return true;
        };
        if is_whiteout(&st) || FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return true;
        }
        let Some(there) = lstat_at(host, n) else {
            return true;
        };
        if FileType::from_raw_mode(there.st_mode) != FileType::Directory
            || there.st_mode & 0o7777 != st.st_mode & 0o7777
        {
            return true;
        }
        let (Ok(u), Ok(h)) = (open_dir(upper, n), open_dir(host, n)) else {
            return true;
        };
        if is_opaque(u.as_fd()) || dir_changes(u.as_fd(), h.as_fd(), depth + 1) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::changes_workspace;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_matching_empty_directories_change_nothing() {
        let t = tempfile::tempdir().unwrap();
        let (u, w) = (t.path().join("u"), t.path().join("w"));
        std::fs::create_dir_all(u.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(w.join(".git/hooks")).unwrap();
        std::fs::write(w.join(".git/hooks/x"), "host").unwrap();
        for d in [".git", ".git/hooks"] {
            let m = std::fs::metadata(w.join(d)).unwrap().permissions().mode();
            std::fs::set_permissions(u.join(d), std::fs::Permissions::from_mode(m)).unwrap();
        }
        assert!(!changes_workspace(&u, &w));
        // A file, a new directory, another mode: changes.
        std::fs::write(u.join(".git/hooks/pre-commit"), "x").unwrap();
        assert!(changes_workspace(&u, &w));
        std::fs::remove_file(u.join(".git/hooks/pre-commit")).unwrap();
        std::fs::create_dir(u.join("new")).unwrap();
        assert!(changes_workspace(&u, &w));
        std::fs::remove_dir(u.join("new")).unwrap();
        std::fs::set_permissions(u.join(".git/hooks"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        assert!(changes_workspace(&u, &w));
        std::fs::set_permissions(u.join(".git/hooks"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(w.join(".git/hooks"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert!(!changes_workspace(&u, &w));
        // A symbolic link, and an unreadable upper: changes.
        std::os::unix::fs::symlink("/", u.join("l")).unwrap();
        assert!(changes_workspace(&u, &w));
        assert!(changes_workspace(&t.path().join("missing"), &w));
    }
}
