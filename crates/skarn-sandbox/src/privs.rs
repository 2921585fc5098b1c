//! Privilege reduction: capabilities, no_new_privs, descriptors, limits.
//! Each function acts on the calling thread/process and is reusable on its
//! own (e.g. by a self-confining worker).

use std::io;

use crate::sys;

/// Set PR_SET_NO_NEW_PRIVS: execve can never grant privileges again
/// (setuid bits and file capabilities are ignored). Irreversible.
pub fn set_no_new_privs() -> io::Result<()> {
    sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0).map(|_| ())
}

/// Drop every capability: the bounding set (so no later execve can regain
/// one), the ambient set, and the effective/permitted/inheritable sets.
/// Dropping the bounding set needs CAP_SETPCAP; without it (an unprivileged
/// caller outside a user namespace) the bounding set is left as is and the
/// other sets, which are already empty for such a caller, are cleared.
/// Returns whether the bounding set was cleared.
pub fn drop_all_capabilities() -> io::Result<bool> {
    let mut bounding_cleared = true;
    for cap in 0..64 {
        match sys::prctl(libc::PR_CAPBSET_DROP, cap, 0) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
            Err(_) => bounding_cleared = false,
        }
    }
    // PR_CAP_AMBIENT_CLEAR_ALL; EINVAL on kernels without ambient caps.
    let _ = sys::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
    );
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let hdr = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset with a v3 header and two data structs, as the ABI requires.
    let r = unsafe { libc::syscall(libc::SYS_capset, &hdr as *const Header, data.as_ptr()) };
    sys::check(r as libc::c_int)?;
    Ok(bounding_cleared)
}

/// Ask the kernel to send `sig` to this process when its parent dies.
pub fn set_parent_death_signal(sig: libc::c_int) -> io::Result<()> {
    sys::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0).map(|_| ())
}

/// Mark every descriptor above 2 close-on-exec, so the next execve
/// inherits only stdin, stdout and stderr.
pub fn close_fds_above_stderr_on_exec() -> io::Result<()> {
    // SAFETY: close_range takes integers only.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
        )
    };
    if r == 0 {
        return Ok(());
    }
    // Fallback for kernels without CLOSE_RANGE_CLOEXEC: walk /proc/self/fd.
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on an integer fd; failure (already closed) is harmless.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// setrlimit(2) with soft = hard = `value`.
pub fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: lim is a valid rlimit.
    sys::check(unsafe { libc::setrlimit(resource, &lim) }).map(|_| ())
}
