//! [`Plan`]: everything the helper executes, and the steps it takes on
//! what it can only observe at run time. Data only.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{FsOp, LandlockAccess, LandlockPlan, Namespaces, Rlimit, SeccompPlan};
use crate::report::RestrictionReport;

/// How the report is printed after the run (platform-neutral, in [`crate::report`]).
pub use crate::report::ReportFormat;

/// What the helper does when creating the namespaces fails at run time
/// (a seccomp profile or an LSM refusing `unshare`, a user-namespace limit
/// reached after the probe).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "then")]
pub enum NsFallback {
    /// Run this plan instead: the same policy planned for the same host
    /// without namespaces.
    Plan {
        /// The plan without namespaces.
        plan: Box<Plan>,
    },
    /// Refuse to run (`fail_closed` and nothing would remain).
    Refuse {
        /// Why.
        reason: String,
    },
}

/// A private temporary directory on the host, for runs without a mount
/// namespace (no private /tmp): made with `mkdtemp(3)` by the helper
/// before the target starts, named by `env`, granted by one Landlock rule
/// and removed after the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTmp {
    /// `mkdtemp(3)` template.
    pub template: PathBuf,
    /// Variable set to the directory made.
    pub env: String,
    /// Landlock access to the directory made (None without Landlock).
    pub landlock: Option<LandlockAccess>,
}

/// The run's memory cgroup (root only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCgroup {
    /// Parent directory the run's cgroup is made in.
    pub parent: PathBuf,
    /// The limit in bytes.
    pub bytes: u64,
    /// `RLIMIT_AS` applied to the target instead when the run's cgroup
    /// cannot be made or joined.
    pub fallback_as: u64,
}

/// The reservation step: the helper looks at the workspace's persistence
/// paths on the host before any namespace exists and turns the plan's
/// `Protect` and reserving `Mask` steps into what init mounts:
/// 1. the workspace directory is locked shared for the run (placeholders
///    are removed only under an exclusive lock, when no run uses them);
/// 2. `git` missing or unborn: a private stage is bound there
///    ([`FsOp::Stage`], [`crate::linux::staging`]) and the protected paths under
///    it are dropped (the stage is vetted when moved into place); `git` a
///    file (worktree): `git` itself is protected;
/// 3. repositories nested below `nested_roots`: their hooks (reserved),
///    configuration files and `commondir` are protected;
/// 4. without a stage, the files git's effective configuration names
///    ([`crate::protect::git::git_vet`], reading `git_home`) are protected too;
/// 5. `Protect { reserve_if }`: reserved when one of those paths exists;
/// 6. a reserved path that is missing gets a placeholder at its first
///    missing component (a socket inode of mode 000, covered read-only,
///    removed after the run); git configuration files get an empty file
///    instead; a missing `commondir` is removed after the run if created;
///    a missing path that is not reserved is dropped.
///
/// The resulting steps take the place of the first `Protect` or reserving
/// `Mask` step; other steps keep their order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    /// The workspace (locked shared for the run).
    pub workspace: PathBuf,
    /// The workspace's git entry.
    pub git: PathBuf,
    /// Writable grants searched for nested repositories.
    pub nested_roots: Vec<PathBuf>,
    /// Home whose git configuration is read to find hooks and includes.
    pub git_home: Option<PathBuf>,
    /// Places the host trusts (true: secrets) wherever they are: another
    /// name for one of them inside a writable grant (a hard link, another
    /// mount of the same tree: the same device and inode) is protected
    /// like it ([`crate::protect::grant_walk`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<(PathBuf, bool)>,
    /// Directories the walk of `nested_roots` before the run reads at most
    /// (None: [`crate::protect::git::nested_git::MAX_DIRS`]; ADR 0204).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_max_dirs: Option<u64>,
    /// Missing protected files reserved as empty, read-only files (a
    /// tool reads them and an empty one means "no settings"), not as
    /// unreadable placeholders ([`HostFacts::empty_when_missing`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_files: Vec<PathBuf>,
}

/// The home's top-level dot entries before the run (the workspace holds
/// the home): entries created during the run are quarantined after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HomeQuarantine {
    /// The home directory.
    pub home: PathBuf,
    /// Its dot entries at planning time.
    pub existing: Vec<String>,
}

/// Where a run's copy-on-write layer over the workspace may live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceLayer {
    /// skarn's state directory for layers (`~/.local/state/skarn/layers`),
    /// tried first; then the workspace's parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PathBuf>,
    /// Whether the layer was asked for by name (`--workspace-layer cow`,
    /// `[run] workspace_layer`): then overlayfs refusing it fails the
    /// set-up; as the default, the run falls back to `direct` and says so
    /// (ADR 0226).
    #[serde(default)]
    pub asked: bool,
}

