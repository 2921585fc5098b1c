//! Placeholders: the inodes a run puts at missing protected paths so they
//! cannot be created during the run (made by the helper's reservation
//! step, covered by init, recognised by the clean-up and by
//! [`crate::protect::git::nested_git`]).

use std::path::Path;

use crate::linux::sys;

/// A placeholder is a unix-socket inode with exactly this mode (none):
/// creating and removing one touches no data block, git ignores it (so
/// `git status`/`git add -A` stay clean), and `open(2)` on it fails at once
/// with ENXIO for everyone, root included, so host tools never hang on it.
pub(crate) const PLACEHOLDER_MODE: u32 = 0o000;

/// The metadata of `path` if it is a placeholder made by a run.
pub fn is_placeholder(path: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let md = std::fs::symlink_metadata(path).ok()?;
    (md.file_type().is_socket() && md.permissions().mode() & 0o7777 == PLACEHOLDER_MODE)
        .then_some(md)
}

/// Create a socket inode at `path` with mode 000 (`mknod(S_IFSOCK)`: no
/// listener, no `sun_path` length limit, no privilege needed).
pub(crate) fn make_socket_inode(path: &Path) -> std::io::Result<()> {
    let c = sys::cstr(path.as_os_str())?;
    // SAFETY: valid path; S_IFSOCK needs no capability.
    sys::check(unsafe { libc::mknod(c.as_ptr(), libc::S_IFSOCK | PLACEHOLDER_MODE, 0) }).map(|_| ())
}
