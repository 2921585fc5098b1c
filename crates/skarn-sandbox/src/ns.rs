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
