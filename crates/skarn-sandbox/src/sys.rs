//! Thin safe wrappers over the raw syscalls the helper needs (mounts,
//! fork, exec, signals). Namespaces, capabilities, limits, Landlock and
//! seccomp come from the confinement kit (`skarn-confine`) instead.
//!
//! Raw `libc` is used (rather than a higher-level crate) because these
//! calls run in a freshly forked child right before `execve`, where we want
//! exactly one syscall per step and no hidden work.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Convert a path to a C string (paths never contain NUL on Linux).
pub fn cstr(p: impl AsRef<OsStr>) -> io::Result<CString> {
    CString::new(p.as_ref().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Map a `-1` return to `io::Error`.
pub fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// mount(2).
pub fn mount(
    src: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let src = src.map(|s| cstr(s.as_os_str())).transpose()?;
    let target = cstr(target.as_os_str())?;
    let fstype = fstype.map(cstr).transpose()?;
    let data = data.map(cstr).transpose()?;
    let p = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: all pointers are valid NUL-terminated strings or NULL.
    check(unsafe {
        libc::mount(
            p(&src),
            target.as_ptr(),
            p(&fstype),
            flags,
            p(&data) as *const libc::c_void,
        )
    })
    .map(|_| ())
}

/// `struct mount_attr` for mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// MOUNT_ATTR_RDONLY.
pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// MOUNT_ATTR_NOSUID.
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// MOUNT_ATTR_NODEV.
pub const MOUNT_ATTR_NODEV: u64 = 0x4;
/// MOUNT_ATTR_NOEXEC.
pub const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// mount_setattr(2) on `target` (recursively when `recursive`).
pub fn mount_setattr(target: &Path, set: u64, recursive: bool) -> io::Result<()> {
    let t = cstr(target.as_os_str())?;
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 } as libc::c_uint;
    // SAFETY: t is a valid path, attr is a properly sized mount_attr.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            t.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(r as libc::c_int).map(|_| ())
}

/// pivot_root(2).
pub fn pivot_root(new_root: &Path, put_old: &Path) -> io::Result<()> {
    let a = cstr(new_root.as_os_str())?;
    let b = cstr(put_old.as_os_str())?;
    // SAFETY: valid NUL-terminated paths.
    check(unsafe { libc::syscall(libc::SYS_pivot_root, a.as_ptr(), b.as_ptr()) } as libc::c_int)
        .map(|_| ())
}

/// umount2(2).
pub fn umount2(target: &Path, flags: libc::c_int) -> io::Result<()> {
    let t = cstr(target.as_os_str())?;
    // SAFETY: valid path.
    check(unsafe { libc::umount2(t.as_ptr(), flags) }).map(|_| ())
}

/// unshare(2), through the confinement kit.
pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    use skarn_confine::namespaces::{UnshareFlags, unshare};
    unshare(UnshareFlags::from_bits_retain(flags as u32))
}

/// fork(2). Only call from a single-threaded process.
pub fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: callers are single-threaded (the helper is a fresh exec).
    let r = unsafe { libc::fork() };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Write `data` to an existing file (procfs/cgroupfs friendly: one write).
pub fn write_file(path: &Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(data)
}

/// chdir(2).
pub fn chdir(p: &Path) -> io::Result<()> {
    let c = cstr(p.as_os_str())?;
    // SAFETY: valid path.
    check(unsafe { libc::chdir(c.as_ptr()) }).map(|_| ())
}

/// Write raw bytes to a descriptor, ignoring errors (diagnostics only).
pub fn write_fd(fd: libc::c_int, data: &[u8]) {
    // SAFETY: data is a valid buffer of data.len() bytes.
    let _ = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
}

/// _exit(2): leave without running destructors or atexit handlers.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns.
    unsafe { libc::_exit(code) }
}

/// kill(2), errors ignored.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill takes integers only.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Turn a wait status into a shell-style exit code (128+N for signal N).
pub fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// execve(2); returns only on failure.
pub fn execve(path: &CStr, argv: &[CString], envp: &[CString]) -> io::Error {
    let mut a: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    a.push(std::ptr::null());
    let mut e: Vec<*const libc::c_char> = envp.iter().map(|c| c.as_ptr()).collect();
    e.push(std::ptr::null());
    // SAFETY: NULL-terminated arrays of valid C strings that outlive the call.
    unsafe { libc::execve(path.as_ptr(), a.as_ptr(), e.as_ptr()) };
    io::Error::last_os_error()
}
