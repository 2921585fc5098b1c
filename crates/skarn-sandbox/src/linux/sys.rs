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
pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// MOUNT_ATTR_NOSUID.
pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// MOUNT_ATTR_NODEV.
pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
/// MOUNT_ATTR_NOEXEC.
pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// mount_setattr(2) on `target` (recursively when `recursive`).
pub(crate) fn mount_setattr(target: &Path, set: u64, recursive: bool) -> io::Result<()> {
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
pub(crate) fn pivot_root(new_root: &Path, put_old: &Path) -> io::Result<()> {
    let a = cstr(new_root.as_os_str())?;
    let b = cstr(put_old.as_os_str())?;
    // SAFETY: valid NUL-terminated paths.
    check(unsafe { libc::syscall(libc::SYS_pivot_root, a.as_ptr(), b.as_ptr()) } as libc::c_int)
        .map(|_| ())
}

/// umount2(2).
pub(crate) fn umount2(target: &Path, flags: libc::c_int) -> io::Result<()> {
    let t = cstr(target.as_os_str())?;
    // SAFETY: valid path.
    check(unsafe { libc::umount2(t.as_ptr(), flags) }).map(|_| ())
}

/// unshare(2), through the confinement kit.
pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    use skarn_confine::namespaces::{UnshareFlags, unshare};
    unshare(UnshareFlags::from_bits_retain(flags as u32))
}

/// fork(2).
///
/// # Safety
///
/// The calling process must be single-threaded (the helper and the
/// processes it forks are): in a threaded process the child may only make
/// async-signal-safe calls before it execs or exits, which Rust code
/// cannot promise (a lock held by another thread stays held for ever).
pub unsafe fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: the caller is single-threaded (this function's contract).
    let r = unsafe { libc::fork() };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `struct clone_args` of clone3(2), up to `cgroup` (Linux 5.7). The libc
/// crate defines it for musl only, and no crate wraps a fork-like clone3,
/// hence this one syscall by hand.
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// fork(2) with the child born inside the cgroup v2 directory `cgroup`
/// (clone3 with `CLONE_INTO_CGROUP`), and as PID 1 of a new PID namespace
/// when `new_pid_ns`: no migration, so no wait for the RCU grace period a
/// move by pid costs. Errors (kernel before 5.7, v1 directory, ...) leave
/// no child and no namespace.
///
/// # Safety
///
/// As [`fork`]: the calling process must be single-threaded, or the child
/// must make only async-signal-safe calls before it exits.
pub(crate) unsafe fn fork_into_cgroup(
    cgroup: std::os::fd::BorrowedFd<'_>,
    new_pid_ns: bool,
) -> io::Result<libc::pid_t> {
    use std::os::fd::AsRawFd;
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    let pid_ns = if new_pid_ns {
        libc::CLONE_NEWPID as u64
    } else {
        0
    };
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP | pid_ns,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    // SAFETY: like fork(2) (no CLONE_VM, no new stack: the child continues
    // on a copy of this stack); `args` is valid for the size passed. The
    // caller is single-threaded, and glibc asks the kernel for the thread id
    // where it matters after a raw clone (raise, abort).
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::pid_t)
    }
}

/// Write `data` to an existing file (procfs/cgroupfs friendly: one write).
pub fn write_file(path: &Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(data)
}

/// chdir(2).
pub(crate) fn chdir(p: &Path) -> io::Result<()> {
    let c = cstr(p.as_os_str())?;
    // SAFETY: valid path.
    check(unsafe { libc::chdir(c.as_ptr()) }).map(|_| ())
}

/// Write raw bytes to a descriptor, ignoring errors (diagnostics only).
pub(crate) fn write_fd(fd: libc::c_int, data: &[u8]) {
    // SAFETY: data is a valid buffer of data.len() bytes.
    let _ = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
}

/// _exit(2): leave without running destructors or atexit handlers.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns.
    unsafe { libc::_exit(code) }
}

