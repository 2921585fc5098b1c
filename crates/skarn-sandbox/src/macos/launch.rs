//! Running one command under Seatbelt (macOS only).
//!
//! The command runs as `/usr/bin/sandbox-exec -p PROFILE -- /abs/cmd ARGS`
//! (the absolute path, never one found on `PATH`), in a new session and
//! process group, with rlimits, a scrubbed environment and a fresh per-run
//! temporary directory as `$TMPDIR` (deleted afterwards). `sandbox-exec`
//! rather than `sandbox_init` in the child: the launcher may have threads
//! (the egress proxy), and after `fork` only async-signal-safe calls are
//! allowed, which profile compilation is not; an exec'd `sandbox-exec`
//! compiles and applies the profile in a fresh single-threaded process.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::egress::{self, EgressError};
use super::facts::MacFacts;
use super::profile::{ProfileError, profile};
use crate::policy::grants::GrantError;
use crate::policy::provenance::Provenance;
use crate::policy::{NetPolicy, Policy};
use crate::report::ReportFormat;

/// `sandbox-exec`, by absolute path.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";
/// Exit status after the timeout killed the process group.
pub(crate) const EXIT_TIMEOUT: i32 = 124;
/// The command exists but cannot be executed.
pub(crate) const EXIT_NOT_EXECUTABLE: i32 = 126;
/// The command was not found.
pub(crate) const EXIT_NOT_FOUND: i32 = 127;

