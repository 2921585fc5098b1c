//! The declarative [`Policy`]: what a sandboxed command may touch.

pub mod agent_home;
pub mod assemble;
pub mod canonical;
pub mod config;
pub mod config_error;
pub mod config_files;
pub mod config_read;
pub mod dir_identity;
pub mod egress_env;
pub mod env;
pub mod go_env;
pub mod granted;
pub mod grants;
pub mod layer_flags;
pub mod layers;
pub mod link_facts;
pub mod offline_env;
pub mod policy_error;
pub mod presets;
pub mod provenance;
pub mod trust;
pub mod untrusted;
pub mod workspace;
pub mod workspace_kind;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Host patterns of [`NetPolicy::AllowHosts`] (syntax: `skarn_egress::Pattern`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostList {
    /// Allowed hosts (`example.com`, `*.example.com:8443`, `10.0.0.0/8:*`, ...).
    pub allow: Vec<String>,
    /// Refused hosts; they win over `allow`.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Connections at once through the proxy (default 256).
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// Total bytes carried (both directions) before connections are closed.
    #[serde(default)]
    pub max_total_bytes: Option<u64>,
}

/// Network policy of a sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetPolicy {
    /// An empty network namespace: no TCP, UDP, ICMP, raw or abstract-unix
    /// traffic leaves the sandbox. The default.
    #[default]
    DenyAll,
    /// A network namespace holding only `lo`, brought up: the command may
    /// talk to itself on 127.0.0.1, never to the host or beyond.
    AllowLoopback,
    /// The host network for outgoing traffic; inbound TCP binds and
    /// `listen(2)` are denied.
    AllowOutbound,
    /// The host network, unrestricted.
    AllowAll,
    /// A network namespace holding only `lo`, where an HTTP and a SOCKS5
    /// proxy listen; the proxy runs outside and connects only to the
    /// allowed hosts.
    AllowHosts(HostList),
}

impl NetPolicy {
    /// Parse the command-line / config spelling (`deny`, `loopback`,
    /// `outbound`, `all`; `allow:PATTERN,...` for [`NetPolicy::AllowHosts`],
    /// patterns checked later).
    pub fn parse(s: &str) -> Option<NetPolicy> {
        match s {
            "deny" | "deny_all" | "none" => Some(NetPolicy::DenyAll),
            "loopback" | "allow_loopback" => Some(NetPolicy::AllowLoopback),
            "outbound" | "allow_outbound" => Some(NetPolicy::AllowOutbound),
            "all" | "allow_all" => Some(NetPolicy::AllowAll),
            _ => s.strip_prefix("allow:").map(|l| {
                NetPolicy::AllowHosts(HostList {
                    allow: split_list(l),
                    ..HostList::default()
                })
            }),
        }
    }

    /// The short spelling used on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            NetPolicy::DenyAll => "deny",
            NetPolicy::AllowLoopback => "loopback",
            NetPolicy::AllowOutbound => "outbound",
            NetPolicy::AllowAll => "all",
            NetPolicy::AllowHosts(_) => "allow",
        }
    }

    /// Whether the command gets its own network namespace.
    pub fn wants_netns(&self) -> bool {
        matches!(
            self,
            NetPolicy::DenyAll | NetPolicy::AllowLoopback | NetPolicy::AllowHosts(_)
        )
    }
}

/// Split a comma-separated pattern list, dropping empty entries.
pub fn split_list(l: &str) -> Vec<String> {
    l.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Where a grant (or a limit) came from, for `--report`.
pub type Source = String;

fn yes() -> bool {
    true
}

/// One path granted (or denied) by the policy, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Absolute path on the host (canonical once
    /// [`crate::policy::grants::canonicalize`] has run).
    pub path: PathBuf,
    /// Human-readable provenance, e.g. `default`, `--read`, `preset rust`,
    /// `/ws/skarn.toml:3:8`.
    pub source: Source,
    /// The path as written, when it is or passes through a symlink (the
    /// grant is bound at `path`, its canonical target; this name is
    /// recreated inside as a symlink to it when nothing else is there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<PathBuf>,
}

impl Grant {
    /// Shorthand constructor.
    pub fn new(path: impl Into<PathBuf>, source: impl Into<String>) -> Grant {
        Grant {
            path: path.into(),
            source: source.into(),
            alias: None,
        }
    }
}

