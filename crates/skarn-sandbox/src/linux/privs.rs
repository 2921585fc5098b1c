//! Privilege reduction: capabilities, no_new_privs, descriptors, limits.
//! Thin users of the confinement kit (`skarn-confine`), shared with the
//! Code Mode worker; each function acts on the calling thread/process.

use std::io;

use skarn_confine::rlimits::{self, Limit};
use skarn_confine::{caps, fds, process};

/// Set PR_SET_NO_NEW_PRIVS: execve can never grant privileges again
/// (setuid bits and file capabilities are ignored). Irreversible.
pub fn set_no_new_privs() -> io::Result<()> {
    process::set_no_new_privs()
}

/// Drop every capability: the bounding set (so no later execve can regain
/// one), the ambient set, and the effective/permitted/inheritable sets.
/// Dropping the bounding set needs CAP_SETPCAP; without it (an unprivileged
/// caller outside a user namespace) the bounding set is left as is and the
/// other sets, which are already empty for such a caller, are cleared.
/// Returns whether the bounding set was cleared.
pub(crate) fn drop_all_capabilities() -> io::Result<bool> {
    caps::drop_all().map(|b| b == caps::Bounding::Cleared)
}

/// Ask the kernel to send `sig` to this process when its parent dies.
pub fn set_parent_death_signal(sig: libc::c_int) -> io::Result<()> {
    let sig = process::Signal::from_named_raw(sig)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    process::set_parent_death_signal(sig)
}

/// Replace stdin, stdout or stderr when it is a directory, a path handle
/// or (unless `keep_net_sockets`) a network socket (see
/// [`fds::neutralize_stdio_handles`]).
pub fn neutralize_stdio_handles(keep_net_sockets: bool) -> io::Result<Vec<fds::Replaced>> {
    fds::neutralize_stdio_handles(keep_net_sockets)
}

/// Mark every descriptor above 2 close-on-exec, so the next execve
/// inherits only stdin, stdout and stderr.
pub(crate) fn close_fds_above_stderr_on_exec() -> io::Result<()> {
    fds::cloexec_above_stderr()
}

/// setrlimit(2) with soft = hard = `value`.
pub(crate) fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let limit = match resource {
        libc::RLIMIT_AS => Limit::As,
        libc::RLIMIT_DATA => Limit::Data,
        libc::RLIMIT_NPROC => Limit::Nproc,
        libc::RLIMIT_FSIZE => Limit::Fsize,
        libc::RLIMIT_CORE => Limit::Core,
        libc::RLIMIT_NOFILE => Limit::Nofile,
        libc::RLIMIT_MEMLOCK => Limit::Memlock,
        libc::RLIMIT_MSGQUEUE => Limit::Msgqueue,
        _ => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
    };
    rlimits::set(limit, value)
}
