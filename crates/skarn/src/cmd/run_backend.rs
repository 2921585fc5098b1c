//! `skarn run` on systems other than Linux: the entry point a sandbox
//! backend (macOS Seatbelt, Windows AppContainer) implements.
//!
//! On Linux, `run.rs` drives `skarn-sandbox` itself and this module is not
//! built. Elsewhere `run.rs` builds the same [`Policy`] and scrubbed
//! environment, handles `--no-sandbox`, and then calls [`run_confined`].
//! Until a backend is wired in, it fails with [`NO_BACKEND`]: one line on
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
pub fn run_confined(
    policy: Policy,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let _ = (policy, env, removed, args);
    anyhow::bail!(NO_BACKEND)
}
