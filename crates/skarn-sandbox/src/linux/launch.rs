//! Starting the helper from the caller's side.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use crate::linux::plan::Plan;

/// Arguments placed after the executable to enter the helper.
pub(crate) const HELPER_ARG: &str = "__sandbox-helper";

/// Errors preparing the helper command.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The plan could not be serialised.
    #[error("cannot serialise the sandbox plan: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The plan is larger than [`crate::linux::helper::MAX_PLAN_BYTES`].
    #[error("sandbox plan too large ({0} bytes, at most 1 MiB); use fewer grants")]
    TooLarge(usize),
    /// The proxy's audit pipe could not be made.
    #[error("cannot make the network proxy's audit pipe: {0}")]
    Audit(std::io::Error),
}

/// Build the command that runs `plan` through the helper: `exe` must be a
/// binary whose `main` dispatches `__sandbox-helper` to
/// [`crate::linux::helper::helper_main`] before doing anything else. The command's
/// environment is exactly `env` (already scrubbed) plus the plan. Spawning
/// it from a multi-threaded program is safe: the helper is a fresh exec.
pub fn helper_command(
    exe: &Path,
    plan: &Plan,
    env: &[(OsString, OsString)],
) -> Result<Command, LaunchError> {
    // Variables the dynamic loader and the C library act on (glibc's list
    // of those it ignores in secure mode) are not given to the helper,
    // which starts unconfined: a preloaded library named by a server's
    // configuration would run before any confinement. The command gets
    // them through the plan instead, after confinement.
    let (for_loader, env): (Vec<_>, Vec<_>) =
        env.iter().cloned().partition(|(k, _)| loader_variable(k));
    let mut plan = plan.clone();
    for (k, v) in for_loader {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if !plan.set_env.iter().any(|(s, _)| s == k) {
            plan.set_env.push((k.to_owned(), v.to_owned()));
        }
    }
    let json = zeroize::Zeroizing::new(serde_json::to_string(&plan)?);
    if json.len() > crate::linux::helper::MAX_PLAN_BYTES {
        return Err(LaunchError::TooLarge(json.len()));
    }
    let mut cmd = Command::new(exe);
    cmd.arg(HELPER_ARG);
    cmd.env_clear();
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    // The plan holds the secrets' values and the run CA's key (issue 27):
    // not in the environment, which any process of the same user reads in
    // /proc/PID/environ for the helper's whole life (atk27d F2), but in a
    // pipe the helper inherits and empties at once.
    if let Some(fd) = plan_pipe(json.as_bytes()) {
        use std::os::fd::{AsRawFd, OwnedFd};
        use std::os::unix::process::CommandExt;
        let raw = fd.as_raw_fd();
        cmd.env(crate::linux::helper::PLAN_FD_ENV, raw.to_string());
        let fd: std::sync::Arc<OwnedFd> = std::sync::Arc::new(fd);
        // SAFETY: between fork and exec only fcntl(2), async-signal-safe,
        // runs: the read end (close-on-exec in this process, so no other
        // child inherits it) is kept open across this child's exec.
        unsafe {
            cmd.pre_exec(move || {
                let _keep = &fd;
                if libc::fcntl(raw, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        return Ok(cmd);
    }
    // No pipe could hold it: the environment, as before. Linux caps one
    // environment string at 128 KiB: a larger plan (many grants, the
    // secret list's masks) goes in pieces, `PLAN_ENV` then `PLAN_ENV_1`,
    // `PLAN_ENV_2`, ..., which the helper joins.
    use std::os::unix::ffi::OsStrExt;
    for (i, piece) in json.as_bytes().chunks(PLAN_PIECE_BYTES).enumerate() {
        let name = crate::linux::helper::plan_piece_var(i);
        cmd.env(name, std::ffi::OsStr::from_bytes(piece));
    }
    Ok(cmd)
}

/// [`helper_command`], and when the plan has a network proxy, the read
/// end of a pipe (close-on-exec here) on which the proxy writes its
/// records ([`skarn_egress::AuditRecord`], one JSON line each): each use
/// and refusal of a secret and each refused destination, instead of on
/// the stderr it shares with the sandboxed program (atk27h F4). Only the
/// helper inherits the write end, and it closes it once the proxy is
/// forked: the program cannot write there. The write end stays open in
/// this process until the command is dropped.
pub fn helper_command_audited(
    exe: &Path,
    plan: &Plan,
    env: &[(OsString, OsString)],
) -> Result<(Command, Option<std::os::fd::OwnedFd>), LaunchError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    if plan.egress.is_none() {
        return Ok((helper_command(exe, plan, env)?, None));
    }
    let mut p = [0; 2];
    // SAFETY: p is a valid 2-int array.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(LaunchError::Audit(std::io::Error::last_os_error()));
    }
    // SAFETY: pipe2 succeeded: both descriptors are new and ours.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
    let raw = w.as_raw_fd();
    let mut plan = plan.clone();
    if let Some(e) = plan.egress.as_mut() {
        e.audit_fd = Some(raw);
    }
    let mut cmd = helper_command(exe, &plan, env)?;
    let w = std::sync::Arc::new(w);
    // SAFETY: between fork and exec only fcntl(2), async-signal-safe,
    // runs: the write end (close-on-exec in this process, so no other
    // child inherits it) is kept open across this child's exec.
    unsafe {
        cmd.pre_exec(move || {
            let _keep = &w;
            if libc::fcntl(raw, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok((cmd, Some(r)))
}

/// A pipe holding all of `data`, its write end closed: the read end
/// (close-on-exec), or `None` when the pipe cannot be made or grown to
/// hold it (the write never blocks).
fn plan_pipe(data: &[u8]) -> Option<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut p = [0; 2];
    // SAFETY: p is a valid 2-int array.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return None;
    }
    // SAFETY: pipe2 succeeded: both descriptors are new and ours.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
    let want = libc::c_int::try_from(data.len().max(1)).ok()?;
    // SAFETY: fcntl on a descriptor we own.
    let size = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETPIPE_SZ) };
    // SAFETY: as above.
    if size < want && unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, want) } < want {
        return None;
    }
    // SAFETY: clearing O_NONBLOCK on the read end, which we own (the helper
    // reads it blocking).
    unsafe { libc::fcntl(r.as_raw_fd(), libc::F_SETFL, 0) };
    let mut f = std::fs::File::from(w);
    f.write_all(data).ok()?;
    Some(r)
}

