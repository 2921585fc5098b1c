//! `skarn run` on systems other than Linux: the entry point a sandbox
//! backend (macOS Seatbelt, Windows AppContainer) implements.
//!
//! On Linux, `run.rs` drives `skarn-sandbox` itself and this module is not
//! built. Elsewhere `run.rs` builds the same [`Policy`] and scrubbed
//! environment, handles `--no-sandbox`, and then calls [`run_confined`].
//! macOS runs the Seatbelt backend ([`skarn_sandbox::macos`]); Windows runs
//! the command in the workspace's AppContainer (`skarn_sandbox::windows`).
//! On any other system it fails with [`NO_BACKEND`]: one line on stderr and
//! exit status 2 (a set-up error, as documented in `skarn run --help`);
//! nothing runs unconfined.

use std::ffi::OsString;
use std::process::ExitCode;

use skarn_sandbox::{Policy, Provenance};

use super::run_args::Args;

/// `$HOME` when it is an absolute path (where the grant log lives).
#[cfg(any(windows, target_os = "macos"))]
fn home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The error of a build without a sandbox backend for its OS.
pub const NO_BACKEND: &str = "skarn run: no sandbox backend for this OS in this build";

/// Run `args.command` confined by `policy` (assembled with `provenance`,
/// for the report), with environment `env` (already scrubbed of the
/// variables named in `removed`, for the report). Returns the command's
/// exit status.
#[cfg(not(target_os = "macos"))]
pub fn run_confined(
    policy: Policy,
    provenance: &Provenance,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    #[cfg(windows)]
    {
        let _ = (env, removed);
        appcontainer(policy, provenance, args)
    }
    #[cfg(not(windows))]
    {
        let _ = (policy, provenance, env, removed, args);
        anyhow::bail!(NO_BACKEND)
    }
}

/// Windows: the workspace's AppContainer (`skarn_sandbox::windows`). The
/// backend scrubs the environment itself (same rule, same `allow_env`), so
/// the names it removes are in its report; it is given the process's own.
#[cfg(windows)]
fn appcontainer(policy: Policy, provenance: &Provenance, args: &Args) -> anyhow::Result<ExitCode> {
    use skarn_sandbox::report::ReportFormat;
    if args.compress.compress {
        anyhow::bail!("--compress is not available with the Windows sandbox yet");
    }
    let mut policy = policy;
    let settled = skarn_sandbox::prepare::settle_grants(&mut policy, home().as_deref())?;
    for w in &settled.warnings {
        crate::cmd::say::say(&format!("warning: {w}"));
    }
    let grant_notes = settled.notes;
    let format = if args.json {
        ReportFormat::Json
    } else if args.report {
        ReportFormat::Text
    } else {
        ReportFormat::None
    };
    if format != ReportFormat::None {
        for n in grant_notes {
            eprintln!("skarn: note: {n}");
        }
    }
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let code = skarn_sandbox::windows::run(&policy, provenance, &args.command, &env, format)?;
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// macOS: Seatbelt ([`skarn_sandbox::macos::run`]), which scrubs the
/// caller's environment itself (the same rule, so `env` and `removed` are
/// what it computes) and reports the removed names.
#[cfg(target_os = "macos")]
pub fn run_confined(
    policy: Policy,
    provenance: &Provenance,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    use skarn_sandbox::report::ReportFormat;
    let _ = (env, removed);
    if args.compress.compress {
        anyhow::bail!("skarn run: --compress is not available with the macOS sandbox yet");
    }
    let mut policy = policy;
    let settled = skarn_sandbox::prepare::settle_grants(&mut policy, home().as_deref())?;
    for w in &settled.warnings {
        crate::cmd::say::say(&format!("warning: {w}"));
    }
    if args.report || args.json {
        for n in &settled.notes {
            eprintln!("skarn: note: {n}");
        }
    }
    let format = if args.json {
        ReportFormat::Json
    } else if args.report {
        ReportFormat::Text
    } else {
        ReportFormat::None
    };
    let code = skarn_sandbox::macos::run(
        &policy,
        provenance,
        &args.command,
        std::env::vars_os(),
        format,
    )?;
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
