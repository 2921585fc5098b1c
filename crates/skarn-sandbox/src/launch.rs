//! Starting the helper from the caller's side.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use crate::helper::PLAN_ENV;
use crate::plan::Plan;

/// Arguments placed after the executable to enter the helper.
pub const HELPER_ARG: &str = "__sandbox-helper";

/// Errors preparing the helper command.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The plan could not be serialised.
    #[error("cannot serialise the sandbox plan: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The plan is too large for an environment variable.
    #[error("sandbox plan too large ({0} bytes); use fewer grants")]
    TooLarge(usize),
}

/// Build the command that runs `plan` through the helper: `exe` must be a
/// binary whose `main` dispatches `__sandbox-helper` to
/// [`crate::helper::helper_main`] before doing anything else. The command's
/// environment is exactly `env` (already scrubbed) plus the plan. Spawning
/// it from a multi-threaded program is safe: the helper is a fresh exec.
pub fn helper_command(
    exe: &Path,
    plan: &Plan,
    env: &[(OsString, OsString)],
) -> Result<Command, LaunchError> {
    let json = serde_json::to_string(plan)?;
    // Linux caps one environment string at 128 KiB.
    if json.len() > 120 * 1024 {
        return Err(LaunchError::TooLarge(json.len()));
    }
    let mut cmd = Command::new(exe);
    cmd.arg(HELPER_ARG);
    cmd.env_clear();
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.env(PLAN_ENV, json);
    Ok(cmd)
}