/// Bytes of the plan in one environment variable (under Linux's 128 KiB
/// per string).
const PLAN_PIECE_BYTES: usize = 100 * 1024;

/// Whether the loader or the C library acts on variable `k` before `main`
/// (`LD_*`, and glibc's other variables it drops for set-user-ID programs).
pub(crate) fn loader_variable(k: &std::ffi::OsStr) -> bool {
    const OTHERS: &[&str] = &[
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TZDIR",
    ];
    let k = k.as_encoded_bytes();
    k.starts_with(b"LD_") || OTHERS.iter().any(|o| o.as_bytes() == k)
}

/// Whether the calling process has exactly one thread (read from
/// `/proc/self/stat`; false when that cannot be read).
pub(crate) fn is_single_threaded() -> bool {
    let Ok(stat) = std::fs::read("/proc/self/stat") else {
        return false;
    };
    // Fields after the command name (which may contain spaces or ')'):
    // state is field 3, num_threads field 20.
    let Some(close) = stat.iter().rposition(|&b| b == b')') else {
        return false;
    };
    std::str::from_utf8(&stat[close + 1..])
        .ok()
        .and_then(|rest| rest.split_whitespace().nth(17))
        == Some("1")
}

/// Become the helper in this very process, without re-executing the
/// binary: the environment is replaced by exactly `env` (already scrubbed)
/// and the plan runs here, returning the command's exit status. When the
/// process is not single-threaded nothing is changed and the plan is handed
/// back (`Err`): the caller then falls back to [`helper_command`].
///
/// This saves an `execve` of the whole binary (dynamic loading, runtime
/// start-up, plan serialisation) on every run. It is sound only because the
/// process is single-threaded: the helper forks and allocates in the child,
/// which a multi-threaded parent must never do.
pub fn run_in_this_process(plan: Plan, env: &[(OsString, OsString)]) -> Result<i32, Box<Plan>> {
    if !is_single_threaded() {
        return Err(Box::new(plan));
    }
    let old: Vec<OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    for k in old {
        // SAFETY: the process is single-threaded (checked above), so no
        // other thread reads the environment concurrently.
        unsafe { std::env::remove_var(k) };
    }
    for (k, v) in env {
        if k.is_empty() || k.as_encoded_bytes().contains(&b'=') {
            continue;
        }
        // SAFETY: as above, single-threaded.
        unsafe { std::env::set_var(k, v) };
    }
    Ok(crate::linux::helper::run(plan))
}

#[cfg(test)]
mod loader_tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn loader_variables_reach_the_command_through_the_plan_not_the_helper() {
        let mut policy = crate::policy::Policy::new("/home/u/proj");
        policy.fail_closed = false;
        let plan = crate::linux::plan::plan(
            &policy,
            &crate::linux::host::HostFacts::probe(),
            &["true".into()],
        )
        .expect("plans");
        let env: Vec<(OsString, OsString)> = vec![
            ("LD_PRELOAD".into(), "/repo/evil.so".into()),
            ("GCONV_PATH".into(), "/repo".into()),
            ("PATH".into(), "/usr/bin".into()),
        ];
        let cmd = helper_command(Path::new("/bin/true"), &plan, &env).unwrap();
        let names: Vec<_> = cmd.get_envs().map(|(k, _)| k.to_owned()).collect();
        assert!(names.iter().any(|k| k == "PATH"));
        assert!(
            !names.iter().any(|k| k == "LD_PRELOAD" || k == "GCONV_PATH"),
            "{names:?}"
        );
        // The plan travels in a pipe, never in the environment (atk27d F2).
        assert!(!names.iter().any(|k| k == crate::linux::helper::PLAN_ENV));
        let fd: i32 = cmd
            .get_envs()
            .find(|(k, _)| *k == crate::linux::helper::PLAN_FD_ENV)
            .and_then(|(_, v)| v)
            .and_then(|v| v.to_str()?.parse().ok())
            .unwrap();
        // SAFETY: `fd` is open (held by `cmd`); a copy is read and closed.
        let copy = unsafe { libc::dup(fd) };
        let sent = crate::linux::helper::read_plan_fd(copy).unwrap();
        let sent: Plan = serde_json::from_slice(&sent).unwrap();
        assert!(
            sent.set_env
                .contains(&("LD_PRELOAD".into(), "/repo/evil.so".into()))
        );
    }
}
