//! What a run granted secrets needs from the host, asked before any
//! secret's source runs (atk27o F4, atk27p F4): the egress proxy that puts
//! the values in lives in the run's own network namespace, and a
//! `command` source runs in a private mount namespace, traced (ADR 0319).
//! Asked of the kernel, not of sysctls: a forked child really makes a
//! user and network namespace (as root a mount and network namespace) and
//! really traces a child of its own there. Where either is refused (a
//! container's seccomp profile, an AppArmor default, Yama's scope 3) the
//! run is refused first, no source run.

use crate::HostFacts;

/// Why a run cannot carry secrets on `host`; `None` when it can.
pub fn missing(host: &HostFacts) -> Option<String> {
    (!host.namespaces).then(|| {
        "secrets need the egress proxy, which needs a network namespace (not available \
         here: no user namespaces for this user); no secret source was run"
            .to_string()
    })
}

/// [`missing`] for the running host, then the real attempt ([`probe`]).
pub fn check() -> Result<(), String> {
    if let Some(why) = missing(&HostFacts::probe()) {
        return Err(why);
    }
    match probe() {
        0 => Ok(()),
        2 => Err(
            "secrets need the egress proxy, which needs a network namespace (not available \
                  here: making a user and network namespace was refused); no secret source \
                  was run"
                .into(),
        ),
        3 => Err(
            "a secret's command source runs traced (ADR 0319), and tracing a process is \
                  refused here (ptrace: a seccomp profile or Yama's scope 3); no secret source \
                  was run"
                .into(),
        ),
        n => Err(format!(
            "checking that this system can carry secrets failed ({n}); no secret source was run"
        )),
    }
}

/// Try, in a forked child, what a run with secrets does: 0 when it
/// works, 2 when the namespaces are refused, 3 when tracing is.
fn probe() -> i32 {
    // SAFETY: the child makes only async-signal-safe system calls
    // (`unshare`, `fork`, `ptrace`, `raise`, `waitpid`, `kill`, `_exit`),
    // allowed after `fork` in a multi-threaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return 1;
    }
    if pid == 0 {
        // SAFETY: as above.
        unsafe { libc::_exit(probe_child()) }
    }
    let mut st = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(pid, &mut st, 0) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 1;
        }
    }
    match libc::WIFEXITED(st) {
        true => libc::WEXITSTATUS(st),
        false => 1,
    }
}

/// The probe's child (after `fork`): its exit code.
fn probe_child() -> i32 {
    // SAFETY: plain system calls in the forked child.
    unsafe {
        let root = libc::getuid() == 0;
        let plain = root && libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWNET) == 0;
        if !plain && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
            return 2;
        }
        let kid = libc::fork();
        if kid < 0 {
            return 1;
        }
        if kid == 0 {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                libc::_exit(3);
            }
            libc::raise(libc::SIGSTOP);
            libc::_exit(0);
        }
        let mut st = 0;
        if libc::waitpid(kid, &mut st, libc::__WALL) < 0 {
            return 1;
        }
        let stopped = libc::WIFSTOPPED(st);
        if stopped {
            libc::kill(kid, libc::SIGKILL);
            libc::waitpid(kid, &mut st, libc::__WALL);
            return 0;
        }
        match libc::WIFEXITED(st) {
            true => libc::WEXITSTATUS(st),
            false => 1,
        }
    }
}
