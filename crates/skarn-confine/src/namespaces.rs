//! Namespaces: unshare/setns, uid/gid maps, identity switch, the one way
//! to enter an empty network namespace, and loopback bring-up.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, BorrowedFd};

pub use rustix::thread::{LinkNameSpaceType, UnshareFlags};

/// `unshare(2)`. For `NEWUSER` the caller must be single-threaded (the
/// kernel refuses otherwise); any flag changes only the calling process.
pub fn unshare(flags: UnshareFlags) -> io::Result<()> {
    // SAFETY: callers are single-threaded where the flags require it (see
    // above), and no flag here unshares the descriptor table or fs state
    // behind Rust's back in a way that invalidates live objects: the
    // namespaces only change what later syscalls see.
    Ok(unsafe { rustix::thread::unshare_unsafe(flags) }?)
}

/// `setns(2)`: move into the namespace `fd` refers to (of kind `kind`
/// when given, so a descriptor of another kind is refused).
pub fn setns(fd: BorrowedFd<'_>, kind: Option<LinkNameSpaceType>) -> io::Result<()> {
    Ok(rustix::thread::move_into_link_name_space(fd, kind)?)
}

fn write_proc(path: &str, data: &[u8]) -> io::Result<()> {
    // One write: procfs takes a map in a single write(2).
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(data)
}

/// After `unshare(CLONE_NEWUSER)`: map `uid`/`gid` (the caller's ids
/// outside) to themselves inside, the only map an unprivileged process
/// may write for itself. `setgroups` is denied first, as the kernel
/// requires.
///
/// A process made undumpable (one holding secrets' values) has its
/// `/proc/self` files owned by root, which an unprivileged caller cannot
/// open for writing: it is dumpable only while the maps are written, and
/// undumpable again at once (its core size limit stays as it was).
pub fn write_self_maps(uid: u32, gid: u32) -> io::Result<()> {
    use rustix::process::{DumpableBehavior, dumpable_behavior, set_dumpable_behavior};
    let was = dumpable_behavior()?;
    if was != DumpableBehavior::Dumpable {
        set_dumpable_behavior(DumpableBehavior::Dumpable)?;
    }
    let r = (|| {
        write_proc("/proc/self/setgroups", b"deny")?;
        write_proc("/proc/self/uid_map", format!("{uid} {uid} 1\n").as_bytes())?;
        write_proc("/proc/self/gid_map", format!("{gid} {gid} 1\n").as_bytes())
    })();
    if was != DumpableBehavior::Dumpable {
        set_dumpable_behavior(was)?;
    }
    r
}

/// Drop every supplementary group and switch real, effective and saved
/// ids to `uid`/`gid`, which clears every capability of a non-root uid.
/// Fails where the ids are not mapped (e.g. as root of an unprivileged
/// user namespace). Acts on the calling thread only: call it
/// single-threaded.
pub fn become_ids(uid: u32, gid: u32) -> io::Result<()> {
    use rustix::process::{Gid, Uid};
    let (u, g) = (Uid::from_raw(uid), Gid::from_raw(gid));
    rustix::thread::set_thread_groups(&[])?;
    rustix::thread::set_thread_res_gid(g, g, g)?;
    rustix::thread::set_thread_res_uid(u, u, u)?;
    Ok(())
}

/// Whether the user namespace's ids are mapped after
/// [`enter_empty_network`] took the user-namespace way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfMap {
    /// Map the caller's uid/gid to themselves.
    Write,
    /// Leave the maps empty: the process runs as the overflow uid.
    Leave,
}

/// How the network namespace was entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEntry {
    /// `unshare(CLONE_NEWNET)` alone: the caller is root of its user
    /// namespace with `CAP_SYS_ADMIN`, and keeps its capabilities.
    Direct,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET)`: the new network namespace
    /// belongs to a new user namespace; capabilities hold only inside it.
    ViaUserNamespace,
}

/// Move the calling process into a new, empty network namespace: no
/// interface at all (loopback down), so no TCP, UDP, ICMP, raw or
/// abstract-unix traffic leaves it. Sockets opened before keep working.
/// The one way both users enter it: directly when the effective uid is 0
/// and the kernel agrees, otherwise through a new user namespace. Call
/// single-threaded.
pub fn enter_empty_network(map: SelfMap) -> io::Result<NetEntry> {
    let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
    if rustix::process::geteuid().is_root() && unshare(UnshareFlags::NEWNET).is_ok() {
        return Ok(NetEntry::Direct);
    }
    unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNET)?;
    if map == SelfMap::Write {
        write_self_maps(uid.as_raw(), gid.as_raw())?;
    }
    Ok(NetEntry::ViaUserNamespace)
}

/// Bring the loopback interface up in the current network namespace.
pub fn loopback_up() -> io::Result<()> {
    let sock = std::net::UdpSocket::bind(("0.0.0.0", 0))
        .or_else(|_| std::net::UdpSocket::bind(("::", 0)))?;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo".iter().enumerate() {
        ifr.ifr_name[i] = *b as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS on a live socket with a valid ifreq pointer.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut ifr) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe {
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: SIOCSIFFLAGS on a live socket with a valid ifreq pointer.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &ifr) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether `unshare(flags)` works here, tried in a forked child: the
/// caller is untouched. The child makes no allocation, so the caller may
/// have threads.
pub fn can_unshare(flags: UnshareFlags) -> bool {
    // SAFETY: the child only calls unshare and _exit (both async-signal
    // safe); the parent reaps it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let r = libc::unshare(flags.bits() as libc::c_int);
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