/// Resource limits. `None` means "no limit" (shown as such in the report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock limit; the whole process tree is killed and the run exits 124.
    pub timeout_secs: Option<u64>,
    /// Per-process data (heap) limit in MiB (`RLIMIT_DATA`): allocations over it fail.
    pub memory_mb: Option<u64>,
    /// Maximum number of processes/threads of the sandbox (pids cgroup when
    /// available, else `RLIMIT_NPROC` inside the user namespace).
    pub max_procs: Option<u64>,
    /// Largest file the command may write, in MiB (`RLIMIT_FSIZE`).
    pub max_file_size_mb: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_secs: Some(DEFAULT_TIMEOUT_SECS),
            memory_mb: Some(DEFAULT_MEMORY_MB),
            max_procs: Some(DEFAULT_MAX_PROCS),
            max_file_size_mb: Some(DEFAULT_MAX_FILE_SIZE_MB),
        }
    }
}

/// Default wall-clock limit: one hour.
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 3600;
/// Default per-process data limit: 8 GiB.
pub(crate) const DEFAULT_MEMORY_MB: u64 = 8192;
/// Default process cap.
pub(crate) const DEFAULT_MAX_PROCS: u64 = 1024;
/// Default largest writable file: 4 GiB.
pub(crate) const DEFAULT_MAX_FILE_SIZE_MB: u64 = 4096;

/// A declarative sandbox policy. Build one with [`Policy::new`] and adjust
/// the public fields; turn it into an executable [`crate::Plan`] with
/// [`crate::linux::plan::plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Read-write workspace (absolute).
    pub workspace: PathBuf,
    /// Working directory of the command (default: the workspace).
    pub cwd: Option<PathBuf>,
    /// Extra read-only grants.
    pub read: Vec<Grant>,
    /// Extra read-write grants.
    pub write: Vec<Grant>,
    /// Extra read+execute grants.
    pub exec: Vec<Grant>,
    /// Paths never readable, in addition to [`default_secret_paths`].
    pub deny_read: Vec<Grant>,
    /// Network policy.
    pub net: NetPolicy,
    /// Resource limits.
    pub limits: Limits,
    /// Refuse to run when the policy cannot be enforced at all (default true).
    pub fail_closed: bool,
    /// Keep persistence paths of the workspace (.git/hooks, .envrc, ...) read-only.
    pub protect_persistence: bool,
    /// Secret-looking environment variables to keep anyway.
    pub allow_env: Vec<String>,
    /// Toolchain caches given as sandbox-private copy-on-write layers: the
    /// command reads the host's cache and may write, but its writes land in
    /// a private layer discarded after the run, so nothing the host later
    /// executes or trusts can be changed from inside.
    #[serde(default)]
    pub overlay: Vec<Grant>,
    /// The caches of the active toolchain presets (directories, whether
    /// or not the host has them) that the workspace's store keeps between
    /// runs ([`crate::linux::store`], ADR 0175); only under a private home.
    #[serde(default)]
    pub cache_dirs: Vec<PathBuf>,
    /// Give the command a private, writable home directory (a tmpfs at
    /// `$HOME` holding only the granted paths), discarded after the run.
    #[serde(default = "yes")]
    pub private_home: bool,
    /// Accept a workspace that is the home directory or one of its
    /// ancestors (refused by default); every secret and persistence path
    /// under it is then protected, whether or not it exists.
    #[serde(default)]
    pub allow_home_workspace: bool,
    /// Keep a grant writable although a home configuration file names a
    /// path in it (ADR 0160; the user's own config or the flag only).
    #[serde(default)]
    pub trust_home_config_workspace: bool,
    /// Files written into the private home before the command starts
    /// (sanitised copies of the host's dotfiles: settings without
    /// credentials), as (path, contents).
    #[serde(default)]
    pub home_files: Vec<(PathBuf, String)>,
    /// Places skarn itself runs or reads on the host, outside any
    /// sandbox, named by the user's configuration (a secret's `command`
    /// program and script, a `file` source not created yet), as (path,
    /// why, secret): inside a writable grant each is kept read-only
    /// (hidden when `secret`), reserved when missing (atk27d F5, F6).
    #[serde(default)]
    pub host_places: Vec<(PathBuf, String, bool)>,
    /// How the command writes the workspace: into a copy-on-write layer
    /// applied, vetted, after the run (`cow`), or directly (`direct`).
    #[serde(default)]
    pub workspace_layer: WorkspaceLayerMode,
    /// Directories the walk of the writable grants before a run reads at
    /// most (`--walk-max-dirs`, `[run] walk_max_dirs`; None: the default,
    /// [`crate::protect::git::nested_git::MAX_DIRS`]). Past it the run
    /// makes no unix socket (ADR 0204).
    #[serde(default)]
    pub walk_max_dirs: Option<u64>,
    /// How long records of killed runs over other workspaces stay in
    /// skarn's state before any run checks them (`[run] state_keep` in
    /// the user's file; None: a day. ADR 0289).
    #[serde(default)]
    pub state_keep: Option<std::time::Duration>,
    /// Provenance of scalar settings (`net`, `timeout`, `memory`,
    /// `max_procs`, `max_file_size`) for the report; missing = `default`.
    pub sources: std::collections::BTreeMap<String, String>,
}

