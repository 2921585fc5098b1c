//! Namespaces: user namespace maps, loopback bring-up, and a reusable
//! "cut this process off the network" helper. Thin users of the
//! confinement kit (`skarn-confine`), shared with the Code Mode worker.

use std::io;

use skarn_confine::namespaces::{self, SelfMap, UnshareFlags};

/// After `unshare(CLONE_NEWUSER)`: map the caller's uid/gid to themselves
/// inside the new namespace (the only mapping an unprivileged process may
/// write for itself). setgroups is denied first, as the kernel requires.
pub fn write_self_maps(uid: u32, gid: u32) -> io::Result<()> {
    namespaces::write_self_maps(uid, gid)
}

/// Bring the loopback interface up in the current network namespace.
pub fn loopback_up() -> io::Result<()> {
    namespaces::loopback_up()
}

/// Move the calling (single-threaded) process into a new, empty network
/// namespace: afterwards it has no interface at all, so no TCP, UDP, ICMP,
/// raw or abstract-unix traffic leaves it. Non-root callers get a user
/// namespace first (uid/gid mapped to themselves). Sockets opened before
/// the call keep working. The kit's one way, also taken by the worker.
pub(crate) fn unshare_network() -> io::Result<()> {
    namespaces::enter_empty_network(SelfMap::Write).map(|_| ())
}

/// Whether a namespace set can be created here: tried in a forked child,
/// the caller is untouched.
pub(crate) fn namespace_works(flags: libc::c_int) -> bool {
    namespaces::can_unshare(UnshareFlags::from_bits_retain(flags as u32))
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
