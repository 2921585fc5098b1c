//! `skarn exec` with nothing to bridge (no `--config`): instead of starting
//! a cold worker, this process applies the worker's own confinement to
//! itself ([`skarn_worker::confine::confine`]: no capabilities, rlimits,
//! `no_new_privs`, a Landlock domain with no filesystem or network right,
//! the seccomp allow-list; it refuses every call that makes a socket, so
//! no network namespace is made: ADR 0261) and runs the isolate here. The
//! result's `isolation` is then `self_confined`. Like a worker,
//! whose environment is empty, it first empties its environment and wipes
//! the environment strings from its memory: no token of the caller's is
//! left for a script that escaped the isolate to print.
//!
//! Taken only when every step can be expected to hold and the output can
//! still be written: Linux, a Landlock-capable kernel, and standard output
//! and error that are not regular files (the confinement sets
//! `RLIMIT_FSIZE` to 0). Must run while the process is single-threaded.

use std::os::fd::AsFd;

use skarn_codemode::{ExecOutcome, Limits, bridge::NoServers};
use skarn_worker::confine::{ConfineOptions, Network, confine, kernel_landlock_abi};

/// Debug builds only: run the worker's escape self-test (a JSON
/// [`skarn_worker::SelftestSpec`]) after confining, instead of the script,
/// and print its attempts as JSON (see tests/it/exec_self_confined.rs).
pub const SELFTEST_ENV: &str = "SKARN_TEST_EXEC_SELFTEST";

/// Why this process cannot confine itself, if it cannot.
pub fn unavailable() -> Option<&'static str> {
    if kernel_landlock_abi() < 1 {
        return Some("no Landlock");
    }
    if is_regular_file(std::io::stdout().as_fd()) || is_regular_file(std::io::stderr().as_fd()) {
        return Some("output goes to a regular file");
    }
    None
}

fn is_regular_file(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    fd.try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

/// What ran.
pub enum Ran {
    /// The script's outcome.
    Script(ExecOutcome),
    /// The self-test's attempts (debug builds, [`SELFTEST_ENV`]).
    Selftest(Vec<skarn_worker::Attempt>),
}

/// Confine this process and run `code`; `Err` (nothing ran) when a
/// confinement step failed.
pub fn run(code: &str, limits: &Limits) -> Result<Ran, String> {
    let selftest = std::env::var(SELFTEST_ENV)
        .ok()
        .filter(|_| cfg!(debug_assertions))
        .map(|s| serde_json::from_str::<skarn_worker::SelftestSpec>(&s))
        .transpose()
        .map_err(|e| format!("{SELFTEST_ENV}: {e}"))?;
    let opts = ConfineOptions {
        memory_bytes: limits.memory_bytes as u64,
        stack_bytes: limits.stack_bytes as u64,
        parent_pid: None,
        skip_seccomp: false,
        // One process, one script: no network namespace, the seccomp
        // allow-list makes no socket at all (ADR 0261).
        network: Network::SyscallFilter,
    };
    forget_environment();
    confine(&opts).map_err(|e| format!("confinement failed at {e}"))?;
    if let Some(spec) = selftest {
        return Ok(Ran::Selftest(skarn_worker::selftest::run(&spec)));
    }
    Ok(Ran::Script(skarn_codemode::execute(
        code,
        std::sync::Arc::new(NoServers),
        limits,
    )))
}

/// Remove every environment variable and zero the block of environment
/// strings the kernel placed on the stack at exec (`/proc/self/environ`),
/// so that none of their values stays in memory. Called single-threaded;
/// nothing reads the environment afterwards.
fn forget_environment() {
    let keys: Vec<_> = std::env::vars_os().map(|(k, _)| k).collect();
    for k in keys {
        // SAFETY: the process is single-threaded here (`skarn exec` runs
        // this before the isolate's thread exists), so no other thread
        // reads the environment concurrently.
        unsafe { std::env::remove_var(k) };
    }
    let Some((start, end)) = environment_block() else {
        return;
    };
    if end > start {
        // SAFETY: [start, end) is this process's own initial environment
        // block (`env_start`/`env_end` of /proc/self/stat), writable memory
        // at the top of the main stack; the C library's `environ` no longer
        // points into it (every variable was removed above) and nothing
        // else holds a reference to those strings.
        unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
    }
}

/// `env_start` and `env_end` (fields 50 and 51 of /proc/self/stat).
fn environment_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let start = fields.get(50 - 3)?.parse().ok()?;
    let end = fields.get(51 - 3)?.parse().ok()?;
    Some((start, end))
}
