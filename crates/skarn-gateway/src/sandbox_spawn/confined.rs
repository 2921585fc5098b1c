//! The Linux half of [`super::prepare`]: a stdio server's facts (its
//! command, interpreter and installation roots), its policy with the
//! package managers' caches and `allow:registries` expanded, its secrets
//! and the helper command that starts it confined.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use skarn_sandbox::prepare::PrepareError;
use skarn_sandbox::{NetPolicy, PlanError};

use super::{Prepared, SandboxError, host_facts, inside, var};
use crate::sandbox_config::SandboxConfig;
use crate::sandbox_facts::{both, find_on_path, install_roots, interpreter};
use crate::sandbox_policy::{ServerFacts, env_overrides, server_policy, toolchain_of};

/// What [`facts`] found: the server's facts, its home and the command as
/// the sandbox starts it.
struct Found {
    facts: ServerFacts,
    home: Option<PathBuf>,
    state: PathBuf,
    command_arg: String,
}

/// Confine the server (see [`super::prepare`]); `off` says why it runs
/// unconfined where the host cannot enforce the plan.
#[allow(clippy::too_many_arguments)]
pub(super) fn prepare(
    exe: &Path,
    state: Option<&Path>,
    alias: &str,
    command: &str,
    args: &[String],
    cwd: Option<&PathBuf>,
    cfg: &SandboxConfig,
    mut env: Vec<(OsString, OsString)>,
    secrets: &[(String, String)],
    off: impl Fn(String) -> Result<Prepared, SandboxError>,
) -> Result<(Prepared, Vec<(OsString, OsString)>), SandboxError> {
    let Found {
        facts,
        home,
        state,
        command_arg,
    } = self::facts(state, command, args, cwd, cfg, &env, alias)?;
    let command_arg = command_arg.as_str();

    let tools = toolchain_of(command, &facts);
    let mut policy = server_policy(alias, cfg, &facts, home.as_deref(), &tools)?;
    let others = crate::state_guard::other_states(&state);
    for note in crate::state_guard::keep_state_private(&mut policy, &state, &others) {
        tracing::warn!("server {alias}: {note}");
    }
    let caches = package_env(home.as_deref(), &tools, &policy.net);
    expand_registries(&mut policy, &state, &tools)?;
    // The secrets configuration, its sources and the dotfiles holding
    // values are the user's: read from the gateway's own home, never
    // from a server's `env.HOME`, which would move every source out
    // of sight (atk27k F14).
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    for f in
        crate::sandbox_secrets::source_files(user_home.as_deref()).map_err(SandboxError::Secrets)?
    {
        policy
            .deny_read
            .push(skarn_sandbox::policy::Grant::new(f, "[secrets] file"));
    }
    policy.host_places =
        crate::sandbox_secrets::host_places(user_home.as_deref()).map_err(SandboxError::Secrets)?;
    let server_writable: Vec<PathBuf> = [policy.workspace.clone(), state.clone()]
        .into_iter()
        .chain(policy.write.iter().map(|g| g.path.clone()))
        .collect();
    let secrets = crate::sandbox_secrets::resolve(secrets, &server_writable, user_home.as_deref())
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
    Ok((Prepared::Confined { cmd, mode, audit }, env))
}

/// The server's command, interpreter, argument files and installation
/// roots, found as the unconfined server would find them.
fn facts(
    state: Option<&Path>,
    command: &str,
    args: &[String],
    cwd: Option<&PathBuf>,
    cfg: &SandboxConfig,
    env: &[(OsString, OsString)],
    alias: &str,
) -> Result<Found, SandboxError> {
    // Grants are decided against the user's own home; a file the user
    // has not trusted cannot move it with `env.HOME` (atk25d F8).
    let home = match &cfg.project_only {
        Some(_) => std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute()),
        None => var(env, "HOME"),
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
    let command_arg = command_arg.to_owned();
    Ok(Found {
        facts,
        home,
        state,
        command_arg,
    })
}

/// The package managers' cache places (and, without a network, their
/// offline switches) for the server's toolchains.
fn package_env(
    home: Option<&Path>,
    tools: &[&str],
    net: &NetPolicy,
) -> Vec<(&'static str, PathBuf)> {
    let mut caches: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(h) = home {
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
    if matches!(net, NetPolicy::DenyAll | NetPolicy::AllowLoopback) {
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
    caches
}

/// `allow:registries` replaced by the hosts the server's toolchains'
/// own configuration names.
fn expand_registries(
    policy: &mut skarn_sandbox::Policy,
    state: &Path,
    tools: &[&str],
) -> Result<(), SandboxError> {
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
            tools.to_vec()
        };
        let found = skarn_egress::registries::discover(state, &writable, &t);
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
    Ok(())
}
