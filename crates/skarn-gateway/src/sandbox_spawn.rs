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
use skarn_sandbox::prepare::PrepareError;
#[cfg(target_os = "linux")]
use skarn_sandbox::{HostFacts, NetPolicy, PlanError};

use crate::sandbox_config::SandboxConfig;
#[cfg(target_os = "linux")]
use crate::sandbox_facts::{both, find_on_path, install_roots, interpreter};
#[cfg(target_os = "linux")]
use crate::sandbox_policy::{ServerFacts, env_overrides, server_policy, toolchain_of};

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
#[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
#[allow(clippy::needless_return)] // one block per OS, each returning
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    state: Option<&Path>,
    alias: &str,
    command: &str,
    args: &[String],
    cwd: Option<&PathBuf>,
    cfg: &SandboxConfig,
    mut env: Vec<(OsString, OsString)>,
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
        // Grants are decided against the user's own home; a file the user
        // has not trusted cannot move it with `env.HOME` (atk25d F8).
        let home = match &cfg.project_only {
            Some(_) => std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute()),
            None => var(&env, "HOME"),
        };
        let state = state.ok_or(SandboxError::NoStateHome)?.to_path_buf();
        let path: Option<PathBuf> = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.into());
        let base = cwd.cloned().unwrap_or_else(|| state.clone());
        // A relative command with a slash is found from the configured working
        // directory, else from the gateway's, as when it runs unconfined; the
        // sandbox starts it by its absolute path.
        let here = std::env::current_dir().unwrap_or_else(|_| state.clone());
        let command_path = (command.contains('/') && !Path::new(command).is_absolute())
            .then(|| cwd.unwrap_or(&here).join(command));
        let command_arg: &str = match &command_path {
            Some(p) => p.to_str().unwrap_or(command),
            None => command,
        };
        let mut facts = ServerFacts {
            state_dir: state.clone(),
            cwd: cwd.cloned(),
            ..Default::default()
        };
        if let Some(c) = find_on_path(command_arg, path.as_ref(), &base) {
            facts.command = both(&c);
            if let Some(i) = interpreter(&c, path.as_ref(), &base) {
                facts.interpreter = both(&i);
            }
        } else {
            let looked = match &command_path {
                Some(p) => format!("at {}", p.display()),
                None => "on PATH".into(),
            };
            return Err(SandboxError::NotFound(command.to_owned(), looked));
        }
        for a in args {
            let p = Path::new(a);
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            };
            if p.is_file() {
                match &cfg.project_only {
                    Some(d) if !inside(&p, d) => tracing::warn!(
                        "server {alias}: argument {} lies outside {} and that file is not \
                         trusted: not granted (run `skarn trust` on it to grant it)",
                        p.display(),
                        d.display()
                    ),
                    _ => facts.arg_files.push(p),
                }
            }
        }
        let guard = crate::install_guard::InstallGuard::new(home.as_deref());
        let mut roots = Vec::new();
        for p in facts
            .command
            .iter()
            .chain(&facts.interpreter)
            .chain(&facts.arg_files)
        {
            install_roots(p, &guard, &mut roots);
        }
        // Whatever found them, never a home, what holds one or a secret
        // place (atk27m F3).
        roots.retain(|r| match guard.refuses(r, false) {
            Some(why) => {
                tracing::warn!(
                    "server {alias}: {} is not granted as its installation: {why}",
                    r.display()
                );
                false
            }
            None => true,
        });
        if let Some(d) = &cfg.project_only {
            // A project's own files (a pyvenv.cfg, a node_modules link)
            // grant nothing outside it but a real interpreter installation
            // (atk25d F8).
            roots.retain(|r| {
                let keep =
                    inside(r, d) || crate::sandbox_facts::is_interpreter_prefix(r, home.as_deref());
                if !keep {
                    tracing::warn!(
                        "server {alias}: {} (named by the project's files) lies outside {} and \
                         is not an interpreter installation: not granted",
                        r.display(),
                        d.display()
                    );
                }
                keep
            });
        }
        roots.sort();
        roots.dedup();
        // The server's own installed files, unlike an interpreter's
        // prefix, a virtual environment or a dependency tree, are few and
        // walked whole for a granted secret's value (atk27k F4).
        facts.own_roots = roots
            .iter()
            .filter(|r| {
                !r.ends_with("node_modules")
                    && !r.join("pyvenv.cfg").exists()
                    && !crate::sandbox_facts::is_interpreter_prefix(r, home.as_deref())
            })
            .cloned()
            .collect();
        facts.install_roots = roots;
        facts.resolv_target = skarn_sandbox::policy::assemble::resolv_conf_target();

        let tools = toolchain_of(command, &facts);
        let mut policy = server_policy(alias, cfg, &facts, home.as_deref(), &tools)?;
        let others = crate::state_guard::other_states(&state);
        for note in crate::state_guard::keep_state_private(&mut policy, &state, &others) {
            tracing::warn!("server {alias}: {note}");
        }
        let mut caches: Vec<(&str, PathBuf)> = Vec::new();
        if let Some(h) = &home {
            for (t, var, dir) in [
                ("node", "npm_config_cache", ".npm"),
                ("python", "UV_CACHE_DIR", ".cache/uv"),
                ("python", "UV_PYTHON_INSTALL_DIR", ".local/share/uv/python"),
                ("python", "PIP_CACHE_DIR", ".cache/pip"),
            ] {
                if tools.contains(&t) && h.join(dir).is_dir() {
                    caches.push((var, h.join(dir)));
                }
            }
        }
        if matches!(policy.net, NetPolicy::DenyAll | NetPolicy::AllowLoopback) {
            // No network: package runners use their cache only and fail at
            // once (with the hint of `crate::sandbox_hint`) instead of retrying.
            for (t, var, val) in [
                ("node", "npm_config_offline", "true"),
                ("python", "UV_OFFLINE", "1"),
                ("python", "PIP_NO_INDEX", "1"),
            ] {
                if tools.contains(&t) {
                    caches.push((var, PathBuf::from(val)));
                }
            }
        }
        // `registries` discovery trusts nothing the server may write.
        let mut writable: Vec<PathBuf> = vec![policy.workspace.clone()];
        writable.extend(policy.write.iter().map(|g| g.path.clone()));
        if let NetPolicy::AllowHosts(l) = &mut policy.net
            && l.allow
                .iter()
                .any(|a| a == skarn_egress::registries::KEYWORD)
        {
            let t: Vec<&str> = if tools.is_empty() {
                vec!["node", "python"]
            } else {
                tools.clone()
            };
            let found = skarn_egress::registries::discover(&state, &writable, &t);
            let mut allow: Vec<String> = Vec::new();
            for a in std::mem::take(&mut l.allow) {
                if a == skarn_egress::registries::KEYWORD {
                    allow.extend(found.patterns.iter().cloned());
                } else {
                    allow.push(a);
                }
            }
            allow.dedup();
            if allow.is_empty() {
                return Err(SandboxError::Registries(found.notes.join("; ")));
            }
            l.allow = allow;
        }
        // The secrets configuration, its sources and the dotfiles holding
        // values are the user's: read from the gateway's own home, never
        // from a server's `env.HOME`, which would move every source out
        // of sight (atk27k F14).
        let user_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        for f in crate::sandbox_secrets::source_files(user_home.as_deref())
            .map_err(SandboxError::Secrets)?
        {
            policy
                .deny_read
                .push(skarn_sandbox::policy::Grant::new(f, "[secrets] file"));
        }
        policy.host_places = crate::sandbox_secrets::host_places(user_home.as_deref())
            .map_err(SandboxError::Secrets)?;
        let server_writable: Vec<PathBuf> = [policy.workspace.clone(), state.clone()]
            .into_iter()
            .chain(policy.write.iter().map(|g| g.path.clone()))
            .collect();
        let secrets =
            crate::sandbox_secrets::resolve(secrets, &server_writable, user_home.as_deref())
                .map_err(SandboxError::Secrets)?;
        // The server's home is its state directory: where the user's
        // dotfiles held a granted value, the copy with the placeholder is
        // written there at start (as `skarn run` gets it in its private
        // home); before the check below, which would otherwise refuse a
        // cargo configuration the server never sees.
        let copies = user_home.as_deref().map(|h| {
            let c = skarn_sandbox::secrets::home_copies::place(
                &mut policy,
                secrets.as_ref(),
                h,
                skarn_sandbox::secrets::home_copies::Home::State(&state),
            );
            for f in c.replaced() {
                tracing::info!(
                    "server {alias}: {}: holds a credential; the server reads a copy without it",
                    f.display()
                );
            }
            c
        });
        if let Some(s) = &secrets {
            crate::sandbox_secrets::refuse_stored_values(s, &mut policy, user_home.as_deref())
                .map_err(SandboxError::Secrets)?;
            s.widen_net(&mut policy.net)
                .map_err(SandboxError::Secrets)?;
            env.retain(|(_, v)| !s.holds_value(v.as_encoded_bytes()));
        }
        if secrets.is_some() {
            skarn_sandbox::secrets::egress_secrets::tidy_ca_dir(&state);
        }
        let mut argv: Vec<OsString> = vec![command_arg.into()];
        argv.extend(args.iter().map(OsString::from));
        let host = host_facts(&policy);
        let prepared = match skarn_sandbox::prepare::prepare(skarn_sandbox::prepare::Request {
            purpose: skarn_sandbox::prepare::Purpose::Server,
            policy,
            argv: &argv,
            // The grant log and the edit leases are the user's: a server's
            // `env.HOME` would record its writable grants where no later
            // run's check looks (atk27l F8).
            home: user_home.as_deref(),
            host: Some(host),
            path_var: None,
        }) {
            Ok(p) => p,
            Err(PrepareError::Plan(PlanError::CannotEnforce(why))) => return Ok((off(why)?, env)),
            Err(e) => return Err(e.into()),
        };
        for w in &prepared.warnings {
            tracing::warn!("server {alias}: {w}");
        }
        let (policy, mut plan) = (prepared.policy, prepared.plan);
        if let Some(s) = secrets {
            // The proxy's upstream roots are the gateway's own (the
            // user's), never the server's environment nor a place it can
            // write (atk27h F2, F3).
            let writable: Vec<std::path::PathBuf> = [policy.workspace.clone(), state.clone()]
                .into_iter()
                .chain(policy.write.iter().map(|g| g.path.clone()))
                .chain(policy.cache_dirs.iter().cloned())
                .collect();
            for w in s
                .attach(
                    &mut plan,
                    &state.join(skarn_sandbox::secrets::egress_secrets::CA_DIR),
                    &writable,
                )
                .map_err(SandboxError::Secrets)?
            {
                tracing::warn!("server {alias}: {w}");
            }
        }
        if let Some(c) = copies {
            c.attach(&mut plan);
        }
        plan.report_format = skarn_sandbox::linux::plan::ReportFormat::None;
        env.retain(|(k, _)| {
            !k.to_str()
                .is_some_and(|k| k == "HOME" || k == "TMPDIR" || k.starts_with("XDG_"))
        });
        for (k, v) in env_overrides(&state, &caches) {
            env.push((k.into(), v.into()));
        }
        let mut mode = format!("sandboxed (net {}", policy.net.as_str());
        if let NetPolicy::AllowHosts(l) = &policy.net {
            mode.push_str(&format!(": {}", l.allow.join(", ")));
        }
        mode.push(')');
        if plan.report.status != skarn_sandbox::Status::FullyEnforced {
            mode.push_str(", partly enforced on this host: see `skarn doctor`");
        }
        let (cmd, audit) = skarn_sandbox::linux::launch::helper_command_audited(exe, &plan, &env)?;
        let audit = audit.map(crate::proxy_audit::AuditPipe);
        return Ok((Prepared::Confined { cmd, mode, audit }, env));
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
