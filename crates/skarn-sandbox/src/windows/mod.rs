//! Windows backend: `skarn run` in an AppContainer.
//!
//! Guarantees on Windows, once [`run`] has resumed the command (each is
//! enforced by the kernel; what is not is listed in the report):
//! - **Filesystem**: the command runs in the workspace's AppContainer
//!   (its own SID, low integrity). It can open only what an ACE names its
//!   SID, a capability it holds, or ALL APPLICATION PACKAGES for (system
//!   directories by default, never the user profile). For the run, the
//!   workspace and write grants get modify rights, read/exec grants read
//!   (and execute) rights; persistence paths get deny-write ACEs (missing
//!   ones a placeholder nobody in the container can touch); secrets under
//!   a grant get deny-all ACEs. Everything is reverted after the run, and
//!   by the next run if this one was killed ([`journal`]).
//! - **Network**: capability SIDs only ([`capabilities`]): none for deny,
//!   loopback and allow-lists (all treated as deny-all, said in the
//!   report), `internetClient` for outbound.
//! - **Processes**: a job object (kill on close, no breakaway, memory per
//!   process, active process count, UI restrictions); the child is
//!   created suspended and resumed only once in the job; it inherits only
//!   its stdio pipe ends; the environment is scrubbed ([`crate::policy::env`]).
//! - **Limits**: timeout (job terminated, exit 124).
//!
//! The plan ([`plan::plan`]) is pure and compiled on every OS; the
//! launcher ([`run`]) only on Windows. The Code Mode worker is not
//! confined on Windows (a process cannot move itself into an
//! AppContainer): `skarn serve` runs scripts in the in-process isolate.

pub mod acl_plan;
pub mod capabilities;
pub mod cmdline;
mod grant_root;
pub mod host_facts;
pub mod journal;
pub mod layers;
pub mod plan;
pub mod plan_error;
pub mod profile_name;
mod protect;
pub mod secret_places;
pub mod winpath;

#[cfg(windows)]
mod sys;

pub use host_facts::WindowsHostFacts;
pub use plan::{WindowsPlan, WindowsPlanError, plan};
#[cfg(windows)]
pub use sys::probe::checks as doctor_checks;
#[cfg(windows)]
pub use sys::run::run;

/// Why a Windows run could not be set up or finished cleanly.
#[derive(Debug, thiserror::Error)]
pub enum WindowsError {
    /// The policy cannot be planned.
    #[error(transparent)]
    Plan(#[from] WindowsPlanError),
    /// The ACL journal.
    #[error("ACL journal: {0}")]
    Journal(#[from] journal::JournalError),
    /// A Windows call failed.
    #[error("{call} failed: {source}")]
    Os {
        /// The call (and its subject).
        call: String,
        /// The Windows error.
        source: std::io::Error,
    },
    /// ACLs changed for the run could not all be restored (the journal is
    /// kept; the next run retries).
    #[error("could not restore the ACL of {0} (kept in the journal; the next run retries)")]
    Restore(String),
}