/// How a run writes its workspace (`--workspace-layer`, `[run]
/// workspace_layer`; ADR 0130).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceLayerMode {
    /// A copy-on-write layer over the workspace; its changes are vetted
    /// and applied when the run ends. The default (ADR 0226): no
    /// placeholder is ever on the host, nothing unvetted reaches it.
    #[default]
    Cow,
    /// The workspace bound read-write: the command writes the host's files
    /// as it runs (placeholders reserve missing protected names; checks
    /// after the run set aside what they find). Asked for by name, or the
    /// fallback when the layer cannot be made (the report says so).
    Direct,
}

impl WorkspaceLayerMode {
    /// The setting's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceLayerMode::Cow => "cow",
            WorkspaceLayerMode::Direct => "direct",
        }
    }

    /// Parse the setting's spelling.
    pub fn parse(s: &str) -> Option<WorkspaceLayerMode> {
        match s {
            "cow" => Some(WorkspaceLayerMode::Cow),
            "direct" => Some(WorkspaceLayerMode::Direct),
            _ => None,
        }
    }
}

impl Policy {
    /// The default policy for `workspace`: network denied, default limits,
    /// fail closed, persistence paths protected.
    pub fn new(workspace: impl Into<PathBuf>) -> Policy {
        Policy {
            workspace: workspace.into(),
            cwd: None,
            read: Vec::new(),
            write: Vec::new(),
            exec: Vec::new(),
            deny_read: Vec::new(),
            net: NetPolicy::DenyAll,
            limits: Limits::default(),
            fail_closed: true,
            protect_persistence: true,
            allow_env: Vec::new(),
            overlay: Vec::new(),
            cache_dirs: Vec::new(),
            private_home: true,
            allow_home_workspace: false,
            trust_home_config_workspace: false,
            home_files: Vec::new(),
            host_places: Vec::new(),
            workspace_layer: WorkspaceLayerMode::default(),
            walk_max_dirs: None,
            state_keep: None,
            sources: Default::default(),
        }
    }
}

/// System directories granted read+execute by default (those that exist).
pub const SYSTEM_EXEC_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
];

/// Host files that are secret even though they live in granted system
/// directories (readable by root).
pub(crate) const SYSTEM_SECRET_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
];

/// Secret paths relative to the home directory, never granted.
pub(crate) const HOME_SECRET_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".git-credentials",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".config/skarn",
    // Skarn's own state (recall store of raw command output).
    ".local/state/skarn",
    ".azure",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".gem/credentials",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".config/git/credentials",
    ".config/github-copilot",
    ".m2/settings.xml",
    ".config/rclone",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    // Credential files of common tools (attack F11): s3cmd, boto and
    // gsutil, Oracle Cloud, the agents' own account files, dotenv files
    // in the home, container registries, cloud and platform CLIs, and
    // the database clients' histories (passwords typed at their prompts).
    ".s3cfg",
    ".boto",
    ".oci",
    ".claude.json",
    ".env",
    ".env.local",
    ".envrc",
    ".dockercfg",
    ".config/containers/auth.json",
    ".config/doctl",
    ".config/hcloud",
    ".config/glab-cli",
    ".config/sops",
    ".config/.wrangler",
    ".config/configstore/firebase-tools.json",
    ".databrickscfg",
    ".fly",
    ".pulumi/credentials.json",
    ".terraformrc",
    ".cloudflared",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".psql_history",
    ".mysql_history",
    // Found by attack round 3 (issue 22): git's cookie file, mysql's
    // login file, mail and other clients' stored passwords, key stores.
    ".gitcookies",
    ".mylogin.cnf",
    ".authinfo",
    ".authinfo.gpg",
    ".msmtprc",
    ".config/msmtp",
    ".fetchmailrc",
    ".subversion/auth",
    ".kaggle",
    ".config/kaggle",
    ".config/solana",
    ".config/helm/repositories.yaml",
    ".vnc/passwd",
];