/// Checks made on the host after the run (persistence protection).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterRun {
    /// The workspace's HEAD is checked, and repositories created below
    /// these writable grants are vetted ([`crate::protect::git::nested_git`]).
    pub vet_roots: Vec<PathBuf>,
    /// The writable grants other than the workspace: persistence paths
    /// the run makes at their tops are set aside
    /// ([`crate::protect::grant_tops`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_tops: Vec<PathBuf>,
    /// New top-level dot entries of the home are moved aside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine_home: Option<HomeQuarantine>,
    /// Links inside writable grants that home files (or other places the
    /// host trusts) pass through, with their text: one the run removed or
    /// changed is put back after it ([`crate::protect::home_links`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_guards: Vec<(PathBuf, PathBuf)>,
    /// `PATH` directories inside writable grants missing before the run,
    /// each with the `PATH` directories after it: new programs there
    /// named like later ones are set aside ([`crate::protect::path_shadow`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_path_dirs: Vec<(PathBuf, Vec<PathBuf>)>,
    /// `PATH` directories inside writable grants that exist before the run
    /// and that a relative entry of a home start-up file names (atk22d
    /// F9: `./node_modules/.bin`, `.`): programs changed there during the
    /// run and named like later ones are set aside.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_path_dirs: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Relative `PATH` entries (of home start-up files and of the caller's
    /// `PATH`), searched by a host shell in whatever directory the user is
    /// in: after the run every directory of the writable grants they can
    /// name is looked at ([`crate::protect::path_shadow_walk`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relative_path: Vec<String>,
    /// The absolute `PATH` directories, whose programs' names a relative
    /// entry's directory must not take.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_later: Vec<PathBuf>,
    /// Program names the host's configuration runs through `PATH`
    /// (`core.pager = delta`): a new program by such a name in one of the
    /// `PATH` directories above is set aside too
    /// ([`crate::protect::configured_programs`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_configured: Vec<String>,
    /// Relative `core.hooksPath` values of the global git configuration
    /// (`.githooks`): a repository created during the run with that
    /// directory is set aside ([`crate::protect::git::nested_git`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks_rel: Vec<PathBuf>,
    /// The files skarn writes into a kept state directory at start
    /// ([`FsOp::StateFile`]), each with the SHA-256 (hex) of its text:
    /// removed before the checks while they still hold it, so skarn's own
    /// copy is never set aside as the run's (atk27k F6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_files: Vec<(PathBuf, String)>,
}

