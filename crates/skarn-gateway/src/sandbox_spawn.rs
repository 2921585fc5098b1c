//! Starting a stdio downstream inside the sandbox (issue 12): the host
//! facts about its command ([`crate::sandbox_policy::ServerFacts`]), its
//! private state directory, the plan, and the helper command that runs it.
//!
//! The helper is this program re-executed (`__sandbox-helper`): the
//! binary registers itself with [`set_helper`] (the `skarn` binary does);
//! a library user that registers nothing gets unconfined servers whose
//! state says so (and a server with `enabled = true` fails).

use std::ffi::OsString;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use skarn_sandbox::{HostFacts, PlanError};

use crate::sandbox_config::SandboxConfig;

/// Why a server is not confined on a system without a sandbox backend.
#[cfg(not(target_os = "linux"))]
pub const NO_BACKEND: &str = "no sandbox backend for this OS in this build";

static HELPER: OnceLock<PathBuf> = OnceLock::new();
#[cfg(target_os = "linux")]
static HOST: OnceLock<HostFacts> = OnceLock::new();

/// Register the executable whose `main` dispatches `__sandbox-helper`
/// (usually the running program itself).
pub fn set_helper(exe: PathBuf) {
    let _ = HELPER.set(exe);
}

/// The registered helper executable.
pub fn helper() -> Option<&'static Path> {
    HELPER.get().map(PathBuf::as_path)
}

/// Why a sandboxed server cannot be started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("sandbox.enabled = true, but {0}")]
    Required(String),
    #[error("cannot create the state directory {path}: {err}")]
    StateDir {
        path: PathBuf,
        #[source]
        err: std::io::Error,
    },
    #[error("cannot run {0:?}: no such file (looked {1})")]
    NotFound(String, String),
    #[error("no home or state directory: set HOME or XDG_STATE_HOME")]
    NoStateHome,
    #[error("net = \"allow:registries\": {0}")]
    Registries(String),
    #[error("secrets: {0}")]
    Secrets(String),
    #[error(transparent)]
    Grant(#[from] skarn_sandbox::policy::grants::GrantError),
    #[error(transparent)]
    Prepare(#[from] skarn_sandbox::prepare::PrepareError),
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Policy(#[from] skarn_sandbox::PolicyError),
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Launch(#[from] skarn_sandbox::linux::launch::LaunchError),
}

/// What to run (made once per server start: its size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Prepared {
    /// The helper command (environment and plan set) and a description of
    /// the confinement (`sandboxed (net deny)`).
    Confined {
        cmd: std::process::Command,
        mode: String,
        /// The read end of its network proxy's audit pipe, when it has
        /// one (atk27h F4).
        #[cfg(target_os = "linux")]
        audit: Option<crate::proxy_audit::AuditPipe>,
    },
    /// Run the command itself; why it is not confined.
    Unconfined { reason: String },
}

fn var(env: &[(OsString, OsString)], k: &str) -> Option<PathBuf> {
    env.iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| PathBuf::from(v))
        .filter(|p| p.is_absolute())
}

/// `$XDG_STATE_HOME/skarn-servers/<name>`, else
/// `~/.local/state/skarn-servers/<name>` (outside Skarn's own state
/// directory, `~/.local/state/skarn`, a secret path of the sandbox);
/// `name` from [`crate::state_dirs::dir_name`].
pub fn state_dir(name: &str, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let base =
        var(env, "XDG_STATE_HOME").or_else(|| var(env, "HOME").map(|h| h.join(".local/state")))?;
    Some(base.join("skarn-servers").join(name))
}

/// Create the state directory named `name` (mode 0700), clear what killed
/// runs left in it, and return its canonical path; `None` without a home
/// or state directory.
pub fn ensure_state_dir(
    name: &str,
    env: &[(OsString, OsString)],
) -> Result<Option<PathBuf>, SandboxError> {
    match state_dir(name, env) {
        Some(d) => {
            let d = make_private_dir(&d)?;
            crate::state_dirs::sweep(&d);
            crate::state_dirs::note_used(&d);
            Ok(Some(d))
        }
        None => Ok(None),
    }
}

fn make_private_dir(p: &Path) -> Result<PathBuf, SandboxError> {
    let err = |err| SandboxError::StateDir {
        path: p.to_path_buf(),
        err,
    };
    std::fs::create_dir_all(p).map_err(err)?;
    #[cfg(unix)]
    for d in [p, p.parent().unwrap_or(p)] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
    }
    std::fs::canonicalize(p).map_err(err)
}

/// The host's facts, probed and (for root) walked for system entries
/// closed to others once per gateway: a server's restart does not pay
/// for them again. What depends on a server's grants is observed again
/// for each one by [`skarn_sandbox::prepare::prepare`].
#[cfg(target_os = "linux")]
fn host_facts(policy: &skarn_sandbox::Policy) -> HostFacts {
    HOST.get_or_init(|| {
        let mut h = HostFacts::probe();
        h.observe_policy(policy);
        // Each server's helper is a fresh exec that binds its own
        // idmapped trees: the gateway keeps none mounted.
        skarn_sandbox::linux::idmap::release();
        h
    })
    .clone()
}

/// Prepare the start of a stdio server: confined when its configuration
/// and the host allow it. `env` is its whole (minimal) environment.
/// Without a sandbox backend for this OS, the server runs unconfined (and
/// one with `enabled = true` fails) with [`NO_BACKEND`] as the reason.
#[allow(clippy::needless_return)] // one block per OS, each returning
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    state: Option<&Path>,
    alias: &str,
    command: &str,
    args: &[String],
    cwd: Option<&PathBuf>,
    cfg: &SandboxConfig,
    env: Vec<(OsString, OsString)>,
    secrets: &[(String, String)],
) -> Result<(Prepared, Vec<(OsString, OsString)>), SandboxError> {
    let required = cfg.enabled == Some(true);
    let off = |reason: String| -> Result<_, SandboxError> {
        if required {
            Err(SandboxError::Required(reason))
        } else {
            Ok(Prepared::Unconfined { reason })
        }
    };
    if cfg.enabled == Some(false) {
        return Ok((
            Prepared::Unconfined {
                reason: format!("sandbox.enabled = false ({})", cfg.at),
            },
            env,
        ));
    }
    let Some(exe) = helper() else {
        return Ok((off("this program has no sandbox helper".into())?, env));
    };
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (exe, state, alias, command, args, cwd, secrets);
        return Ok((off(NO_BACKEND.into())?, env));
    }
    #[cfg(target_os = "linux")]
    {
        return confined::prepare(
            exe, state, alias, command, args, cwd, cfg, env, secrets, off,
        );
    }
}

/// Whether `p`, resolved, lies in `dir` (itself resolved).
#[cfg(target_os = "linux")]
fn inside(p: &Path, dir: &Path) -> bool {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    real.starts_with(dir)
}

#[cfg(test)]
mod tests;

#[cfg(target_os = "linux")]
mod confined;
