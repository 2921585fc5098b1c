//! skarn-sandbox: kernel-enforced confinement for one command on Linux.
//!
//! Guarantees, once [`helper::helper_main`] execs the target (every item is
//! enforced by the kernel before the command's first instruction; anything
//! the host cannot do is listed in the [`RestrictionReport`] and lowers its
//! status to `PartiallyEnforced`):
//! - **Filesystem**: a new mount namespace whose root holds only the granted
//!   paths (system directories read+exec, the workspace and a private /tmp
//!   read-write, extra grants as asked), a fresh /proc, a minimal /dev; on
//!   top, a Landlock allow-list with the same grants. Secret paths
//!   ([`policy::default_secret_paths`] plus the policy's) are never
//!   readable, even under a granted directory; persistence paths of the
//!   workspace ([`persistence::ENTRIES`], and the git directory's effective
//!   hooks and configuration, [`git_vet`]) stay read-only.
//! - **Network**: per [`NetPolicy`] (empty network namespace by default).
//! - **Processes**: PID, IPC and UTS namespaces; Landlock scopes (ABI 6) so
//!   no signal or abstract-unix connection reaches outside; a seccomp
//!   deny-list ([`seccomp::DENY_LIST`]); all capabilities dropped;
//!   no_new_privs; a new session; parent-death signal; descriptors above 2
//!   closed; secret-looking environment variables removed.
//! - **Limits**: timeout (tree killed, exit 124), memory, processes, file size.
//!
//! The mechanisms (capabilities, namespaces, Landlock, seccomp, rlimits,
//! descriptors) come from the confinement kit `skarn-confine`, shared with
//! the Code Mode worker; [`privs`], [`seccomp`], [`landlock_rules`] and
//! [`ns`] are this crate's thin users of it, and the data they apply (the
//! deny-list, the Landlock access classes) stays here.
//!
//! Policy assembly ([`Policy::from_layers`], [`assemble`]): config files,
//! flags and a gateway server's settings are [`Layer`]s merged by one set
//! of rules, each value with its provenance ([`Provenance`]).
//!
//! The [`RestrictionReport`] printed after a run carries that provenance
//! ([`report_provenance`]: which kind of layer set each setting) and one
//! entry per confinement layer (the kit's `Enforcement`), sent by the
//! stage that applied the layer right after applying it; a layer nobody
//! reported is listed as not enforced, never assumed from the plan.
//!
//! Platforms: the confinement above (and the modules that build it) exists
//! only on Linux (`#[cfg(target_os = "linux")]`). The platform-neutral
//! parts compile on every target: the [`Policy`] and [`NetPolicy`],
//! `skarn.toml`'s [`config`], [`env`] scrubbing, the [`RestrictionReport`],
//! [`presets`], [`persistence`] entries, [`grants`] resolution and the git
//! configuration readers; [`git_vet`] and [`owner_only`] need unix. Other
//! operating systems' backends build on these: [`windows`] (AppContainer;
//! its plan compiles and is tested everywhere, its launcher on Windows only).

pub mod assemble;
pub mod config;
#[cfg(target_os = "linux")]
pub mod cow;
pub mod credential_text;
pub mod dotfiles;
#[cfg(target_os = "linux")]
pub mod egress;
pub mod egress_env;
#[cfg(target_os = "linux")]
mod egress_fd;
#[cfg(target_os = "linux")]
mod egress_proxy;
#[cfg(target_os = "linux")]
pub mod egress_secrets;
pub mod env;
pub mod envrc;
#[cfg(target_os = "linux")]
pub mod fdmount;
#[cfg(unix)]
pub mod git_sweep;
#[cfg(unix)]
pub mod git_vet;
pub mod gitconfig;
pub mod grant_links;
#[cfg(unix)]
pub mod grant_walk;
pub mod granted;
pub mod grants;
#[cfg(target_os = "linux")]
pub mod helper;
#[cfg(unix)]
pub mod home_links;
#[cfg(unix)]
pub mod home_mention_places;
#[cfg(unix)]
pub mod home_mentions;
#[cfg(target_os = "linux")]
pub mod host;
#[cfg(target_os = "linux")]
pub mod host_probe;
#[cfg(unix)]
pub mod host_programs;
#[cfg(target_os = "linux")]
pub mod idmap;
#[cfg(target_os = "linux")]
pub mod idmap_plan;
#[cfg(target_os = "linux")]
pub mod landlock_rules;
#[cfg(target_os = "linux")]
pub mod lapse;
#[cfg(target_os = "linux")]
pub mod launch;
pub mod layer_flags;
pub mod layers;
pub mod macos;
#[cfg(target_os = "linux")]
pub mod memory;
#[cfg(target_os = "linux")]
pub mod mounts;
#[cfg(target_os = "linux")]
pub mod nested_git;
#[cfg(target_os = "linux")]
pub mod ns;
pub mod offline_env;
#[cfg(unix)]
pub mod owner_only;
#[cfg(unix)]
pub mod path_shadow;
pub mod persistence;
#[cfg(target_os = "linux")]
pub mod placeholder;
#[cfg(target_os = "linux")]
pub mod plan;
pub mod policy;
pub mod presets;
#[cfg(target_os = "linux")]
pub mod privs;
#[cfg(target_os = "linux")]
pub mod probe;
pub mod provenance;
#[cfg(unix)]
pub mod rebase_todo;
pub mod report;
pub mod report_provenance;
mod report_text;
#[cfg(target_os = "linux")]
pub mod run_record;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(unix)]
pub mod set_aside;
#[cfg(unix)]
pub mod shell_sources;
#[cfg(unix)]
pub mod shell_words;
#[cfg(target_os = "linux")]
pub mod staging;
#[cfg(target_os = "linux")]
pub mod sys;
#[cfg(target_os = "linux")]
pub mod terminal;
pub mod terminal_filter;
pub mod trust;
#[cfg(target_os = "linux")]
pub mod tty_relay;
pub mod untrusted;
#[cfg(unix)]
pub mod venv_guard;
pub mod windows;
pub mod workspace;
pub mod workspace_kind;
#[cfg(unix)]
pub mod yarn_path;

pub use assemble::{LayerHost, PolicyError};
#[cfg(target_os = "linux")]
pub use host::HostFacts;
pub use layers::{Layer, LimitKey, Sourced};
#[cfg(target_os = "linux")]
pub use plan::{Plan, PlanError, plan};
pub use policy::{Grant, HostList, Limits, NetPolicy, Policy};
pub use provenance::Provenance;
pub use report::{Backend, RestrictionReport, Status};
pub use workspace::{Workspace, WorkspaceRoot};
