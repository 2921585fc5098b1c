//! Process attributes: `no_new_privs` and death with the parent.

pub use rustix::process::Signal;

/// Set `PR_SET_NO_NEW_PRIVS`: `execve` can never grant privileges again
/// (set-user-ID bits and file capabilities are ignored). Irreversible;
/// required before an unprivileged seccomp or Landlock install.
pub fn set_no_new_privs() -> std::io::Result<()> {
    Ok(rustix::thread::set_no_new_privs(true)?)
}

/// Ask the kernel to send `signal` to this process when the thread that
/// forked it dies (`PR_SET_PDEATHSIG`).
pub fn set_parent_death_signal(signal: Signal) -> std::io::Result<()> {
    Ok(rustix::process::set_parent_process_death_signal(Some(
        signal,
    ))?)
}

/// Whether the parent is still the process `pid` (after
/// [`set_parent_death_signal`], this closes the race with a parent that
/// died before the call).
pub fn parent_is(pid: u32) -> bool {
    rustix::process::getppid().map(|p| p.as_raw_nonzero().get().unsigned_abs()) == Some(pid)
}
