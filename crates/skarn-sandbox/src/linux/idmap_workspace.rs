//! Root in a workspace owned by another uid (a CI container's checkout, a
//! bind-mounted repository, a tree unpacked by `tar x` as root): the
//! command runs as uid 0 with every capability dropped, so without
//! `CAP_DAC_OVERRIDE` the owner's files (mode 0644, directories 0755) are
//! read-only to it, while root writes them bare (ADR 0180).
//!
//! The workspace is then bound through an id mapping that swaps the
//! owner and root: on-disk uid (gid) `owner` is uid (gid) 0 inside, on-disk
//! 0 is `owner`, every other id is itself. The command owns the
//! workspace's files inside and writes them by their mode bits; what it
//! creates belongs to the workspace's owner on disk (as `git` and editors
//! of that owner expect). No capability is kept: files of other owners
//! stay as writable as their mode says, and the mapping holds for this
//! one bind only (the rest of the new root is unchanged).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::linux::sys::{MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID};

/// Largest id a map may name (4294967295 is the invalid id).
const LAST_ID: u64 = 4_294_967_294;

/// The user namespace made by [`prepare`] and the workspace it is for.
static PREPARED: Mutex<Option<(PathBuf, OwnedFd)>> = Mutex::new(None);

/// The map lines (`on-disk shown count`) that swap `owner` and 0 and keep
/// every other id.
pub(crate) fn swap_map(owner: u32) -> String {
    if owner == 0 {
        return format!("0 0 {}\n", LAST_ID + 1);
    }
    let o = u64::from(owner);
    let mut s = format!("{o} 0 1\n0 {o} 1\n");
    if o > 1 {
        s.push_str(&format!("1 1 {}\n", o - 1));
    }
    if o < LAST_ID {
        s.push_str(&format!("{} {} {}\n", o + 1, o + 1, LAST_ID - o));
    }
    s
}

/// Make the user namespace for the workspace `ws` owned by `uid`:`gid`.
/// Called by the helper before it unshares anything (see
/// [`crate::linux::idmap::prepare`] for why).
pub fn prepare(ws: &Path, uid: u32, gid: u32) -> io::Result<()> {
    let ns = crate::linux::idmap::userns_with(&swap_map(uid), &swap_map(gid))?;
    *PREPARED.lock().unwrap_or_else(|e| e.into_inner()) = Some((ws.to_path_buf(), ns));
    Ok(())
}

/// [`prepare`] for the workspace `ws`'s owner and group, as they are now.
pub(crate) fn prepare_for(ws: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(ws)?;
    prepare(ws, m.uid(), m.gid())
}

/// Bind `src` (the host's `path`, seen from the set-up root) read-write
/// at `dst` through the prepared mapping, when `path` is the workspace it
/// was prepared for (None otherwise).
pub fn bind(path: &Path, src: &Path, dst: &Path) -> Option<io::Result<()>> {
    let guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    let (ws, ns) = guard.as_ref()?;
    if ws != path {
        return None;
    }
    Some(
        crate::linux::fdmount::clone_tree(
            src,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            Some(ns.as_fd()),
        )
        .and_then(|t| crate::linux::fdmount::attach(&t, dst)),
    )
}

/// Whether a mapping was prepared for the workspace `ws` (then its
/// copy-on-write layer is stacked on mapped mounts, ADR 0226).
pub(crate) fn prepared_for(ws: &Path) -> bool {
    let guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_ref().is_some_and(|(w, _)| w == ws)
}

/// A detached copy of `src` seen through the prepared mapping, when the
/// mapping was prepared for the workspace `path` (None otherwise): the
/// workspace as the layer's lower directory, and the layer's own directory
/// (its upper and work directories, which the helper gave the owner), so
/// that what the command makes through the layer is the owner's on disk.
pub(crate) fn mapped_tree(path: &Path, src: &Path) -> Option<io::Result<OwnedFd>> {
    let guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    let (ws, ns) = guard.as_ref()?;
    if ws != path {
        return None;
    }
    Some(crate::linux::fdmount::clone_tree(
        src,
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        Some(ns.as_fd()),
    ))
}

/// Drop the prepared namespace (the helper, once init has its copy).
pub fn release() {
    *PREPARED.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_swaps_owner_and_root_and_keeps_the_rest() {
        assert_eq!(
            swap_map(1234),
            "1234 0 1\n0 1234 1\n1 1 1233\n1235 1235 4294966060\n"
        );
        assert_eq!(swap_map(1), "1 0 1\n0 1 1\n2 2 4294967293\n");
        assert_eq!(swap_map(0), "0 0 4294967295\n");
    }
}
