//! `skarn run` on systems other than Linux: the entry point a sandbox
//! backend (macOS Seatbelt, Windows AppContainer) implements.
//!
//! On Linux, `run.rs` drives `skarn-sandbox` itself and this module is not
//! built. Elsewhere `run.rs` builds the same [`Policy`] and scrubbed
//! environment, handles `--no-sandbox`, and then calls [`run_confined`].
//! macOS runs the Seatbelt backend ([`skarn_sandbox::macos`]). Elsewhere,
//! until a backend is wired in, it fails with [`NO_BACKEND`]: one line on
//! stderr and exit status 2 (a set-up error, as documented in
//! `skarn run --help`); nothing runs unconfined.

use std::ffi::OsString;
use std::process::ExitCode;

use skarn_sandbox::Policy;

use super::run::Args;

/// The error of a build without a sandbox backend for its OS.
pub const NO_BACKEND: &str = "skarn run: no sandbox backend for this OS in this build";

/// Run `args.command` confined by `policy`, with environment `env`
/// (already scrubbed of the variables named in `removed`, for the report).
/// Returns the command's exit status.
#[cfg(not(target_os = "macos"))]
pub fn run_confined(
    policy: Policy,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let _ = (policy, env, removed, args);
    anyhow::bail!(NO_BACKEND)
}

/// macOS: Seatbelt ([`skarn_sandbox::macos::run`]), which scrubs the
/// caller's environment itself (the same rule, so `env` and `removed` are
/// what it computes) and reports the removed names.
#[cfg(target_os = "macos")]
pub fn run_confined(
    policy: Policy,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    use skarn_sandbox::report::ReportFormat;
    let _ = (env, removed);
    if args.compress.compress {
        anyhow::bail!("skarn run: --compress is not available with the macOS sandbox yet");
    }
    let format = if args.json {
        ReportFormat::Json
    } else if args.report {
        ReportFormat::Text
    } else {
        ReportFormat::None
    };
    let code = skarn_sandbox::macos::run(&policy, &args.command, std::env::vars_os(), format)?;
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
