//! `skarn run [OPTIONS] -- CMD [ARGS...]`: run one command inside the
//! kernel-enforced sandbox (see `skarn-sandbox`).

#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
#[cfg(target_os = "linux")]
use skarn_sandbox::linux::plan::ReportFormat;
use skarn_sandbox::policy::granted::GrantLog;
use skarn_sandbox::policy::layer_flags::FlagContext;
use skarn_sandbox::{Layer, LayerHost, Policy, Provenance, Workspace, WorkspaceRoot};

use crate::cmd::run_flags::flags_layer;

#[cfg(not(target_os = "linux"))]
use crate::cmd::run_backend::run_confined;

pub use crate::cmd::run_args::Args;

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

pub use crate::cmd::say::{for_reader, say};

/// Where the directories sandboxed runs could write are recorded.
fn granted_log_path(home: Option<&std::path::Path>) -> Option<PathBuf> {
    skarn_sandbox::policy::granted::log_path(home)
}

/// Build the policy from defaults, config files and flags.
pub fn build_policy(args: &Args) -> anyhow::Result<(Policy, Provenance)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = home();
    let root = match args.workspace_root.as_deref() {
        Some("cwd") => WorkspaceRoot::Cwd,
        _ => WorkspaceRoot::Repo,
    };
    let ws = Workspace::resolve(args.workspace.as_deref(), root, &cwd, home.as_deref())?;
    let mut layers = Vec::new();
    if !args.no_config {
        let granted = granted_log_path(home.as_deref())
            .map(|p| GrantLog::load(&p))
            .unwrap_or_default();
        let notes;
        let trust = skarn_sandbox::policy::trust::TrustStore::for_home(home.as_deref());
        (layers, notes) = Layer::config_files(&ws.path, home.as_deref(), &granted, &trust)?;
        for n in notes {
            say(&n);
        }
    }
    let at = FlagContext {
        cwd: &cwd,
        workspace: &ws.path,
        home: home.as_deref(),
    };
    layers.push(flags_layer(args, at)?);
    let mut layer_host = LayerHost::probe(home.clone(), cwd);
    layer_host.command = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (policy, provenance) = Policy::from_layers(&ws, &layers, &layer_host)?;
    // Before the first scan that keeps a record (the workspace's kind).
    #[cfg(unix)]
    if let Some(n) = policy.scan_cache_max {
        skarn_sandbox::protect::home_mentions::set_scan_cache_max(n);
    }
    // Whoever started this command chose its directory (an agent, a
    // gateway's `run` tool): the workspace must be a project directory
    // unless the user said otherwise.
    skarn_sandbox::policy::workspace_kind::refuse_non_project_workspace(
        &policy.workspace,
        home.as_deref(),
        policy.allow_home_workspace,
        args.allow_non_project_workspace,
    )?;
    // The repository's git configuration is read to keep what it runs
    // read-only; one too large to read whole is refused, not half-kept.
    #[cfg(unix)]
    if policy.protect_persistence
        && let Some(l) = skarn_sandbox::protect::git::git_vet::discover(&policy.workspace)
    {
        skarn_sandbox::protect::git::git_vet::checked_guards_for(&l, &[], home.as_deref())?;
    }
    for n in &provenance.notes {
        say(n);
    }
    Ok((policy, provenance))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // A model reads this run's output (before anything is said).
    if let Some(c) = &args.caller {
        skarn_sandbox::report::denials::Caller::set_for_process(
            skarn_sandbox::report::denials::Caller::parse(Some(c)),
        );
    }
    // One run, one look at where the home's links lead (asked by the
    // workspace checks and the planner alike).
    #[cfg(unix)]
    skarn_sandbox::protect::home_links::remember_scans();
    // (And the host's launcher list: checked once, ADR 0339.)
    #[cfg(unix)]
    skarn_sandbox::policy::workspace_kind::remember_lists();
    // The user's secrets configuration must parse before anything else:
    // every source's hiding depends on it (atk27l F13c).
    let user_secrets = crate::cmd::run_secrets::user_config(home().as_deref())?;
    // A run that may hold a secret's value (a `from_env` source in this
    // environment, a resolved value) leaves no core dump (atk27l F12).
    #[cfg(target_os = "linux")]
    if !user_secrets.secrets.is_empty() || !args.secret.is_empty() {
        skarn_sandbox::secrets::no_core::forbid_core_dumps()
            .map_err(|e| anyhow::anyhow!("cannot turn off core dumps: {e}"))?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = user_secrets;
    let (policy, provenance) = build_policy(&args)?;
    let (mut env, mut removed) =
        skarn_sandbox::policy::env::scrub(std::env::vars_os(), &policy.allow_env);
    // Sources of configured secrets, granted or not (issue 27).
    let sources = crate::cmd::run_secrets::source_variables(home().as_deref())?;
    // And a configured secret's value under any other name (atk27j F2).
    let known = crate::cmd::run_secrets::known_values(home().as_deref())?;
    env.retain(|(k, v)| {
        let drop = k.to_str().is_some_and(|k| sources.iter().any(|s| s == k))
            || known.holding(v.as_encoded_bytes()).is_some();
        if drop {
            removed.push(k.to_string_lossy().into_owned());
        }
        !drop
    });
    if args.no_sandbox {
        if !args.secret.is_empty() {
            anyhow::bail!("--secret needs the sandbox: it cannot be used with --no-sandbox");
        }
        eprintln!(
            "skarn: WARNING: --no-sandbox: `{}` runs UNCONFINED: full access to your files, \
             network and processes",
            args.command[0].to_string_lossy()
        );
        if args.compress.compress {
            let mut c = std::process::Command::new(&args.command[0]);
            c.args(&args.command[1..]);
            let line = crate::cmd::compress::command_line(&args.command);
            return crate::cmd::compress::run_compressed(c, &line, &args.compress.opts());
        }
        #[cfg(unix)]
        let err = std::process::Command::new(&args.command[0])
            .args(&args.command[1..])
            .exec();
        #[cfg(not(unix))]
        let err = match std::process::Command::new(&args.command[0])
            .args(&args.command[1..])
            .status()
        {
            Ok(s) => return Ok(ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8)),
            Err(e) => e,
        };
        let code = if err.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        };
        eprintln!("skarn: {}: {err}", args.command[0].to_string_lossy());
        return Ok(ExitCode::from(code));
    }
    let writable: Vec<std::path::PathBuf> = std::iter::once(policy.workspace.clone())
        .chain(policy.write.iter().map(|g| g.path.clone()))
        .collect();
    // The values readable without running anything (`file`, `from_env`)
    // are looked for first, so no `command` source runs for a run that
    // is refused anyway (s27b); a source's own value is known only after.
    if let Some(why) =
        skarn_sandbox::secrets::argv_values::refusal(&args.command, Some(&known), &[])
    {
        anyhow::bail!("{why}");
    }
    let secrets = crate::cmd::run_secrets::resolve(
        &args.secret,
        args.no_config,
        &policy.workspace,
        &writable,
        home().as_deref(),
    )?;
    // A configured or granted secret's real value in the command's own
    // arguments is refused (atk27r F6).
    if let Some(why) =
        skarn_sandbox::secrets::argv_values::refusal(&args.command, Some(&known), &secrets)
    {
        anyhow::bail!("{why}");
    }
    #[cfg(target_os = "linux")]
    return run_confined(policy, &provenance, env, removed, &args, secrets);
    #[cfg(not(target_os = "linux"))]
    {
        if !secrets.is_empty() {
            anyhow::bail!("secrets (--secret, [run] secrets) are supported on Linux only");
        }
        run_confined(policy, &provenance, env, removed, &args)
    }
}