/// Whether no process has pid `pid` (in this PID namespace): `kill(pid,
/// 0)` fails with `ESRCH`. A pid that exists but cannot be signalled
/// counts as alive.
pub(crate) fn pid_gone(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks whether the pid exists.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cgroup v2 mount point, if the host has one.
    fn cgroup2_mount() -> Option<std::path::PathBuf> {
        let m = std::fs::read_to_string("/proc/self/mounts").ok()?;
        m.lines().find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.get(2) == Some(&"cgroup2")).then(|| f[1].into())
        })
    }

    /// A cgroup v2 hierarchy mounted for the test when the host has none
    /// mounted (a v1 host such as CI): unmounted and removed on drop.
    struct OwnCgroup2(std::path::PathBuf);

    impl OwnCgroup2 {
        fn mount() -> Option<Self> {
            let dir = std::env::temp_dir().join(format!("skarn-cg2-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let target = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
            // SAFETY: valid NUL-terminated strings; a fresh cgroup2 mount on a
            // directory this test made.
            let rc = unsafe {
                libc::mount(
                    c"none".as_ptr(),
                    target.as_ptr(),
                    c"cgroup2".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if rc != 0 {
                let _ = std::fs::remove_dir(&dir);
                return None;
            }
            Some(Self(dir))
        }
    }

    impl Drop for OwnCgroup2 {
        fn drop(&mut self) {
            if let Ok(t) = CString::new(self.0.as_os_str().as_encoded_bytes()) {
                // SAFETY: unmounting the mount this guard made.
                unsafe { libc::umount2(t.as_ptr(), libc::MNT_DETACH) };
            }
            let _ = std::fs::remove_dir(&self.0);
        }
    }

    #[test]
    fn a_child_forked_into_a_v2_cgroup_starts_inside_it() {
        use std::os::fd::AsFd;
        // SAFETY: getuid cannot fail.
        if unsafe { libc::getuid() } != 0 {
            skarn_test_support::skip!("needs root to make a cgroup");
        }
        let mut _own = None;
        let root = match cgroup2_mount() {
            Some(r) => r,
            None => match OwnCgroup2::mount() {
                Some(m) => {
                    let r = m.0.clone();
                    _own = Some(m);
                    r
                }
                None => skarn_test_support::skip!("no cgroup v2 hierarchy and none can be mounted"),
            },
        };
        let name = format!("skarn-clone3-test-{}", std::process::id());
        let dir = root.join(&name);
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        let fd = std::fs::File::open(&dir).unwrap();
        // What the child must read in /proc/self/cgroup; prepared before the
        // fork: the test process has other threads, so the child only makes
        // async-signal-safe calls.
        let want = format!("0::/{name}\n");
        let want = want.as_bytes();
        let path = c"/proc/self/cgroup";
        for new_pid_ns in [false, true] {
            // SAFETY: the child makes only async-signal-safe calls (above).
            let r = unsafe { fork_into_cgroup(fd.as_fd(), new_pid_ns) };
            if matches!(r, Ok(0)) {
                let mut buf = [0u8; 4096];
                // SAFETY: open/read/_exit on valid buffers (async-signal-safe).
                unsafe {
                    let f = libc::open(path.as_ptr(), libc::O_RDONLY);
                    let n = libc::read(f, buf.as_mut_ptr().cast(), buf.len());
                    let got = &buf[..n.max(0) as usize];
                    let inside = got.windows(want.len()).any(|w| w == want);
                    let pid_ok = !new_pid_ns || libc::getpid() == 1;
                    libc::_exit(if inside && pid_ok { 0 } else { 1 });
                }
            }
            let result = r.map(|pid| {
                let mut status = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                status
            });
            if result.as_ref().map_or(true, |s| *s != 0) {
                let _ = std::fs::remove_dir(&dir);
            }
            assert_eq!(
                result.expect("clone3 with CLONE_INTO_CGROUP"),
                0,
                "new_pid_ns {new_pid_ns}"
            );
        }
        let _ = std::fs::remove_dir(&dir);
    }
}
