//! The mount primitives the root is built from: mount points made like
//! their source, tmpfs, and bind mounts that follow no symlink.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::{MountError, ctx};
use crate::linux::sys::{
    self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY,
};

pub(super) fn under(base: &str, p: &Path) -> PathBuf {
    let rel = p.strip_prefix("/").unwrap_or(p);
    Path::new(base).join(rel)
}

pub(super) fn mkdir_p(p: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(p)
}

pub(super) fn touch(p: &Path) -> io::Result<()> {
    if let Some(parent) = p.parent() {
        mkdir_p(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Create the mountpoint `dst` matching the kind of `src` (dir or file).
pub(super) fn mountpoint_like(src: &Path, dst: &Path) -> io::Result<()> {
    if std::fs::metadata(src)?.is_dir() {
        mkdir_p(dst)
    } else {
        touch(dst)
    }
}

/// Mount a fresh tmpfs at `dst` (which must exist) with `flags` and `opts`.
pub(super) fn tmpfs(dst: &Path, flags: libc::c_ulong, opts: &str) -> Result<(), MountError> {
    ctx(
        sys::mount(
            Some(Path::new("tmpfs")),
            dst,
            Some("tmpfs"),
            flags,
            Some(opts),
        ),
        "mount tmpfs",
        dst,
    )
}

pub(super) fn bind(src: &Path, dst: &Path, writable: bool) -> Result<(), MountError> {
    bind_with(src, dst, writable, false)
}

/// Bind the host's `path` (at `src` in the set-up root) read-only at
/// `dst` through the id mapping of [`crate::linux::idmap`]; `noexec` when asked.
pub(super) fn bind_idmapped(
    path: &Path,
    src: &Path,
    dst: &Path,
    noexec: bool,
) -> Result<(), MountError> {
    ctx(mountpoint_like(src, dst), "mkdir", dst)?;
    let mut set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if noexec {
        set |= MOUNT_ATTR_NOEXEC;
    }
    ctx(
        crate::linux::idmap::bind(path, src, dst, set),
        "idmapped bind",
        dst,
    )
}

/// Bind `src` at `dst`; read-only unless `writable`, `noexec` when asked
/// (mount flags enforce read-only/no-exec even where a broader Landlock
/// rule, such as the one on /tmp, covers the path).
pub(super) fn bind_with(
    src: &Path,
    dst: &Path,
    writable: bool,
    noexec: bool,
) -> Result<(), MountError> {
    ctx(mountpoint_like(src, dst), "mkdir", dst)?;
    bind_onto(src, dst, writable, noexec)
}

/// [`bind`] onto a `dst` that exists (just examined by the caller): no
/// mount point to make.
pub(super) fn bind_existing(src: &Path, dst: &Path, writable: bool) -> Result<(), MountError> {
    bind_onto(src, dst, writable, false)
}

pub(super) fn bind_onto(
    src: &Path,
    dst: &Path,
    writable: bool,
    noexec: bool,
) -> Result<(), MountError> {
    let mut set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if !writable {
        set |= MOUNT_ATTR_RDONLY;
    }
    if noexec {
        set |= MOUNT_ATTR_NOEXEC;
    }
    // Mount exactly what is opened, through no symlink (see fdmount).
    match crate::linux::fdmount::bind(src, dst, set) {
        Ok(()) => return Ok(()),
        // Kernels without openat2 / the new mount API: bind by path.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
        Err(e) => {
            return Err(MountError {
                what: "bind (no symlinks)",
                path: dst.display().to_string(),
                err: e,
            });
        }
    }
    ctx(
        sys::mount(Some(src), dst, None, libc::MS_BIND | libc::MS_REC, None),
        "bind",
        dst,
    )?;
    ctx(sys::mount_setattr(dst, set, true), "mount_setattr", dst)
}