/// Everything the helper needs, serialisable (passed as JSON). Final: the
/// helper executes it and never changes or recomputes it; what it can only
/// observe at run time is a planned step with its rule ([`Reservation`],
/// [`HostTmp`], [`MemoryCgroup::fallback_as`], [`NsFallback`], the
/// run-time rules of each [`FsOp`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Target argv (argv\[0\] is looked up in PATH when it has no slash).
    pub argv: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Workspace.
    pub workspace: PathBuf,
    /// Where the run records that it is alive and its pending check after
    /// the run ([`crate::protect::run_record`]; `~/.local/state/skarn/runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_dir: Option<PathBuf>,
    /// How long records of killed runs over other workspaces stay there
    /// (`[run] state_keep`; None: [`crate::protect::run_record::STALE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_keep: Option<std::time::Duration>,
    /// Caller uid/gid (for the user namespace maps).
    pub uid: u32,
    /// Caller gid.
    pub gid: u32,
    /// Namespaces to create.
    pub ns: Namespaces,
    /// Bring `lo` up in the new network namespace.
    pub loopback_up: bool,
    /// Keep network sockets given as stdin/stdout/stderr (the policy gives
    /// the host network unrestricted); otherwise the target replaces them
    /// by /dev/null.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stdio_sockets_kept: bool,
    /// The allow-list proxy (`--net allow:...`), when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<crate::linux::plan::egress::EgressPlan>,
    /// New-root steps (only with a mount namespace).
    pub fs: Vec<FsOp>,
    /// The reservation step (only with a mount namespace).
    #[serde(default)]
    pub reservation: Option<Reservation>,
    /// Landlock (None when the kernel has none).
    pub landlock: Option<LandlockPlan>,
    /// seccomp (None when unavailable).
    pub seccomp: Option<SeccompPlan>,
    /// Resource limits applied with setrlimit.
    pub rlimits: Vec<(Rlimit, u64)>,
    /// pids cgroup parent dir and pids.max (root only).
    pub cgroup: Option<(PathBuf, u64)>,
    /// Memory cgroup (root only; else the limit is an `Rlimit::As`).
    #[serde(default)]
    pub memory_cgroup: Option<MemoryCgroup>,
    /// Size of each private tmpfs (/tmp, /dev/shm, the private home, cache
    /// layers): the memory limit, so files there cannot pin more memory
    /// than the command may allocate.
    #[serde(default)]
    pub tmpfs_bytes: Option<u64>,
    /// Wall-clock limit in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Variables set for the command (TMPDIR, ...).
    pub set_env: Vec<(String, String)>,
    /// Without a mount namespace: a private TMPDIR on the host.
    #[serde(default)]
    pub host_tmp: Option<HostTmp>,
    /// Kill the helper when its parent dies.
    pub die_with_parent: bool,
    /// Refuse to run if a mechanism fails at run time and nothing remains.
    pub fail_closed: bool,
    /// Report as planned; the helper adds run-time notes.
    pub report: RestrictionReport,
    /// How to print the report.
    pub report_format: ReportFormat,
    /// One line printed on stderr when the command exits non-zero: what
    /// the sandbox denies, so an agent can tell a denial from a bug and ask
    /// for exactly the grant it needs.
    #[serde(default)]
    pub failure_hint: String,
    /// Ports of the sandbox's loopback published on the host's 127.0.0.1
    /// (`--publish HOST:SANDBOX`, ADR 0183; `--net loopback` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub publish: Vec<(u16, u16)>,
    /// Who started the run (`SKARN_CALLER`): the failure line says the fix
    /// in its terms ([`crate::report::denials`]).
    #[serde(
        default,
        skip_serializing_if = "crate::report::denials::Caller::is_terminal"
    )]
    pub caller: crate::report::denials::Caller,
    /// Printed instead when the command is not found (exit 127) but the
    /// host has it outside the grants: its host path and the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found_hint: Option<String>,
    /// Printed when the command fails and nothing was recorded, if the
    /// command names paths the host has outside what the run may read
    /// (they are missing files inside): the paths and the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_hint: Option<String>,
    /// The workspace when it lies in `/tmp`, which is private to the run:
    /// after the command, init lists what it wrote beside the workspace
    /// (e.g. `git worktree add ../wt`), since that is discarded.
    #[serde(default)]
    pub tmp_watch: Option<PathBuf>,
    /// The agent's pending edits inside the writable grants when planned,
    /// held with a mount namespace (ADR 0244): the failure line names
    /// them, the checks after the run leave them out (the agent's tool
    /// writes them during the run), and a lease that appears before the
    /// run's record exists stops the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_edits: Vec<PathBuf>,
    /// Checks on the host after the run (None: persistence not protected).
    #[serde(default)]
    pub after_run: Option<AfterRun>,
    /// The workspace is a copy-on-write layer whose changes are vetted and
    /// applied after the run ([`crate::linux::cow`], ADR 0130).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_layer: Option<WorkspaceLayer>,
    /// Root in a workspace owned by another uid: the workspace is bound
    /// (or its copy-on-write layer stacked, ADR 0226) through an id mapping
    /// that swaps its owner and root ([`crate::linux::idmap_workspace`], ADR
    /// 0180).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub workspace_idmap: bool,
    /// The workspace's store ([`crate::linux::store`], ADR 0175): its directory,
    /// which the helper locks and fills before the [`FsOp::Store`] steps
    /// mount its caches (or turns them into discarded layers when another
    /// run holds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<PathBuf>,
    /// When the helper's `unshare` fails at run time (None when it
    /// unshares nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_fallback: Option<NsFallback>,
}

/// Planning failed: the policy cannot be enforced and `fail_closed` is set,
/// or the policy is malformed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// fail_closed and nothing can be enforced.
    #[error("refusing to run: {0} (fail_closed is set; use --no-sandbox to run unconfined)")]
    CannotEnforce(String),
    /// A path is not absolute.
    #[error("path must be absolute: {0}")]
    RelativePath(PathBuf),
    /// No command.
    #[error("no command given")]
    NoCommand,
    /// The workspace is the home directory or an ancestor of it.
    #[error(
        "workspace {0} holds the home directory: a command could then change what the host \
         runs or trusts (~/.gitconfig, ~/.config/skarn, shell start-up files); run from a \
         project directory, or pass --allow-home-workspace (every secret and persistence path \
         under it is then protected)"
    )]
    HomeWorkspace(PathBuf),
    /// A writable grant is, holds or lies in a system directory.
    #[error(
        "refusing to make {0} writable: it is, holds or lies in a system directory (/usr, /etc, \
         /bin, /lib, ...), which every later command on this host trusts"
    )]
    SystemWrite(PathBuf),
}
