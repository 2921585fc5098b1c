//! Hiding a host server's unix socket the walk pinned by its identity,
//! so a rename between the check and the mount cannot move it away.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use super::primitives::{bind, under};
use super::{MountError, NEW};
use crate::linux::sys::{MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};

/// Set when a host server's socket the walk found was not where it was by
/// the time init hid it ([`mask_pinned_socket`]): the target then makes no
/// unix socket (read by [`socket_moved`] after the mounts, in the target
/// forked from init).
static SOCKET_MOVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a pinned socket had moved (see [`SOCKET_MOVED`]).
pub(crate) fn socket_moved() -> bool {
    SOCKET_MOVED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The identities a pinned socket found with (device, inode) `id` may
/// have once mounted: itself, or, below a copy-on-write layer of device
/// `layer`, that device with its inode (overlayfs without `xino`).
pub(super) fn id_in(id: (u64, u64), layer: Option<u64>) -> [(u64, u64); 2] {
    [id, layer.map_or(id, |d| (d, id.1))]
}

/// Hide the host server's socket found at `path` with (device, inode)
/// `id`: its name is opened (no symlink followed) and checked to be that
/// inode, and the placeholder is mounted through that descriptor, so a
/// rename between the check and the mount cannot move the socket out from
/// under it (attack atk24e F1). Anything else there: the socket moved
/// (a concurrent run renamed a directory) and the run makes no unix
/// socket.
pub(super) fn mask_pinned_socket(
    path: &Path,
    id: [(u64, u64); 2],
    notes: &mut Vec<String>,
) -> Result<(), MountError> {
    use std::os::unix::fs::MetadataExt;
    let dst = under(NEW, path);
    let opened = crate::linux::fdmount::open_nofollow(&dst)
        .ok()
        .and_then(|fd| {
            let md = std::fs::File::from(fd.try_clone().ok()?).metadata().ok()?;
            (id.contains(&(md.dev(), md.ino())) && md.file_type().is_socket()).then_some(fd)
        });
    let Some(fd) = opened else {
        SOCKET_MOVED.store(true, std::sync::atomic::Ordering::Relaxed);
        notes.push(format!(
            "the host server's unix socket {} was moved while the run was set up (another run \
             renamed a directory?): this run makes no unix socket",
            path.display()
        ));
        return Ok(());
    };
    let tree = crate::linux::fdmount::clone_tree(
        Path::new("/empty.s"),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        None,
    );
    match tree.and_then(|t| crate::linux::fdmount::attach_to(&t, &fd)) {
        Ok(()) => Ok(()),
        // Kernels without the new mount API: by path, checked once more.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            bind(Path::new("/empty.s"), &dst, false)
        }
        Err(e) => Err(MountError {
            what: "bind onto a pinned socket",
            path: dst.display().to_string(),
            err: e,
        }),
    }
}
