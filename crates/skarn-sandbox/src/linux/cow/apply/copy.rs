//! Putting an entry of the layer in the workspace: its owner, the
//! attributes overlayfs left on it, and a copy when a rename cannot be
//! made (the layer on another file system).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

/// Overlayfs's own attributes, never carried into the workspace.
const OVL_XATTRS: &[&str] = &[
    "user.overlay.origin",
    "user.overlay.impure",
    "user.overlay.opaque",
    "trusted.overlay.origin",
    "trusted.overlay.impure",
    "trusted.overlay.opaque",
];

pub(super) fn strip_xattrs(host: BorrowedFd<'_>, n: &OsStr, st: &rustix::fs::Stat) {
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return;
    }
    if let Ok(fd) = rustix::fs::openat(
        host,
        n,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        // (By /proc: an O_PATH descriptor takes no xattr calls.)
        let p = PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&fd)
        ));
        for x in OVL_XATTRS {
            let _ = rustix::fs::removexattr(&p, *x);
        }
    }
}

/// Give the workspace entry `fd` the owner and group of the layer's entry
/// `st`, as a rename does (a copy or a directory made by the helper would
/// be the helper's): root writing a workspace of another owner through the
/// mapped layer makes the owner's files (ADR 0226). An unprivileged helper
/// cannot and need not (the layer's entries are its own).
pub(super) fn own_like(fd: BorrowedFd<'_>, st: &rustix::fs::Stat) {
    let _ = rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(st.st_uid)),
        Some(rustix::fs::Gid::from_raw(st.st_gid)),
    );
}

/// [`own_like`] for the entry `n` of `dir`, never through a link.
fn own_at(dir: BorrowedFd<'_>, n: &OsStr, st: &rustix::fs::Stat) {
    let _ = rustix::fs::chownat(
        dir,
        n,
        Some(rustix::fs::Uid::from_raw(st.st_uid)),
        Some(rustix::fs::Gid::from_raw(st.st_gid)),
        AtFlags::SYMLINK_NOFOLLOW,
    );
}

/// Copy `n` from `upper` into `host` under a temporary name, then rename it
/// over the workspace's entry.
pub(super) fn copy(
    upper: BorrowedFd<'_>,
    host: BorrowedFd<'_>,
    n: &OsStr,
    st: &rustix::fs::Stat,
) -> io::Result<()> {
    let mut tmp = OsStr::new(".skarn-apply-").to_owned();
    let mut b = [0u8; 6];
    let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
    tmp.push(b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    let mode = Mode::from_raw_mode(st.st_mode & 0o7777);
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            let src = rustix::fs::openat(
                upper,
                n,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let dst = rustix::fs::openat(
                host,
                &tmp,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                mode,
            )?;
            own_like(dst.as_fd(), st);
            let (mut s, mut d) = (std::fs::File::from(src), std::fs::File::from(dst));
            if let Err(e) = io::copy(&mut s, &mut d).and_then(|_| {
                d.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode.bits()))
            }) {
                let _ = rustix::fs::unlinkat(host, &tmp, AtFlags::empty());
                return Err(e);
            }
        }
        FileType::Symlink => {
            let t = rustix::fs::readlinkat(upper, n, Vec::new())?;
            rustix::fs::symlinkat(t.as_c_str(), host, &tmp)?;
            own_at(host, &tmp, st);
        }
        FileType::Fifo => {
            rustix::fs::mknodat(host, &tmp, FileType::Fifo, mode, 0)?;
            own_at(host, &tmp, st);
        }
        _ => return Ok(()), // sockets and devices: not carried over
    }
    rustix::fs::renameat_with(host, &tmp, host, n, RenameFlags::empty()).inspect_err(|_| {
        let _ = rustix::fs::unlinkat(host, &tmp, AtFlags::empty());
    })?;
    Ok(())
}