/// The Linux backend: plan with `skarn-sandbox`, then run the helper here
/// or exec it. (Other systems: `run_backend::run_confined`.)
#[cfg(target_os = "linux")]
fn run_confined(
    policy: Policy,
    provenance: &Provenance,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
    secrets: Vec<skarn_egress::secrets::SecretSpec>,
) -> anyhow::Result<ExitCode> {
    let mut policy = policy;
    policy.host_places = crate::cmd::run_secrets::host_places(home().as_deref())?;
    let secrets = skarn_sandbox::secrets::egress_secrets::RunSecrets::new(secrets)
        .map_err(|e| anyhow::anyhow!(e))?;
    // The home's copies of the user's dotfiles (cargo's configuration as
    // the rust preset grants it, settings without credentials, and where a
    // file held a granted value, its placeholder): before the check
    // below, which would otherwise refuse a file the run never sees.
    let copies = home().map(|h| {
        let c = skarn_sandbox::secrets::home_copies::place(
            &mut policy,
            secrets.as_ref(),
            &h,
            skarn_sandbox::secrets::home_copies::Home::Private,
        );
        for f in c.replaced() {
            tracing::info!(
                "{}: holds a credential; the run reads a copy without it",
                f.display()
            );
        }
        c
    });
    if let Some(s) = &secrets {
        refuse_stored_values(s, &mut policy)?;
    }
    let secrets_home = match (&secrets, home()) {
        (None, _) => None,
        (Some(_), Some(h)) if policy.private_home => Some(h),
        (Some(_), _) => anyhow::bail!(
            "secrets need the private home (the run's CA certificate is put there): \
             drop --no-private-home"
        ),
    };
    let mut env = env;
    let mut removed = removed;
    if let Some(s) = &secrets {
        s.widen_net(&mut policy.net)
            .map_err(|e| anyhow::anyhow!(e))?;
        // No variable carries a value in, whatever its name (the source
        // variable of `from_env`, a copy under another name, --allow-env).
        env.retain(|(k, v)| {
            let holds = s.holds_value(v.as_encoded_bytes());
            if holds {
                removed.push(k.to_string_lossy().into_owned());
            }
            !holds
        });
    }
    let home = home();
    let path_var = std::env::var_os("PATH");
    let prepared = skarn_sandbox::prepare::prepare(skarn_sandbox::prepare::Request {
        purpose: skarn_sandbox::prepare::Purpose::Run,
        policy,
        argv: &args.command,
        home: home.as_deref(),
        host: None,
        path_var: path_var.as_deref(),
    })?;
    for w in &prepared.warnings {
        say(&format!("warning: {w}"));
    }
    let (policy, mut plan) = (prepared.policy, prepared.plan);
    plan.caller = skarn_sandbox::report::denials::Caller::detect(|k| std::env::var(k).ok());
    if !args.publish.is_empty() {
        if !matches!(policy.net, skarn_sandbox::NetPolicy::AllowLoopback) || !plan.loopback_up {
            anyhow::bail!(
                "--publish needs --net loopback: the sandbox's loopback is what it publishes"
            );
        }
        plan.publish = args.publish.clone();
        for (h, s) in &args.publish {
            plan.report.notes.push(format!(
                "published: 127.0.0.1:{h} on the host is relayed to port {s} of the sandbox's \
                 loopback (--publish)"
            ));
        }
    }
    if !args.report && !args.json {
        // A workspace made read-only is said even without --report: the
        // command's writes fail, and the user should learn why at once.
        for n in plan
            .report
            .notes
            .iter()
            .filter(|n| n.contains(" is read-only for this run: the home's"))
        {
            say(n);
        }
    }
    if let (Some(s), Some(h)) = (secrets, secrets_home) {
        let granted: Vec<&std::path::Path> = policy
            .read
            .iter()
            .chain(&policy.write)
            .chain(&policy.exec)
            .chain(&policy.overlay)
            .map(|g| g.path.as_path())
            .chain(policy.cache_dirs.iter().map(|p| p.as_path()))
            .collect();
        let dir =
            skarn_sandbox::secrets::egress_secrets::ca_dir(&h, &granted).ok_or_else(|| {
                anyhow::anyhow!(
                    "secrets need a place in the private home for the run's CA certificate that no \
                 grant covers; the grants cover {}/.cache, .local/share and the home itself",
                    h.display()
                )
            })?;
        // The proxy's upstream roots: the caller's, never from a place the
        // command (or an earlier run) can write (atk27h F3, atk27i F4).
        // The rest of the home is not one: the command's home is a private
        // tmpfs, so a CA kept there (mkcert's) is the user's (atk27i F3).
        let writable: Vec<std::path::PathBuf> = std::iter::once(policy.workspace.clone())
            .chain(policy.write.iter().map(|g| g.path.clone()))
            .chain(policy.cache_dirs.iter().cloned())
            .collect();
        // A value piped in reaches the command as its placeholder
        // (atk27t F4); this process is still single-threaded here.
        skarn_sandbox::secrets::stdin_relay::interpose(&s.specs)
            .map_err(|e| anyhow::anyhow!("standard input: {e}"))?;
        for w in s
            .attach(&mut plan, &dir, &writable)
            .map_err(|e| anyhow::anyhow!(e))?
        {
            eprintln!("skarn: warning: {w}");
        }
    }
    if let Some(c) = copies {
        c.attach(&mut plan);
    }
    plan.report.removed_env = removed;
    plan.report.provenance =
        skarn_sandbox::report::report_provenance::for_report(&policy, provenance);
    plan.report_format = if args.json {
        ReportFormat::Json
    } else if args.report {
        ReportFormat::Text
    } else {
        ReportFormat::None
    };
    if !args.no_terminal_filter
        && let Some(w) = skarn_sandbox::linux::tty_relay::input_read_only()
    {
        eprintln!("skarn: warning: {w}");
    }
    let filter_tty = !args.compress.compress
        && !args.no_terminal_filter
        && skarn_sandbox::linux::tty_relay::output_is_terminal();
    if filter_tty {
        let cmd = skarn_sandbox::linux::launch::helper_command(
            std::path::Path::new("/proc/self/exe"),
            &plan,
            &env,
        )?;
        return Ok(skarn_sandbox::linux::tty_relay::run(cmd)?);
    }
    if !args.compress.compress {
        // Usually the helper runs right here (this process is
        // single-threaded: no runtime or thread exists in `skarn run`);
        // otherwise it is a fresh exec of this binary.
        match skarn_sandbox::linux::launch::run_in_this_process(plan, &env) {
            Ok(code) => return Ok(ExitCode::from(code.clamp(0, 255) as u8)),
            Err(p) => plan = *p,
        }
    }
    let mut cmd = skarn_sandbox::linux::launch::helper_command(
        std::path::Path::new("/proc/self/exe"),
        &plan,
        &env,
    )?;
    if args.compress.compress {
        // Capture the sandboxed command's stdout and stderr on one pipe and
        // hand the agent the compressed text; the exit status passes through.
        let line = crate::cmd::compress::command_line(&args.command);
        return crate::cmd::compress::run_compressed(cmd, &line, &args.compress.opts());
    }
    let err = cmd.exec();
    anyhow::bail!("cannot start the sandbox helper: {err}")
}

