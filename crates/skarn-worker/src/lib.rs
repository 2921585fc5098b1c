//! skarn-worker: Code Mode scripts in a self-confined worker process.
//!
//! Guarantees, on Linux:
//! - A worker (`skarn __codemode-worker`, see [`worker`]) confines itself
//!   before it reads any job ([`confine`]): an empty network namespace (and a
//!   user namespace when not root), no capabilities, `no_new_privs`, a
//!   Landlock domain with no filesystem or network access at all, death with
//!   its parent, an address-space limit a little above the QuickJS memory
//!   limit, and a seccomp allow-list ([`seccomp_policy`]) that leaves it its
//!   pipes, memory management, threads, futexes, clocks and exit. A script
//!   that escaped QuickJS lands there.
//! - The parent ([`process`], [`pool`]) answers the worker's host calls
//!   through the caller's [`skarn_codemode::ToolBridge`] over newline-delimited
//!   JSON ([`protocol`]). A worker that sends malformed or oversized lines,
//!   exits early, overruns its deadline or its tool-call budget is killed and
//!   reaped; the caller gets an [`skarn_codemode::ExecOutcome`] with a clear
//!   error and the pool keeps serving. No zombies, no leaked descriptors.
//! - Each worker runs exactly one script. A warm pool keeps pre-started,
//!   already-confined workers ready.
//! - [`Isolation`] (`auto | worker | in_process`) picks the strategy;
//!   [`availability`] says what `auto` means on this host and why, and every
//!   [`IsolatedOutcome`] says which isolation ran.
//!
//! Other systems: no worker confinement exists yet in this build, so
//! [`probe`] reports the worker unavailable and says why; `auto` runs
//! scripts in-process (the hermetic isolate only) with that reason, and
//! `worker` is refused with [`WorkerError::WorkerUnavailable`]. A worker
//! started anyway refuses to run anything ([`confine::confine`] fails). The
//! parent side ([`process`], [`pool`]) spawns workers on unix only.

pub mod confine;
pub mod isolation;
pub mod pool;
pub mod process;
pub mod protocol;
#[cfg(target_os = "linux")]
pub mod seccomp_policy;
#[cfg(target_os = "linux")]
pub mod selftest;
pub mod worker;

pub use confine::ConfinementReport;
pub use isolation::{
    Availability, DoctorSummary, Executor, IsolatedOutcome, Isolation, IsolationUsed, WorkerError,
    availability, doctor_summary, doctor_summary_for, probe, resolve,
};
pub use pool::{DEFAULT_WARM, PoolConfig, WorkerPool};
pub use process::{WorkerCommand, WorkerProcess, WorkerSize};
pub use protocol::{Attempt, SelftestSpec};
