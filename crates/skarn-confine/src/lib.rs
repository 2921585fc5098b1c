//! skarn-confine: the Linux confinement mechanisms shared by `skarn run`
//! (crate `skarn-sandbox`) and the Code Mode worker (crate `skarn-worker`).
//! Mechanisms only, no policy: which syscalls, paths, limits and
//! namespaces a process gets is data owned by the caller.
//!
//! Guarantees:
//! - [`seccomp`]: one rule type ([`seccomp::SyscallRule`]: a syscall, an
//!   argument matcher, what a match does, and the reason the rule exists)
//!   and one compile path ([`seccomp::compile`]) for both modes: a
//!   deny-list (everything not matched is allowed) and an allow-list
//!   (everything not matched is refused with an errno or kills). In both
//!   modes a syscall made through a foreign ABI (the i386 `int 0x80` ABI on
//!   x86_64, AArch32 on aarch64) kills the process, and an x32-ABI number
//!   on x86_64 never reaches the table (see [`seccomp`] for the answer in
//!   each mode).
//! - [`landlock`]: one ruleset builder with the ABI pinned
//!   ([`landlock::PINNED_ABI`]) and a compatibility level chosen per part
//!   (filesystem floor, newer filesystem rights, network, scopes, path
//!   rules); the outcome reports each part, enforced or not.
//! - [`caps`], [`namespaces`], [`rlimits`], [`fds`], [`process`]: the
//!   remaining steps, each acting on the calling process or thread, with
//!   owned or borrowed descriptors rather than raw integers in their
//!   signatures.
//! - [`Enforcement`]: one status vocabulary (layer, status, detail) for
//!   what was applied, used by the sandbox's report and the worker's
//!   report. It is the only part that exists on every OS; everything else
//!   compiles to nothing outside Linux.
//!
//! Every function that changes the process says in its documentation
//! whether it must run single-threaded; none of them undoes itself.

#![deny(clippy::undocumented_unsafe_blocks)]

mod enforcement;

pub use enforcement::{Enforcement, Layer, Status};

#[cfg(target_os = "linux")]
pub mod caps;
#[cfg(target_os = "linux")]
pub mod fds;
#[cfg(target_os = "linux")]
pub mod landlock;
#[cfg(target_os = "linux")]
pub mod namespaces;
#[cfg(target_os = "linux")]
pub mod process;
#[cfg(target_os = "linux")]
pub mod rlimits;
#[cfg(target_os = "linux")]
pub mod seccomp;
