//! The flags of `skarn run` (clap), apart from what they do (`run`,
//! `run_flags`, `run_backend` read them).

use std::ffi::OsString;
use std::path::PathBuf;

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
    /// the command runs (placeholders reserve missing protected names) and
    /// is the fallback where overlayfs refuses the layer [default: cow;
    /// config: [run] workspace_layer].
    #[arg(long, value_name = "MODE", value_parser = ["cow", "direct"])]
    pub workspace_layer: Option<String>,
    /// Directories of the writable grants walked at most before the run
    /// (for nested repositories, settings and host servers' unix sockets
    /// to protect); a run whose walk stops there makes no unix socket and
    /// says so. Raising it only costs time: the walk's time bound becomes
    /// 50 µs a directory (750 ms at least) [default: 50000 directories and
    /// 750 ms; config: [run] walk_max_dirs].
    #[arg(long, value_name = "N")]
    pub walk_max_dirs: Option<u64>,
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
    /// Who reads what this run prints: `hook` (a model, through an agent's
    /// hook; `skarn hook` writes it into every command it confines), which
    /// leaves out advice to widen the sandbox (issue 24 item 5).
    #[arg(long, hide = true, value_name = "WHO", value_parser = ["hook", "gateway"])]
    pub caller: Option<String>,
    /// The status when skarn itself fails or refuses (before or around the
    /// command): `__hook-confined` asks for 1, which agents read as a
    /// non-blocking error, where skarn's usual 2 would block the agent's
    /// call for a hook that is not skarn's (attack atk24m F10).
    #[arg(long, hide = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub own_failure_exit: Option<u8>,
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

fn whole_secs(s: &str) -> Result<u64, String> {
    skarn_units::parse_duration_secs(s).map_err(|e| e.to_string())
}

fn whole_mib(s: &str) -> Result<u64, String> {
    skarn_units::parse_size_mib(s).map_err(|e| e.to_string())
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
