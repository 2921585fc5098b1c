//! Bind mounts that never follow a symlink, in the source or the target
//! path. A grant is canonical when planned, but a concurrent run in the same
//! tree could swap one of its components for a symlink between that check
//! and the mount (a race an attack won in 3 of 200 tries): both ends are
//! therefore opened with `openat2(RESOLVE_NO_SYMLINKS)` and the mount is
//! made between the two descriptors (`open_tree` + `move_mount`), so what
//! is mounted is exactly what was opened.
//!
//! Written with raw syscalls because neither the `libc` wrappers nor
//! `rustix` (in the version this workspace uses) expose `open_tree` /
//! `move_mount` / `mount_setattr` on descriptors as one safe call.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::Path;

use crate::linux::sys::{check, cstr};

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x04;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

/// `struct open_how` for openat2(2).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// `struct mount_attr` for mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    let fd = check(fd as libc::c_int)?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An `O_PATH` descriptor of `p`, refusing any symlink on the way (ELOOP).
pub(crate) fn open_nofollow(p: &Path) -> io::Result<OwnedFd> {
    let c = cstr(p.as_os_str())?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: c is a valid path; how is a properly sized open_how.
    owned(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })
}

/// Bind the symbolic link `p` onto itself (its parents opened following no
/// symlink): the link becomes a mount point, which no rename or unlink
/// can take away or re-point, so a protected name that is a link keeps
/// leading where it led (a `.git -> .repo/projects/p.git`).
pub fn pin_link(p: &Path) -> io::Result<()> {
    let c = cstr(p.as_os_str())?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: c is a valid path; how is a properly sized open_how. With
    // O_PATH | O_NOFOLLOW a trailing link is opened itself.
    let link = owned(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })?;
    let empty = c"";
    // SAFETY: link is an open descriptor, empty a valid C string.
    let tree = owned(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            link.as_raw_fd(),
            empty.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint,
        )
    })?;
    attach_to(&tree, &link)
}

/// Bind `src` onto `dst` (recursively) with mount attributes `set`
/// (`MOUNT_ATTR_*`), following no symlink in either path.
pub fn bind(src: &Path, dst: &Path, set: u64) -> io::Result<()> {
    let tree = clone_tree(src, set, None)?;
    attach(&tree, dst)
}

/// A detached recursive copy of the mount tree at `src` (opened following
/// no symlink) with mount attributes `set`; with `userns`, also
/// `MOUNT_ATTR_IDMAP` through that user namespace's id maps (see
/// [`crate::linux::idmap`]). Closing the descriptor unattached discards the copy.
pub(crate) fn clone_tree(
    src: &Path,
    set: u64,
    userns: Option<BorrowedFd<'_>>,
) -> io::Result<OwnedFd> {
    let s = open_nofollow(src)?;
    let empty = c"";
    // SAFETY: s is an open descriptor, empty a valid C string.
    let tree = owned(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            s.as_raw_fd(),
            empty.as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_EMPTY_PATH as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint,
        )
    })?;
    let attr = MountAttr {
        attr_set: set | userns.map_or(0, |_| MOUNT_ATTR_IDMAP),
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns.map_or(0, |u| u.as_raw_fd() as u64),
    };
    // SAFETY: tree is an open mount descriptor; attr is properly sized.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            empty.as_ptr(),
            (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    } as libc::c_int)?;
    Ok(tree)
}

/// Add mount attributes `set` to every mount of a detached tree.
pub(crate) fn set_tree_attrs(tree: &OwnedFd, set: u64) -> io::Result<()> {
    let empty = c"";
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: tree is an open mount descriptor; attr is properly sized.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            empty.as_ptr(),
            (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    } as libc::c_int)
    .map(|_| ())
}

/// Attach a detached tree (from [`clone_tree`]) at `dst`, opened following
/// no symlink.
pub fn attach(tree: &OwnedFd, dst: &Path) -> io::Result<()> {
    attach_to(tree, &open_nofollow(dst)?)
}

/// Attach a detached tree onto exactly what `d` (an `O_PATH` descriptor)
/// opened, wherever its name now leads.
pub(crate) fn attach_to(tree: &OwnedFd, d: &OwnedFd) -> io::Result<()> {
    let empty = c"";
    // SAFETY: both descriptors are open; empty paths select them.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            empty.as_ptr(),
            d.as_raw_fd(),
            empty.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    } as libc::c_int)?;
    Ok(())
}
