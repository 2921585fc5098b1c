//! Reading and removing entries of the layer and the workspace by
//! directory descriptors, never through a link.

use std::ffi::{CStr, OsStr};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};

use super::MAX_DEPTH;

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Open the directory `name` of `at`: never through a link, never onto
/// another mount (a host mount inside the workspace is not the
/// workspace's).
pub(in crate::linux::cow) fn open_dir(at: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    let how = ResolveFlags::NO_XDEV | ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH;
    match rustix::fs::openat2(at, name, DIR_FLAGS, Mode::empty(), how) {
        Err(rustix::io::Errno::NOSYS) => {
            let fd = rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty())?;
            let (a, b) = (rustix::fs::fstat(at)?, rustix::fs::fstat(&fd)?);
            if a.st_dev != b.st_dev {
                return Err(io::Error::from_raw_os_error(libc::EXDEV));
            }
            Ok(fd)
        }
        r => Ok(r?),
    }
}

/// Whether the directory `d` is a git directory (a `.git`, a bare
/// repository, a submodule's or worktree's git directory).
pub(super) fn is_git_dir(d: BorrowedFd<'_>) -> bool {
    let has = |n: &str| lstat_at(d, OsStr::new(n)).is_some();
    has("HEAD") && (has("objects") || has("commondir"))
}

/// Whether the merged view of `upper` over `host` (what host git sees
/// once the layer is applied) is a git directory: an entry counts if the
/// layer has it (not a whiteout), or the host has it and the layer
/// neither whites it out nor hides the host's directory (opaque). Asked
/// of each side alone, a repository put together over two runs (`objects`
/// in the first, `HEAD` in the second) was neither (attack atk22h F7).
pub(super) fn is_git_dir_merged(upper: BorrowedFd<'_>, host: Option<BorrowedFd<'_>>) -> bool {
    let opaque = is_opaque(upper);
    let has = |n: &str| match lstat_at(upper, OsStr::new(n)) {
        Some(st) => !is_whiteout(&st),
        None => !opaque && host.is_some_and(|h| lstat_at(h, OsStr::new(n)).is_some()),
    };
    has("HEAD") && (has("objects") || has("commondir"))
}

/// Whether `st` was changed at or after `since` (seconds, nanoseconds).
pub(in crate::linux::cow) fn changed_since(st: &rustix::fs::Stat, since: (i64, i64)) -> bool {
    // (`st_ctime` is an i64 on every 64-bit Linux target.)
    #[allow(clippy::useless_conversion)]
    let sec = i64::try_from(st.st_ctime).unwrap_or(i64::MAX);
    let nsec = i64::try_from(st.st_ctime_nsec).unwrap_or(0);
    (sec, nsec) >= since
}

pub(in crate::linux::cow) fn lstat_at(
    at: BorrowedFd<'_>,
    name: &OsStr,
) -> Option<rustix::fs::Stat> {
    rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW).ok()
}

pub(in crate::linux::cow) fn is_whiteout(st: &rustix::fs::Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice && st.st_rdev == 0
}

pub(in crate::linux::cow) fn is_opaque(dir: BorrowedFd<'_>) -> bool {
    let mut b = [0u8; 4];
    ["user.overlay.opaque", "trusted.overlay.opaque"]
        .iter()
        .any(|n| matches!(rustix::fs::fgetxattr(dir, *n, &mut b), Ok(1) if b[0] == b'y'))
}

/// The names in a directory (without `.` and `..`).
pub(in crate::linux::cow) fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<std::ffi::OsString>> {
    let fd = rustix::fs::openat(dir, c".", DIR_FLAGS, Mode::empty())?;
    let mut d = rustix::fs::Dir::new(fd)?;
    let mut out = Vec::new();
    while let Some(e) = d.read() {
        let e = e?;
        let n: &CStr = e.file_name();
        if n != c"." && n != c".." {
            out.push(OsStr::from_bytes(n.to_bytes()).to_owned());
        }
    }
    out.sort();
    Ok(out)
}

/// Remove the entry `name` of `dir` and, for a directory, all it holds,
/// without following links.
pub(in crate::linux::cow) fn remove_tree(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    depth: usize,
) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    if depth > MAX_DEPTH {
        return Err(io::Error::other("too deep"));
    }
    let sub = open_dir(dir, name)?;
    for n in list(sub.as_fd())? {
        remove_tree(sub.as_fd(), &n, depth + 1)?;
    }
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}
