//! `skarn run [OPTIONS] -- CMD [ARGS...]`: run one command inside the
//! kernel-enforced sandbox (see `skarn-sandbox`).

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

#[derive(Debug, clap::Args)]
#[command(
    about = "Run a command inside the kernel-enforced sandbox",
    after_help = "Config: [run] in <workspace>/skarn.toml and ~/.config/skarn/config.toml \
                  (flags override files); a workspace skarn.toml that an earlier run could \
                  write (below a recorded workspace's root or in a write grant; record: \
                  ~/.local/state/skarn/granted-dirs) is ignored. Exit status: the command's own (128+N for signal N); \
                  124 timeout; 126 not executable; 127 not found; 2 usage or set-up error, or a \
                  planted entry that could be neither set aside nor removed after the run."
)]
pub struct Args {
    /// Read-write workspace [default: see --workspace-root].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Default workspace when --workspace is not given: `repo` = the top of
    /// the git work tree holding the current directory (below the home
    /// directory), else the current directory; `cwd` = the current directory
    /// [default: repo].
    #[arg(long, value_name = "WHICH", value_parser = ["repo", "cwd"])]
    pub workspace_root: Option<String>,
    #[command(flatten)]
    pub grants: Boxed<Grants>,
    /// Network policy: deny, loopback, outbound, all, or allow:PATTERN[,PATTERN...]
    /// (only these hosts, through a proxy; repeatable, lists add up; PATTERN
    /// is host, *.domain, IP or CIDR with optional :port or :*, or
    /// `registries`: the hosts npm, pip and cargo are configured with, never
    /// from files or programs in the workspace or another write grant)
    /// [default: deny].
    #[arg(long, value_name = "POLICY")]
    pub net: Vec<String>,
    /// With --net allow:...: never connect to PATTERN (wins over allows; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub deny_host: Vec<String>,
    /// With --net allow:...: bytes the proxy carries in the whole run, both
    /// directions and all connections together; the connection that reaches
    /// it is cut there and later ones are refused: "100M", "2G"; a bare
    /// number is MiB (0 = no limit, the default).
    #[arg(long, value_name = "SIZE", value_parser = whole_mib)]
    pub net_max_bytes: Option<u64>,
    /// With --net allow:...: connections at once through the proxy, HTTP and
    /// SOCKS5 together (more wait until one ends) [default: 256].
    #[arg(long, value_name = "N")]
    pub net_max_connections: Option<usize>,
    /// Kill the whole process tree after DURATION, exit 124: "90s", "10m",
    /// "1h"; a bare number is seconds; whole seconds only (0 = no limit) [default: 1h].
    #[arg(long, value_name = "DURATION", value_parser = whole_secs)]
    pub timeout: Option<u64>,
    /// Per-process memory (data) limit: "512M", "4G"; a bare number is MiB;
    /// whole MiB only (0 = no limit) [default: 8G].
    #[arg(long, value_name = "SIZE", value_parser = whole_mib)]
    pub memory: Option<u64>,
    /// Maximum number of processes (0 = no limit) [default: 1024].
    #[arg(long, value_name = "N")]
    pub max_procs: Option<u64>,
    /// Largest file the command may write: "100M", "4G"; a bare number is
    /// MiB; whole MiB only (0 = no limit) [default: 4G].
    #[arg(long, value_name = "SIZE", value_parser = whole_mib)]
    pub max_file_size: Option<u64>,
    /// Let the command write the workspace's persistence paths (.envrc,
    /// .vscode, agent and editor settings, ...) and skip the checks after
    /// the run. The repository's hooks and code-running configuration stay
    /// protected either way: host git would run what they name (safe
    /// .git/config changes reach the repository after the run).
    #[arg(long)]
    pub no_protect_persistence: bool,
    /// Accept a workspace that is the home directory or holds it (refused
    /// otherwise); every secret and persistence path under it is then
    /// protected, existing or not.
    #[arg(long)]
    pub allow_home_workspace: bool,
    /// Keep the workspace (and write grants) writable although a home
    /// configuration file names a path in it (a shell rc, ~/.gitconfig,
    /// ~/.ssh/config, ~/.vimrc, ...: host programs may run what the
    /// command writes there). By default such a grant is read-only for
    /// the run [config: [run] trust_home_config_workspace in
    /// ~/.config/skarn/config.toml only].
    #[arg(long)]
    pub trust_home_config_workspace: bool,
    /// Accept a workspace that is not a project directory: /tmp or
    /// /var/tmp themselves, a shared or system directory (/srv, /mnt,
    /// /var/lib, /run, ...), $TMPDIR, or a directory on PATH (refused
    /// otherwise; a workspace in the home's own directories, such as
    /// ~/.config/..., needs --allow-home-workspace). It is then protected
    /// like a home workspace.
    #[arg(long)]
    pub allow_non_project_workspace: bool,
    /// Publish a port of the sandbox's loopback on the host's 127.0.0.1,
    /// like `docker -p` (a dev server started inside): connections to
    /// 127.0.0.1:HOST_PORT on the host are relayed to SANDBOX_PORT inside.
    /// Needs --net loopback; repeatable [default: none].
    #[arg(long, value_name = "HOST_PORT:SANDBOX_PORT", value_parser = parse_publish)]
    pub publish: Vec<(u16, u16)>,
    /// How the command writes the workspace: `cow` writes into a
    /// copy-on-write layer whose changes are applied when the run ends,
    /// those to protected paths refused (--report lists both; host programs
    /// see nothing of the run until then); `direct` writes the workspace as
    /// the command runs [default: direct; config: [run] workspace_layer].
    #[arg(long, value_name = "MODE", value_parser = ["cow", "direct"])]
    pub workspace_layer: Option<String>,
    /// Give the command the real home layout instead of a private, writable,
    /// discarded home (granted paths only, read-only).
    #[arg(long)]
    pub no_private_home: bool,
    /// Pass the command's terminal output through unfiltered (by default,
    /// output to a terminal goes through a pseudo-terminal of skarn's and
    /// loses its control strings: clipboard writes, title reports, queries
    /// the terminal would answer as input; colours stay).
    #[arg(long)]
    pub no_terminal_filter: bool,
    /// Grant the secret NAME ([secrets.NAME] in ~/.config/skarn/config.toml):
    /// the command gets a placeholder in its variable; the proxy puts the real
    /// value into requests to the hosts (methods, paths) it is bound to, over
    /// TLS it terminates with a CA made for this run (repeatable).
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// Run with whatever confinement remains even if none can be enforced.
    #[arg(long)]
    pub fail_open: bool,
    /// Ignore skarn.toml and ~/.config/skarn/config.toml.
    #[arg(long)]
    pub no_config: bool,
    /// Run the command UNCONFINED (no sandbox at all).
    #[arg(long)]
    pub no_sandbox: bool,
    /// Print the restriction report on stderr after the run.
    #[arg(long)]
    pub report: bool,
    /// Print the restriction report as one JSON line on stderr after the run.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub compress: crate::cmd::compress::RunCompressArgs,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Grant-related flags (boxed to keep the subcommand enum small).
#[derive(Debug, clap::Args)]
pub struct Grants {
    /// Grant read-only access to PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub read: Vec<PathBuf>,
    /// Grant read-write access to PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub write: Vec<PathBuf>,
    /// Grant read+execute access to PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub exec: Vec<PathBuf>,
    /// Never allow reading PATH, even under a granted directory (repeatable).
    #[arg(long, value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Toolchain preset: auto (detect from workspace files), none, rust, node, python, go (repeatable) [default: auto].
    #[arg(long, value_name = "NAME")]
    pub preset: Vec<String>,
    /// Keep the secret-looking environment variable NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    pub allow_env: Vec<String>,
}

/// A boxed flattened argument group.
#[derive(Debug)]
pub struct Boxed<T>(pub Box<T>);

impl<T: clap::FromArgMatches> clap::FromArgMatches for Boxed<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(|t| Boxed(Box::new(t)))
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
}

