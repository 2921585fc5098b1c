//! skarn-sandbox: kernel-enforced confinement for one command.
//!
//! Every caller (`skarn run` on each OS, the gateway's sandboxed servers)
//! comes in through one front door, [`prepare`]: it makes the grants
//! canonical, records the directories the command may write, observes the
//! host's facts for this policy and plans. The crate's folders are its
//! parts:
//!
//! - [`policy`]: what a command may touch, platform-neutral. Config files,
//!   flags and a gateway server's settings are [`Layer`]s merged by one set
//!   of rules ([`Policy::from_layers`]), each value with its
//!   [`Provenance`].
//! - [`protect`]: what the host runs or trusts later and a command must not
//!   plant: the workspace's persistence paths, the home's start-up files
//!   and what they name, git's files ([`protect::git`]), links out of
//!   grants, the after-run set-aside.
//! - [`secrets`]: credentials kept out: the private home's dotfiles, a
//!   run's granted secrets as placeholders.
//! - [`report`]: the [`RestrictionReport`] printed after a run: one entry
//!   per confinement layer, sent by the stage that applied it (a layer
//!   nobody reported is listed as not enforced, never assumed from the
//!   plan), and where each setting came from.
//! - [`linux`], [`macos`], [`windows`]: the backends.
//!
//! Guarantees on Linux, once the helper execs the target (every item is
//! enforced by the kernel before the command's first instruction; anything
//! the host cannot do is listed in the report and lowers its status to
//! `PartiallyEnforced`):
//! - **Filesystem**: a new mount namespace whose root holds only the granted
//!   paths (system directories read+exec, the workspace and a private /tmp
//!   read-write, extra grants as asked), a fresh /proc, a minimal /dev; on
//!   top, a Landlock allow-list with the same grants. Secret paths
//!   ([`policy::default_secret_paths`] plus the policy's) are never
//!   readable, even under a granted directory; persistence paths of the
//!   workspace ([`protect::persistence::ENTRIES`], and the git directory's
//!   effective hooks and configuration, [`protect::git`]) stay read-only.
//! - **Network**: per [`NetPolicy`] (empty network namespace by default).
//! - **Processes**: PID, IPC and UTS namespaces; Landlock scopes so no
//!   signal or abstract-unix connection reaches outside; a seccomp
//!   deny-list (`linux::seccomp::DENY_LIST`); all capabilities dropped;
//!   no_new_privs; a new session; parent-death signal; descriptors above 2
//!   closed; secret-looking environment variables removed.
//! - **Limits**: timeout (tree killed, exit 124), memory, processes, file size.
//!
//! The mechanisms (capabilities, namespaces, Landlock, seccomp, rlimits,
//! descriptors) come from the confinement kit `skarn-confine`, shared with
//! the Code Mode worker; this crate holds the data they apply (the
//! deny-list, the Landlock access classes).
//!
//! Platforms: [`linux`] is built on Linux only; [`policy`], [`report`],
//! [`secrets`] and most of [`protect`] compile everywhere (the parts that
//! read unix file metadata need unix). The [`windows`] plan compiles and
//! is tested everywhere, its launcher on Windows only.

pub mod fact_deps;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod macos;
pub mod policy;
pub mod prepare;
pub mod protect;
pub mod report;
pub mod secrets;
#[cfg(unix)]
pub mod state_file;
pub mod windows;

#[cfg(target_os = "linux")]
pub use linux::host::HostFacts;
#[cfg(target_os = "linux")]
pub use linux::plan::{Plan, PlanError, plan};
pub use policy::assemble::LayerHost;
pub use policy::layers::{Layer, LimitKey, Sourced};
pub use policy::policy_error::PolicyError;
pub use policy::provenance::Provenance;
pub use policy::workspace::{Workspace, WorkspaceRoot};
pub use policy::{Grant, HostList, Limits, NetPolicy, Policy};
pub use report::{Backend, RestrictionReport, Status};
