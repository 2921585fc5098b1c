//! `skarn run [OPTIONS] -- CMD [ARGS...]`: run one command inside the
//! kernel-enforced sandbox (see `skarn-sandbox`).

use std::ffi::OsString;
#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
#[cfg(target_os = "linux")]
use skarn_sandbox::HostFacts;
use skarn_sandbox::config::{RunConfig, expand_path};
#[cfg(target_os = "linux")]
use skarn_sandbox::plan::ReportFormat;
use skarn_sandbox::{Grant, NetPolicy, Policy, presets};

#[cfg(not(target_os = "linux"))]
use crate::cmd::run_backend::run_confined;

#[derive(Debug, clap::Args)]
#[command(
    about = "Run a command inside the kernel-enforced sandbox",
    after_help = "Config: [run] in <workspace>/skarn.toml and ~/.config/skarn/config.toml \
                  (flags override files). Exit status: the command's own (128+N for signal N); \
                  124 timeout; 126 not executable; 127 not found; 2 usage or set-up error."
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
    /// `registries`) [default: deny].
    #[arg(long, value_name = "POLICY")]
    pub net: Vec<String>,
    /// With --net allow:...: never connect to PATTERN (wins over allows; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub deny_host: Vec<String>,
    /// With --net allow:...: close proxy connections after this much traffic in
    /// total: "100M", "2G"; a bare number is MiB.
    #[arg(long, value_name = "SIZE", value_parser = whole_mib)]
    pub net_max_bytes: Option<u64>,
    /// With --net allow:...: connections at once through the proxy [default: 256].
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
    /// Let the command write persistence paths of the workspace (.git/hooks, .envrc, ...).
    #[arg(long)]
    pub no_protect_persistence: bool,
    /// Accept a workspace that is the home directory or holds it (refused
    /// otherwise); every secret and persistence path under it is then
    /// protected, existing or not.
    #[arg(long)]
    pub allow_home_workspace: bool,
    /// Give the command the real home layout instead of a private, writable,
    /// discarded home (granted paths only, read-only).
    #[arg(long)]
    pub no_private_home: bool,
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
    /// Toolchain preset: auto (detect from workspace files), none, rust, node, python (repeatable) [default: auto].
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

fn abs(p: &Path, cwd: &Path) -> PathBuf {
    skarn_sandbox::config::normalize(&cwd.join(p))
}