/// A granted secret's value already in a file the run can read (a clone
/// URL in `.git/config`, a project `.npmrc` or `.env`, a toolchain's
/// `etc/npmrc`, a system `gitconfig`, the file a `command` source reads)
/// would reach the command despite the placeholder (atk27d F3, atk27g):
/// such a file in the workspace refuses the run, naming it; elsewhere it
/// is hidden. A check that cannot finish within its budget refuses the
/// run (ADR 0217).
#[cfg(target_os = "linux")]
fn refuse_stored_values(
    secrets: &skarn_sandbox::secrets::egress_secrets::RunSecrets,
    policy: &mut Policy,
) -> anyhow::Result<()> {
    use skarn_sandbox::secrets::{stored_values, value_scan::Budget, value_scope};
    let home = home();
    let places = crate::cmd::run_secrets::value_places(home.as_deref())?;
    let ws = std::fs::canonicalize(&policy.workspace).unwrap_or_else(|_| policy.workspace.clone());
    let scope = value_scope::scope(
        policy,
        vec![policy.workspace.clone(), ws],
        &places,
        home.as_deref(),
    );
    let mut v = stored_values::check(secrets, &scope, Budget::default())?;
    for f in std::mem::take(&mut v.hide) {
        tracing::info!("{}: holds a granted secret's value; hidden", f.display());
        policy.deny_read.push(skarn_sandbox::policy::Grant::new(
            f,
            "default (holds a granted secret's value)",
        ));
    }
    // Names no file: the command reads this (atk27o F9, ADR 0314).
    match stored_values::refusal(secrets, &v, home.as_deref()) {
        Some(why) => anyhow::bail!(why),
        None => Ok(()),
    }
}
