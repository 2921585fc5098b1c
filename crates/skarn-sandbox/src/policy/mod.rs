//! The declarative [`Policy`]: what a sandboxed command may touch.

pub mod agent_home;
pub mod assemble;
pub mod canonical;
pub mod config;
pub mod config_error;
pub mod config_files;
pub mod config_read;
mod default_paths;
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
pub mod query_credentials;
mod toolchain_env;
pub mod trust;
pub mod untrusted;
pub mod workspace;
pub mod workspace_kind;

use std::path::PathBuf;

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
    /// Bytes of one record of earlier scans in skarn's state at most
    /// (`[run] scan_cache_max` in the user's file; None:
    /// [`crate::protect::home_mentions::DEFAULT_SCAN_CACHE_MAX`], ADR 0317).
    #[serde(default)]
    pub scan_cache_max: Option<u64>,
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
            scan_cache_max: None,
            sources: Default::default(),
        }
    }
}

pub(crate) use default_paths::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS, default_secret_paths};
pub use default_paths::{SYSTEM_EXEC_DIRS, secret_paths_of};
