//! Namespaces: user namespace maps, loopback bring-up, and a reusable
//! "cut this process off the network" helper.

use std::io;
use std::path::Path;

use crate::sys;

/// After `unshare(CLONE_NEWUSER)`: map the caller's uid/gid to themselves
/// inside the new namespace (the only mapping an unprivileged process may
/// write for itself). setgroups is denied first, as the kernel requires.
pub fn write_self_maps(uid: u32, gid: u32) -> io::Result<()> {
    sys::write_file(Path::new("/proc/self/setgroups"), b"deny")?;
    sys::write_file(
        Path::new("/proc/self/uid_map"),
        format!("{uid} {uid} 1\n").as_bytes(),
    )?;
    sys::write_file(
        Path::new("/proc/self/gid_map"),
        format!("{gid} {gid} 1\n").as_bytes(),
    )
}

/// Bring the loopback interface up in the current network namespace.
pub fn loopback_up() -> io::Result<()> {
    // SAFETY: plain socket creation.
    let fd = sys::check(unsafe {
        libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)
    })?;
    // SAFETY: ifreq is plain old data; zeroed is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo".iter().enumerate() {
        ifr.ifr_name[i] = *b as libc::c_char;
    }
    // SAFETY: ioctl with a valid ifreq pointer.
    let r = unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr) };
    let res = if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: the union field written by SIOCGIFFLAGS.
        unsafe {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        }
        // SAFETY: ioctl with a valid ifreq pointer.
        sys::check(unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr) }).map(|_| ())
    };
    // SAFETY: fd is ours.
    unsafe { libc::close(fd) };
    res
}

/// Move the calling (single-threaded) process into a new, empty network
/// namespace: afterwards it has no interface at all, so no TCP, UDP, ICMP,
/// raw or abstract-unix traffic leaves it. Non-root callers get a user
/// namespace first (uid/gid mapped to themselves). Sockets opened before
/// the call keep working.
pub fn unshare_network() -> io::Result<()> {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if uid == 0 && sys::unshare(libc::CLONE_NEWNET).is_ok() {
        return Ok(());
    }
    sys::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET)?;
    write_self_maps(uid, gid)
}

/// Whether a namespace set can be created here: tried in a forked child,
/// the caller is untouched. Call from a single-threaded process.
pub fn namespace_works(flags: libc::c_int) -> bool {
    // SAFETY: the child only calls unshare and _exit; the parent reaps it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let r = libc::unshare(flags);
            libc::_exit(if r == 0 { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut st = 0;
        libc::waitpid(pid, &mut st, 0);
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
    }
}

/// Try each namespace kind (through a user namespace when `via_userns`).
pub fn probe_kinds(via_userns: bool) -> Vec<(&'static str, bool)> {
    let base = if via_userns { libc::CLONE_NEWUSER } else { 0 };
    [
        ("user", libc::CLONE_NEWUSER),
        ("mount", libc::CLONE_NEWNS),
        ("pid", libc::CLONE_NEWPID),
        ("net", libc::CLONE_NEWNET),
        ("ipc", libc::CLONE_NEWIPC),
        ("uts", libc::CLONE_NEWUTS),
    ]
    .iter()
    .map(|(n, f)| (*n, namespace_works(base | f)))
    .collect()
}