/// Build the policy from defaults, config files and flags.
pub fn build_policy(args: &Args) -> anyhow::Result<Policy> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = home();
    let (ws_arg, why) = match &args.workspace {
        Some(w) => (w.clone(), "--workspace".to_string()),
        None if args.workspace_root.as_deref() != Some("cwd") => {
            match enclosing_work_tree(&cwd, home.as_deref()) {
                Some(top) if top != cwd => {
                    let why = format!(
                        "the git work tree holding the current directory {} \
                         (--workspace-root repo, the default)",
                        cwd.display()
                    );
                    (top, why)
                }
                _ => (cwd.clone(), "the current directory".to_string()),
            }
        }
        None => (
            cwd.clone(),
            "the current directory (--workspace-root cwd)".into(),
        ),
    };
    let ws = std::fs::canonicalize(&ws_arg)
        .with_context(|| format!("workspace {} does not exist", ws_arg.display()))?;
    if !ws.is_dir() {
        bail!("workspace {} is not a directory", ws.display());
    }
    let mut policy = Policy::new(&ws);
    policy.sources.insert("workspace".into(), why);
    let real_cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd.clone());
    if real_cwd.starts_with(&ws) {
        policy.cwd = Some(real_cwd);
    }

    // Config files: user first, then workspace (later scalars win, lists add up).
    let mut configs = Vec::new();
    if !args.no_config {
        if let Some(h) = &home {
            let f = h.join(".config/skarn/config.toml");
            if let Some(c) = RunConfig::load(&f, h)? {
                configs.push(c);
            }
        }
        if let Some(c) = RunConfig::load(&ws.join("skarn.toml"), &ws)? {
            configs.push(c);
        }
    }
    let mut preset_names: Vec<(String, String)> = Vec::new();
    let mut net_acc = super::run_net::NetAcc::default();
    for c in &configs {
        let r = &c.run;
        for (list, dst) in [
            (&r.read, &mut policy.read),
            (&r.write, &mut policy.write),
            (&r.exec, &mut policy.exec),
            (&r.deny_read, &mut policy.deny_read),
        ] {
            for v in list {
                dst.push(Grant::new(
                    c.resolve(v.get_ref(), home.as_deref()),
                    c.at(v.span()),
                ));
            }
        }
        net_acc.add_config(&mut policy, c)?;
        if let Some(p) = &r.preset {
            preset_names.clear();
            let list = match p {
                skarn_sandbox::config::OneOrMany::One(s) => vec![s.clone()],
                skarn_sandbox::config::OneOrMany::Many(v) => v.clone(),
            };
            for s in list {
                check_preset(s.get_ref()).map_err(|m| c.error(s.span(), m))?;
                preset_names.push((s.get_ref().clone(), c.at(s.span())));
            }
        }
        for (key, n, at) in c.limits()? {
            let slot = limit_slot(&mut policy, key);
            *slot = (n != 0).then_some(n);
            policy.sources.insert(key.into(), at);
        }
        policy.allow_env.extend(r.allow_env.iter().cloned());
        if let Some(b) = r.protect_persistence {
            policy.protect_persistence = b;
        }
        if let Some(b) = r.fail_closed {
            policy.fail_closed = b;
        }
        if let Some(b) = r.allow_home_workspace {
            policy.allow_home_workspace = b;
        }
        if let Some(b) = r.private_home {
            policy.private_home = b;
        }
    }

    // Flags.
    for (list, dst, name) in [
        (&args.grants.0.read, &mut policy.read, "--read"),
        (&args.grants.0.write, &mut policy.write, "--write"),
        (&args.grants.0.exec, &mut policy.exec, "--exec"),
    ] {
        for p in list {
            let a = abs(p, &cwd);
            if std::fs::symlink_metadata(&a).is_err() {
                let real = skarn_sandbox::grants::canonical_lossy(&a).unwrap_or(a.clone());
                let planted =
                    skarn_sandbox::grants::first_symlink(&a).is_some_and(|l| l.starts_with(&ws));
                if name == "--write"
                    && !planted
                    && !is_secret(&a, home.as_deref())
                    && !is_secret(&real, home.as_deref())
                {
                    // A directory the command is to write into may not
                    // exist yet: make it, as the command would (at its
                    // canonical place, never through a link a command
                    // could have planted in the workspace).
                    std::fs::create_dir_all(&real)
                        .with_context(|| format!("--write {}: cannot create it", p.display()))?;
                } else {
                    bail!("{name} {}: no such file or directory", p.display());
                }
            }
            dst.push(Grant::new(a, name));
        }
    }
    for p in &args.grants.0.deny_read {
        policy
            .deny_read
            .push(Grant::new(abs(p, &cwd), "--deny-read"));
    }
    net_acc.add_flags(&mut policy, args)?;
    // Name resolution with host networking: /etc/resolv.conf is often a
    // symlink into /run (systemd-resolved), which is not granted otherwise.
    if matches!(policy.net, NetPolicy::AllowOutbound | NetPolicy::AllowAll) {
        let rc = Path::new("/etc/resolv.conf");
        if rc.is_symlink()
            && let Ok(target) = std::fs::canonicalize(rc)
            && !target.starts_with("/etc")
        {
            policy
                .read
                .push(Grant::new(target, "default (DNS for --net)"));
        }
    }
    for (key, v) in [
        ("timeout", args.timeout),
        ("memory", args.memory),
        ("max_procs", args.max_procs),
        ("max_file_size", args.max_file_size),
    ] {
        if let Some(v) = v {
            *limit_slot(&mut policy, key) = (v != 0).then_some(v);
            policy
                .sources
                .insert(key.into(), format!("--{}", key.replace('_', "-")));
        }
    }
    policy
        .allow_env
        .extend(args.grants.0.allow_env.iter().cloned());
    if args.no_protect_persistence {
        policy.protect_persistence = false;
    }
    if args.fail_open {
        policy.fail_closed = false;
    }
    if args.allow_home_workspace {
        policy.allow_home_workspace = true;
    }
    if args.no_private_home {
        policy.private_home = false;
    }
    if !args.grants.0.preset.is_empty() {
        preset_names.clear();
        for p in &args.grants.0.preset {
            check_preset(p).map_err(anyhow::Error::msg)?;
            preset_names.push((p.clone(), "--preset".into()));
        }
    }
    if preset_names.is_empty() {
        preset_names.push(("auto".into(), "default".into()));
    }
    if let Some(h) = &home {
        presets::apply_toolchains(&mut policy, h);
        for (name, src) in &preset_names {
            match name.as_str() {
                "none" => {}
                "auto" => {
                    for d in presets::detect(&ws) {
                        presets::apply(&mut policy, d, h, &format!("detected, {src}"));
                    }
                }
                n => {
                    presets::apply(&mut policy, n, h, src);
                }
            }
        }
    }
    net_acc.finish(&mut policy, &ws, &preset_names)?;
    // Config paths are taken as written; make sure they are absolute.
    for g in policy
        .read
        .iter_mut()
        .chain(policy.write.iter_mut())
        .chain(policy.exec.iter_mut())
        .chain(policy.deny_read.iter_mut())
    {
        if !g.path.is_absolute() {
            g.path = expand_path(&g.path.to_string_lossy(), &cwd, home.as_deref());
        }
    }
    Ok(policy)
}

