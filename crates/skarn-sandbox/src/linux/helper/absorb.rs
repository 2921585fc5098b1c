//! Write grants inside a copy-on-write layer (attack atk22h F23): a
//! `--write` directory below the workspace (`./build`, `./target`) or
//! below the workspace's `.git` under the direct mode's git layer was
//! bound on top of the layer, so its writes reached the host directly and
//! nobody vetted them (`.envrc`, `.cargo/config.toml`, a new repository's
//! `core.fsmonitor`, the workspace's own `.git/config`). On the layer's
//! file system such a grant adds nothing the layer does not already give
//! (the layer is writable there): its bind is left out and the layer
//! takes its writes, vetted like every other change of the workspace. A
//! grant that is another mount (the layer does not show it) keeps its
//! bind and gets the checks of the other writable grants.

use std::path::Path;

/// Whether the writable grant `path` lies in `base` (a layered place:
/// the workspace, or its `.git` under the git layer) on `base`'s own
/// mount, so that the layer over `base` shows it and takes its writes.
/// A missing path counts by its nearest existing ancestor.
pub(super) fn absorbed(base: &Path, path: &Path) -> bool {
    if !path.starts_with(base) {
        return false;
    }
    let Some(at) = path
        .ancestors()
        .find(|a| std::fs::symlink_metadata(a).is_ok())
    else {
        return true;
    };
    match (mount_of(base), mount_of(at)) {
        (Some(a), Some(b)) => a == b,
        // (Unreadable: keep the bind and its checks.)
        _ => false,
    }
}

/// The mount (its id, else the device) `p` is on, links not followed.
fn mount_of(p: &Path) -> Option<(bool, u64)> {
    use rustix::fs::{AtFlags, CWD, StatxFlags};
    let s = rustix::fs::statx(
        CWD,
        p,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::MNT_ID | StatxFlags::BASIC_STATS,
    )
    .ok()?;
    if s.stx_mask & StatxFlags::MNT_ID.bits() != 0 {
        return Some((true, s.stx_mnt_id));
    }
    let dev = (u64::from(s.stx_dev_major) << 32) | u64::from(s.stx_dev_minor);
    Some((false, dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_on_the_same_mount_is_absorbed() {
        let t = skarn_test_support::TempDir::new("absorb");
        let ws = t.dir("ws");
        t.dir("ws/build");
        assert!(absorbed(&ws, &ws.join("build")));
        assert!(absorbed(&ws, &ws.join("missing/deeper")));
        assert!(!absorbed(&ws, t.path()));
        if Path::new("/proc/self").is_dir() {
            // Another mount below a directory is not absorbed.
            assert!(!absorbed(Path::new("/"), Path::new("/proc/self")));
        }
    }
}