/// Why the command could not be run confined.
#[derive(Debug, thiserror::Error)]
pub enum MacosError {
    /// No profile can express the policy.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A grant cannot be resolved safely.
    #[error(transparent)]
    Grant(#[from] GrantError),
    /// `--net allow:` patterns are malformed.
    #[error(transparent)]
    Egress(#[from] EgressError),
    /// An empty command line.
    #[error("no command given")]
    NoCommand,
    /// `/usr/bin/sandbox-exec` is missing.
    #[error("{SANDBOX_EXEC} not found: Seatbelt is unavailable on this system")]
    NoSandboxExec,
    /// The per-run temporary directory could not be made.
    #[error("cannot create the per-run temporary directory {path}: {source}")]
    TempDir {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Spawning or waiting failed.
    #[error("cannot run the sandboxed command: {0}")]
    Spawn(#[source] std::io::Error),
}

/// A per-run temporary directory, removed when dropped.
struct RunTemp(PathBuf);

impl RunTemp {
    fn create() -> Result<RunTemp, MacosError> {
        let base =
            std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/private/tmp".into());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = base.join(format!("skarn-run-{}-{nanos:08x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|source| MacosError::TempDir {
                path: path.clone(),
                source,
            })?;
        Ok(RunTemp(path))
    }
}

impl Drop for RunTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The process group to forward terminal signals to (0: none yet).
static CHILD_PGID: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(sig: libc::c_int) {
    let pgid = CHILD_PGID.load(Ordering::SeqCst);
    if pgid > 0 {
        // SAFETY: killpg is async-signal-safe and takes integers only.
        unsafe { libc::killpg(pgid, sig) };
    }
}

fn install_forwarding() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: the handler only reads an atomic and calls killpg, both
        // async-signal-safe; the sigaction struct is fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Find `cmd` the way the shell would, on `PATH` from `env`.
fn resolve_command(cmd: &OsStr, env: &[(OsString, OsString)], cwd: &Path) -> Result<PathBuf, i32> {
    let is_exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let p = Path::new(cmd);
    if p.components().count() > 1 || cmd.to_string_lossy().contains('/') {
        let abs = cwd.join(p);
        return if is_exec(&abs) {
            Ok(abs)
        } else if abs.exists() {
            Err(EXIT_NOT_EXECUTABLE)
        } else {
            Err(EXIT_NOT_FOUND)
        };
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/bin:/bin:/usr/sbin:/sbin".into());
    std::env::split_paths(&path)
        .map(|d| cwd.join(d).join(p))
        .find(|c| is_exec(c))
        .ok_or(EXIT_NOT_FOUND)
}

/// Rlimits to set in the child: (resource, value), clamped to the hard
/// limits in force; and whether any was clamped.
fn rlimits(policy: &Policy) -> (Vec<(libc::c_int, libc::rlim_t)>, bool) {
    let mib = |v: u64| v.saturating_mul(1 << 20) as libc::rlim_t;
    let l = &policy.limits;
    let mut v = vec![(libc::RLIMIT_CORE, 0)];
    if let Some(m) = l.memory_mb {
        v.push((libc::RLIMIT_DATA, mib(m)));
        v.push((libc::RLIMIT_AS, mib(m)));
    }
    if let Some(n) = l.max_procs {
        v.push((libc::RLIMIT_NPROC, n as libc::rlim_t));
    }
    if let Some(f) = l.max_file_size_mb {
        v.push((libc::RLIMIT_FSIZE, mib(f)));
    }
    let mut clamped = false;
    for (res, val) in &mut v {
        let mut cur = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        if unsafe { libc::getrlimit(*res, &mut cur) } == 0 && cur.rlim_max < *val {
            *val = cur.rlim_max;
            clamped = true;
        }
    }
    (v, clamped)
}

/// Run `command` confined by `policy`; returns its exit status (128+N for
/// signal N, 124 after the timeout, 126/127 when it cannot be executed or
/// found). `env` is the caller's environment: secret-looking variables are
/// removed ([`crate::policy::env::scrub`]) and reported by name; `provenance`
/// (from assembling `policy`) goes into the report.
pub fn run(
    policy: &Policy,
    provenance: &Provenance,
    command: &[OsString],
    env: impl IntoIterator<Item = (OsString, OsString)>,
    report_format: ReportFormat,
) -> Result<i32, MacosError> {
    let Some(first) = command.first() else {
        return Err(MacosError::NoCommand);
    };
    if !Path::new(SANDBOX_EXEC).exists() {
        return Err(MacosError::NoSandboxExec);
    }
    let mut policy = policy.clone();
    let grant_notes = crate::policy::grants::canonicalize(&mut policy)?;
    let (mut kept, removed) = crate::policy::env::scrub(env, &policy.allow_env);
    let home = kept
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|p| p.is_absolute());
    let temp = RunTemp::create()?;
    let cwd = policy
        .cwd
        .clone()
        .unwrap_or_else(|| policy.workspace.clone());

    let proxy = match &policy.net {
        NetPolicy::AllowHosts(list) => match egress::start(list) {
            Ok(p) => Some(p),
            Err(e @ EgressError::Pattern(_)) => return Err(e.into()),
            Err(e) => {
                eprintln!("skarn: warning: {e}; --net allow is treated as deny");
                None
            }
        },
        _ => None,
    };
    let mut facts = MacFacts::probe(&policy, home.as_deref(), &temp.0);
    facts.proxy_ports = proxy.as_ref().map(|p| (p.http, p.socks));
    let text = profile(&policy, &facts)?;
    let mut report = super::report(&policy, &facts);
    report.notes.extend(grant_notes);
    report.removed_env = removed;
    report.provenance = crate::report::report_provenance::for_report(&policy, provenance);

    kept.retain(|(k, _)| k != "TMPDIR");
    kept.push(("TMPDIR".into(), temp.0.clone().into_os_string()));
    if let Some(p) = &proxy {
        kept.retain(|(k, _)| !k.to_string_lossy().to_ascii_lowercase().ends_with("_proxy"));
        kept.extend(
            // (No network namespace here: the loopback is the host's, so
            // NO_PROXY keeps it.)
            crate::policy::egress_env::proxy_env(p.http, p.socks, &[])
                .into_iter()
                .map(|(k, v)| (k.into(), v.into())),
        );
    }
    if crate::policy::offline_env::is_offline(&policy.net) {
        let set = crate::policy::offline_env::offline_env(&policy.net);
        kept.retain(|(k, _)| !set.iter().any(|(s, _)| k.as_os_str() == s.as_str()));
        kept.extend(set.into_iter().map(|(k, v)| (k.into(), v.into())));
        report
            .notes
            .push(crate::policy::offline_env::offline_note());
    }
    let target = match resolve_command(first, &kept, &cwd) {
        Ok(t) => t,
        Err(code) => {
            let what = if code == EXIT_NOT_FOUND {
                "command not found"
            } else {
                "not executable"
            };
            eprintln!("skarn: {}: {what}", first.to_string_lossy());
            return Ok(code);
        }
    };

    let (limits, clamped) = rlimits(&policy);
    let mut cmd = Command::new(SANDBOX_EXEC);
    cmd.arg("-p")
        .arg(&text)
        .arg("--")
        .arg(&target)
        .args(&command[1..])
        .env_clear()
        .envs(kept.iter().map(|(k, v)| (k, v)))
        .current_dir(&cwd);
    // SAFETY: the closure runs in the child between fork and exec and only
    // makes async-signal-safe calls (setsid, setrlimit, getrlimit, fcntl)
    // on integers and stack values; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            for (res, val) in &limits {
                let lim = libc::rlimit {
                    rlim_cur: *val,
                    rlim_max: *val,
                };
                if libc::setrlimit(*res, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Descriptors above 2 inherited from our caller stay behind.
            let mut nofile = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut nofile) == 0 {
                nofile.rlim_cur.min(65_536) as libc::c_int
            } else {
                1024
            };
            for fd in 3..top {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
            Ok(())
        });
    }
    install_forwarding();
    let child = cmd.spawn().map_err(MacosError::Spawn)?;
    report.layers = super::report::layers(&policy, clamped);
    let pid = child.id() as libc::pid_t;
    CHILD_PGID.store(pid, Ordering::SeqCst);

    let timed_out = supervise(pid, policy.limits.timeout_secs);
    let status = reap(pid);
    CHILD_PGID.store(0, Ordering::SeqCst);
    drop(child);

    report.egress = proxy.and_then(|p| p.finish());
    if timed_out {
        eprintln!(
            "skarn: timeout: the command ran longer than {} s; its process group was killed",
            policy.limits.timeout_secs.unwrap_or(0)
        );
    }
    match report_format {
        ReportFormat::None => {}
        ReportFormat::Text => eprint!("{}", report.render_text()),
        ReportFormat::Json => eprintln!("{}", serde_json::to_string(&report).unwrap_or_default()),
    }
    drop(temp);
    let code = status.map_err(MacosError::Spawn)?;
    Ok(if timed_out { EXIT_TIMEOUT } else { code })
}

/// Wait until the command (the group leader) exits, without reaping it, so
/// its process group id cannot be reused; a timer thread kills the group at
/// the deadline. Then kill whatever is left of the group. Returns whether
/// the timeout fired.
fn supervise(pid: libc::pid_t, timeout_secs: Option<u64>) -> bool {
    let state = Arc::new((Mutex::new((false, false)), Condvar::new()));
    let timer = timeout_secs.map(|secs| {
        let state = state.clone();
        std::thread::spawn(move || {
            let (lock, cv) = &*state;
            let Ok(guard) = lock.lock() else { return };
            let Ok((mut guard, _)) =
                cv.wait_timeout_while(guard, Duration::from_secs(secs), |s| !s.0)
            else {
                return;
            };
            if !guard.0 {
                guard.1 = true;
                // SAFETY: the leader is not reaped yet (the main thread
                // reaps only after setting `done` under this lock), so the
                // group id is still ours.
                unsafe { libc::killpg(pid, libc::SIGKILL) };
            }
        })
    });
    loop {
        // SAFETY: waitid writes into the zeroed siginfo we own; WNOWAIT
        // leaves the child waitable.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let (lock, cv) = &*state;
    let timed_out = match lock.lock() {
        Ok(mut g) => {
            g.0 = true;
            g.1
        }
        Err(_) => false,
    };
    cv.notify_all();
    // Leftovers of the group (background jobs) end with the command.
    // SAFETY: the leader is still a zombie: the group id is ours.
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    if let Some(t) = timer {
        let _ = t.join();
    }
    timed_out
}

/// Reap the command and turn its status into an exit code.
fn reap(pid: libc::pid_t) -> std::io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes the status into our integer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    })
}
