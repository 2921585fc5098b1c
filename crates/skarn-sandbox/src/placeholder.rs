//! Placeholders: the inodes a run puts at missing protected paths so they
//! cannot be created during the run (made by the helper's reservation
//! step, covered by init, recognised by the clean-up and by
//! [`crate::nested_git`]).

use std::path::{Path, PathBuf};

use crate::sys;

/// A placeholder is a unix-socket inode with exactly this mode (none):
/// creating and removing one touches no data block, git ignores it (so
/// `git status`/`git add -A` stay clean), and `open(2)` on it fails at once
/// with ENXIO for everyone, root included, so host tools never hang on it.
pub const PLACEHOLDER_MODE: u32 = 0o000;

/// The metadata of `path` if it is a placeholder made by a run.
pub fn is_placeholder(path: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let md = std::fs::symlink_metadata(path).ok()?;
    (md.file_type().is_socket() && md.permissions().mode() & 0o7777 == PLACEHOLDER_MODE)
        .then_some(md)
}

/// Create a socket inode at `path` with mode 000 (`mknod(S_IFSOCK)`: no
/// listener, no `sun_path` length limit, no privilege needed).
pub fn make_socket_inode(path: &Path) -> std::io::Result<()> {
    let c = sys::cstr(path.as_os_str())?;
    // SAFETY: valid path; S_IFSOCK needs no capability.
    sys::check(unsafe { libc::mknod(c.as_ptr(), libc::S_IFSOCK | PLACEHOLDER_MODE, 0) }).map(|_| ())
}

/// Makes the placeholders of one run. The first is a new socket inode;
/// the others are hard links to it where the kernel allows (same
/// filesystem), else new inodes: a link allocates no inode, which on ext4
/// makes reserving the ~20 missing persistence paths of a workspace about
/// three times cheaper. Every name is still a mode-000 socket that
/// [`is_placeholder`] recognises and the clean-up removes one by one.
#[derive(Default)]
pub struct PlaceholderMaker {
    first: Option<PathBuf>,
}

impl PlaceholderMaker {
    /// Put a placeholder at `path` (which must not exist).
    pub fn make(&mut self, path: &Path) -> std::io::Result<()> {
        if let Some(first) = &self.first
            && std::fs::hard_link(first, path).is_ok()
        {
            return Ok(());
        }
        make_socket_inode(path)?;
        if self.first.is_none() {
            self.first = Some(path.to_path_buf());
        }
        Ok(())
    }
}
