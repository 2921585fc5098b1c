//! [`HostFacts`]: what this host offers, as the pure planner sees it.
//! Data only: probing the running host is [`crate::linux::host_probe`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Environment variable naming mechanisms to treat as missing, comma
/// separated (`namespaces`, `userns`, `landlock`, `landlock-net`,
/// `landlock-scope`, `seccomp`, `cgroup`, `memory-cgroup`, `idmap`). A testing aid to exercise the
/// degraded paths on a fully capable host, honoured only by builds made for
/// tests ([`crate::linux::simulate`]): any other build ignores it and says so.
pub(crate) const SIMULATE_MISSING_ENV: &str = "SKARN_SANDBOX_SIMULATE_MISSING";

/// Facts about the host that the pure planner needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    /// Real uid / gid of the caller.
    pub uid: u32,
    /// Real gid of the caller.
    pub gid: u32,
    /// Home directory (`$HOME`).
    pub home: Option<PathBuf>,
    /// Highest Landlock ABI offered (0 = none).
    pub landlock_abi: u32,
    /// Namespaces can be created (as root directly, else through a user namespace).
    pub namespaces: bool,
    /// A user namespace is needed to create the others (non-root caller).
    pub needs_userns: bool,
    /// seccomp-bpf filters can be installed.
    pub seccomp: bool,
    /// Writable pids cgroup directory to create the run's cgroup in.
    pub cgroup_pids: Option<PathBuf>,
    /// Writable memory cgroup directory (v1 `memory` hierarchy, or v2 with
    /// `memory` delegated) to create the run's memory cgroup in.
    #[serde(default)]
    pub cgroup_memory: Option<PathBuf>,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// Other names of the default secret paths: the same paths under the
    /// password database's home when it differs from `$HOME`, and the
    /// resolved target of every secret path (or home) reached through a
    /// symlink. Each is denied like the secret itself.
    #[serde(default)]
    pub secret_aliases: Vec<PathBuf>,
    /// Entries of granted system directories closed to others (see
    /// [`crate::protect::owner_only`]); probed only for root, the one caller able to
    /// read them. Each is hidden like a secret.
    #[serde(default)]
    pub owner_only: Vec<PathBuf>,
    /// The owner-only walk stopped at its entry cap.
    #[serde(default)]
    pub owner_only_truncated: bool,
    /// System directories ([`crate::protect::owner_only::WALKED_DIRS`]) that root's
    /// sandbox binds idmapped (root's files owned by nobody inside), so
    /// entries closed to others there stay unreadable without a walk;
    /// probed only for root with namespaces. The walk covers the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idmap_dirs: Vec<PathBuf>,
    /// Why a system directory could not be bound idmapped (root only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idmap_unavailable: Option<String>,
    /// The home directory the password database gives, when it differs
    /// from `home` (treated as the home too: never a workspace, secrets
    /// denied under it).
    #[serde(default)]
    pub passwd_home: Option<PathBuf>,
    /// The canonical home directory when `home` is or passes through a
    /// symlink.
    #[serde(default)]
    pub home_real: Option<PathBuf>,
    /// Names of the home directory's top-level dot entries, when the
    /// workspace holds the home (set by [`HostFacts::observe_policy`]): each
    /// is then read-only, since host programs read them.
    #[serde(default)]
    pub home_entries: Vec<String>,
    /// Owner of the workspace directory, when known (set by
    /// [`HostFacts::observe_policy`]).
    #[serde(default)]
    pub workspace_owner: Option<u32>,
    /// Places the host trusts, found by following their names (home files
    /// through links, git's global includes and programs, `PATH`), kept
    /// only when inside one of the policy's grants (set by
    /// [`HostFacts::observe_policy`]; see [`crate::protect::home_links`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted: Vec<crate::protect::trusted::Trusted>,
    /// Home directories whose links were not all followed (a bound).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_unfinished: Vec<PathBuf>,
    /// Trusted files a tool reads but tolerates empty (a cargo home's
    /// `config.toml`): when missing in a writable grant, reserved as an
    /// empty, read-only file rather than an unreadable placeholder, so
    /// the command's own tool keeps working ([`crate::protect::tool_homes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_when_missing: Vec<PathBuf>,
    /// Home start-up file lines that source a path skarn could not expand
    /// (`file: line`; said in the report, see [`crate::protect::shell_sources`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_unresolved: Vec<String>,
    /// What protected configurations load that skarn did not follow file
    /// by file (said; see [`crate::protect::config_refs::Loaded::notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_notes: Vec<String>,
    /// Relative names the home's start-up files source (see
    /// [`crate::protect::home_links::Found::relative`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_relative: Vec<(PathBuf, String)>,
    /// Writable grants a home configuration file names (set by
    /// [`HostFacts::observe_policy`]; see [`crate::protect::home_mentions`]).
    #[serde(
        default,
        skip_serializing_if = "crate::protect::home_mentions::Mentions::is_empty"
    )]
    pub home_mentions: crate::protect::home_mentions::Mentions,
    /// Program names the host's configuration runs through `PATH` (git's
    /// pager, credential helpers, `$EDITOR`...; set by
    /// [`HostFacts::observe_policy`]; see
    /// [`crate::protect::configured_programs`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configured_programs: Vec<String>,
    /// Why the workspace is not a project directory, when the user allowed
    /// it anyway (set by [`HostFacts::observe_policy`]; see
    /// [`crate::policy::workspace_kind`]): it is then protected like a home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_like_workspace: Option<String>,
    /// Top-level dot entries of such a workspace (read-only in the run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace_dot_entries: Vec<String>,
    /// Paths the agent's file tools were allowed to write and have not
    /// written yet (the hook's leases, [`crate::protect::edit_lease`]; set by
    /// [`crate::prepare`]): kept as they are in writable grants (ADR 0244).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_edits: Vec<PathBuf>,
}