impl<T: clap::Args> clap::Args for Boxed<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        T::augment_args(cmd)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_args_for_update(cmd)
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

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
            eprintln!("skarn: {n}");
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
        eprintln!("skarn: {n}");
    }
    Ok((policy, provenance))
}

fn whole_secs(s: &str) -> Result<u64, String> {
    skarn_units::parse_duration_secs(s).map_err(|e| e.to_string())
}

fn whole_mib(s: &str) -> Result<u64, String> {
    skarn_units::parse_size_mib(s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (policy, provenance) = build_policy(&args)?;
    let (mut env, mut removed) =
        skarn_sandbox::policy::env::scrub(std::env::vars_os(), &policy.allow_env);
    // Sources of configured secrets, granted or not (issue 27).
    let sources = crate::cmd::run_secrets::source_variables(home().as_deref());
    env.retain(|(k, _)| {
        let drop = k.to_str().is_some_and(|k| sources.iter().any(|s| s == k));
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
    let secrets = crate::cmd::run_secrets::resolve(
        &args.secret,
        args.no_config,
        &policy.workspace,
        home().as_deref(),
    )?;
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
    policy.host_places = crate::cmd::run_secrets::host_places(home().as_deref());
    let secrets = skarn_sandbox::secrets::egress_secrets::RunSecrets::new(secrets)
        .map_err(|e| anyhow::anyhow!(e))?;
    if policy.private_home
        && let Some(h) = home()
    {
        // Settings without credentials (git identity, registry mirrors).
        policy.home_files = skarn_sandbox::secrets::dotfiles::home_files(&h);
        // No line carries a granted value in, in any form (atk27 F6).
        if let Some(s) = &secrets {
            for (_, text) in policy.home_files.iter_mut() {
                if s.holds_value(text.as_bytes()) {
                    *text = text
                        .lines()
                        .filter(|l| !s.holds_value(l.as_bytes()))
                        .map(|l| format!("{l}\n"))
                        .collect();
                }
            }
        }
    }
    // Where the user's dotfiles held a granted value: the placeholder.
    let mut dot_vars = Vec::new();
    if let (Some(s), Some(h), true) = (&secrets, home(), policy.private_home) {
        let (lines, vars) = s.dotfile_placeholders(&h);
        for (path, line) in lines {
            match policy.home_files.iter_mut().find(|(p, _)| *p == path) {
                Some((_, text)) => {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                None => policy.home_files.push((path, format!("{line}\n"))),
            }
        }
        dot_vars = vars;
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
        eprintln!("skarn: warning: {w}");
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
            eprintln!("skarn: {n}");
        }
    }
    if let (Some(s), Some(h)) = (secrets, secrets_home) {
        let dir = h.join(skarn_sandbox::secrets::egress_secrets::CA_DIR);
        s.attach(&mut plan, &dir).map_err(|e| anyhow::anyhow!(e))?;
        plan.set_env.extend(dot_vars);
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

/// `HOST_PORT:SANDBOX_PORT` of `--publish` (ports 1-65535).
fn parse_publish(s: &str) -> Result<(u16, u16), String> {
    let (h, c) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected HOST_PORT:SANDBOX_PORT, e.g. 8080:3000"))?;
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("{p:?} is not a port (1-65535)"))
    };
    Ok((port(h)?, port(c)?))
}
