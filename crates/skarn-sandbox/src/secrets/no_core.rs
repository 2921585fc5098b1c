//! A skarn process that holds a secret's real value (the `skarn run` CLI
//! with `from_env` sources in its environment, `skarn serve`, the helper
//! and proxy they start) leaves no core dump and no memory another process
//! of the same user may read (atk27l F12): a core lands in the working
//! directory, usually a workspace every later run reads.

/// Make this process undumpable (`PR_SET_DUMPABLE 0`: no core, no
/// `ptrace` or `/proc/PID/mem` by the same user) and its core size 0
/// (`RLIMIT_CORE`, soft limit: still in force where a change of
/// credentials resets the dumpable flag). Both are inherited by the
/// processes it forks; an `execve` of a plain program makes that program
/// dumpable again (the sandboxed command), the limit stays. Errors are
/// returned: a caller that holds values does not go on without them.
pub fn forbid_core_dumps() -> std::io::Result<()> {
    use rustix::process::{DumpableBehavior, Resource, Rlimit, getrlimit, set_dumpable_behavior};
    set_dumpable_behavior(DumpableBehavior::NotDumpable)?;
    let max = getrlimit(Resource::Core).maximum;
    rustix::process::setrlimit(
        Resource::Core,
        Rlimit {
            current: Some(0),
            maximum: max,
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_process_that_forbids_cores_is_undumpable_with_no_core_size() {
        // In a child, so the test binary itself stays as it was.
        // SAFETY: the child runs only the async-signal-safe prctl/setrlimit
        // wrappers and reads two values before `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = super::forbid_core_dumps().is_ok()
                // SAFETY: prctl with integer arguments only.
                && unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) } == 0
                && rustix::process::getrlimit(rustix::process::Resource::Core).current
                    == Some(0);
            // SAFETY: ends the forked child without running destructors.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
