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
//! The public pieces ([`privs`], [`seccomp`], [`landlock_rules`], [`ns`])
//! are reusable by other confined processes.

pub mod config;
pub mod dotfiles;
pub mod egress;
mod egress_fd;
mod egress_proxy;
pub mod env;
pub mod fdmount;
pub mod git_vet;
pub mod gitconfig;
pub mod grants;
pub mod helper;
pub mod host;
pub mod landlock_rules;
pub mod lapse;
pub mod launch;
pub mod memory;
pub mod mounts;
pub mod nested_git;
pub mod ns;
pub mod owner_only;
pub mod persistence;
pub mod plan;
pub mod policy;
pub mod presets;
pub mod privs;
pub mod probe;
pub mod report;
pub mod seccomp;
pub mod staging;
pub mod sys;
pub mod terminal;
pub mod windows;

pub use host::HostFacts;
pub use plan::{Plan, PlanError, plan};
pub use policy::{Grant, HostList, Limits, NetPolicy, Policy};
pub use report::{Backend, RestrictionReport, Status};