/// Paths under the home directory that a host program runs or trusts
/// without the user asking (shell and login start-up, git's global
/// configuration, autostart entries, user services, programs on PATH).
/// Protected like secrets' writes whenever they lie under a writable grant,
/// which happens only when the workspace is the home directory or an
/// ancestor of it (refused unless the policy allows it). Agents' and
/// editors' own places follow, with their reasons ([`agent_home`]).
pub(crate) const HOME_PERSISTENCE_PATHS: &[&str] = &HOME_PATHS_ALL;

const HOME_PATHS_ALL: [&str; HOME_PATHS_BASE.len() + agent_home::COUNT] =
    agent_home::with_agent_paths(HOME_PATHS_BASE);

const HOME_PATHS_BASE: &[&str] = &[
    // git runs core.fsmonitor, hooksPath hooks, filters and pagers from here.
    ".gitconfig",
    ".config/git",
    // Login and desktop autostart, user services and session environment.
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    // Shells beyond the rc files of SHELL_RC_PATHS.
    ".config/fish",
    ".inputrc",
    // sshd runs ~/.ssh/rc; authorized_keys lies in the secret ~/.ssh too.
    ".ssh",
    // Programs found on PATH before the system's.
    ".local/bin",
    "bin",
    ".cargo/bin",
    ".cargo/config.toml",
    ".cargo/config",
    // Editors that run code from their configuration.
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    // Package managers' configuration (registries, scripts, credentials).
    ".npmrc",
    ".config/pip",
    ".pip",
    ".pydistutils.cfg",
    // Python runs *.pth files and sitecustomize from the user site.
    ".local/lib",
    // Start-up and tool files found by an attack round.
    ".bash_aliases",
    ".tmux.conf",
    ".gdbinit",
    ".gradle",
    ".ipython",
    ".config",
    ".local",
    ".cache",
    ".npm",
    ".rustup",
    ".pyenv",
    ".nvm",
    // Agents' and tools' own settings and hooks.
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".cursor",
    ".config/skarn",
    // Found by attack round 3: start-up files and tool homes host
    // programs read on their own.
    ".bashrc.d",
    ".oh-my-zsh",
    ".zsh",
    ".p10k.zsh",
    ".tmux",
    ".screenrc",
    ".login",
    ".direnvrc",
    ".hgrc",
    ".psqlrc",
    ".sqliterc",
    ".pythonrc",
    ".irbrc",
    ".pryrc",
    ".Rprofile",
    ".ghci",
    ".lldbinit",
    ".mavenrc",
    ".vscode",
    ".m2",
    ".sbt",
    ".condarc",
    ".gemrc",
    ".curlrc",
    ".wgetrc",
    ".ansible.cfg",
    ".terraformrc",
    ".tool-versions",
    ".asdfrc",
    ".npm-global",
    ".deno",
    ".Xresources",
    ".xbindkeysrc",
    // Code-running places of the XDG data home, for a grant below
    // `~/.local` (attack atk24k F10).
    ".local/share/applications",
    ".local/share/systemd",
    ".local/share/dbus-1",
    ".local/share/gnome-shell/extensions",
    ".local/share/kio/servicemenus",
    ".local/share/nautilus/scripts",
    ".local/share/konsole",
    ".local/share/fish/vendor_conf.d",
    ".local/share/fish/vendor_functions.d",
    ".local/share/fish/vendor_completions.d",
    ".local/share/zsh/site-functions",
    ".local/share/nvim/site",
    ".local/share/vim",
    ".local/share/jupyter/kernels",
    // Non-dot entries host programs load or run from.
    "go",
    "node_modules",
    "snap",
    "perl5",
    "R",
];

/// The deny list's places for `home` (and the system's): what no grant a
/// caller makes for its own reasons may hold (a server's installation,
/// atk27m F3).
pub fn secret_paths_of(home: &Path) -> Vec<PathBuf> {
    default_secret_paths(Some(home))
}

/// All default secret paths for a home directory.
pub(crate) fn default_secret_paths(home: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = SYSTEM_SECRET_PATHS.iter().map(PathBuf::from).collect();
    if let Some(home) = home {
        v.extend(HOME_SECRET_PATHS.iter().map(|p| home.join(p)));
    }
    v
}

// The workspace persistence paths (what later runs code on the host) are
// data in `crate::protect::persistence`, each with its reservation rule and reason.