/// The policy field a limit key sets.
fn limit_slot<'a>(policy: &'a mut Policy, key: &str) -> &'a mut Option<u64> {
    match key {
        "timeout" => &mut policy.limits.timeout_secs,
        "memory" => &mut policy.limits.memory_mb,
        "max_procs" => &mut policy.limits.max_procs,
        _ => &mut policy.limits.max_file_size_mb,
    }
}

fn whole_secs(s: &str) -> Result<u64, String> {
    skarn_units::parse_duration_secs(s).map_err(|e| e.to_string())
}

fn whole_mib(s: &str) -> Result<u64, String> {
    skarn_units::parse_size_mib(s).map_err(|e| e.to_string())
}

/// The top of the git work tree holding `cwd` (the nearest directory with
/// a `.git` entry), if it lies strictly below the home directory (a
/// dotfiles repository in the home is not a project) and is not `/`.
fn enclosing_work_tree(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut d = Some(cwd);
    while let Some(dir) = d {
        if let Some(h) = home
            && h.starts_with(dir)
        {
            return None;
        }
        dir.parent()?;
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            return Some(dir.to_path_buf());
        }
        d = dir.parent();
    }
    None
}

/// Whether `p` is (or lies under) one of the default secret paths.
fn is_secret(p: &Path, home: Option<&Path>) -> bool {
    skarn_sandbox::policy::default_secret_paths(home)
        .iter()
        .any(|s| p.starts_with(s))
}

fn check_preset(p: &str) -> Result<(), String> {
    if p == "auto" || p == "none" || presets::PRESETS.contains(&p) {
        Ok(())
    } else {
        Err(format!(
            "unknown preset {p:?} (expected auto, none, rust, node or python)"
        ))
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = build_policy(&args)?;
    let (env, removed) = skarn_sandbox::env::scrub(std::env::vars_os(), &policy.allow_env);
    if args.no_sandbox {
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
    run_confined(policy, env, removed, &args)
}

/// The Linux backend: plan with `skarn-sandbox`, then run the helper here
/// or exec it. (Other systems: `run_backend::run_confined`.)
#[cfg(target_os = "linux")]
fn run_confined(
    policy: Policy,
    env: Vec<(OsString, OsString)>,
    removed: Vec<String>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let mut policy = policy;
    if policy.private_home
        && let Some(h) = home()
    {
        // Settings without credentials (git identity, registry mirrors).
        policy.home_files = skarn_sandbox::dotfiles::home_files(&h);
    }
    let grant_notes = skarn_sandbox::grants::canonicalize(&mut policy)?;
    let mut host = HostFacts::probe();
    host.observe_policy(&policy);
    let mut plan = skarn_sandbox::plan(&policy, &host, &args.command)?;
    plan.report.notes.extend(grant_notes);
    plan.report.removed_env = removed;
    plan.report_format = if args.json {
        ReportFormat::Json
    } else if args.report {
        ReportFormat::Text
    } else {
        ReportFormat::None
    };
    if !args.compress.compress {
        // Usually the helper runs right here (this process is
        // single-threaded: no runtime or thread exists in `skarn run`);
        // otherwise it is a fresh exec of this binary.
        match skarn_sandbox::launch::run_in_this_process(plan, &env) {
            Ok(code) => return Ok(ExitCode::from(code.clamp(0, 255) as u8)),
            Err(p) => plan = *p,
        }
    }
    let mut cmd = skarn_sandbox::launch::helper_command(Path::new("/proc/self/exe"), &plan, &env)?;
    if args.compress.compress {
        // Capture the sandboxed command's stdout and stderr on one pipe and
        // hand the agent the compressed text; the exit status passes through.
        let line = crate::cmd::compress::command_line(&args.command);
        return crate::cmd::compress::run_compressed(cmd, &line, &args.compress.opts());
    }
    let err = cmd.exec();
    bail!("cannot start the sandbox helper: {err}")
}
