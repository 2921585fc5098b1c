//! macOS backend: Seatbelt (the kernel's sandbox, written in SBPL).
//!
//! Guarantees, once the command starts (applied by `/usr/bin/sandbox-exec`
//! before the command's first instruction, inherited by every descendant,
//! never lifted):
//! - **Writes** only under the workspace, the per-run temporary directory
//!   and `--write` grants, plus a few character devices. The workspace's
//!   persistence paths ([`crate::protect::persistence`], the git layout of
//!   [`crate::protect::git::git_vet`]) are neither written nor created, and neither they
//!   nor the writable roots are renamed away or deleted. Set-id bits are
//!   never written.
//! - **Reads are coarse**: everything the user can read, minus the secret
//!   deny list ([`profile::secret_paths`]), which is matched under every
//!   name of each path (`/private`, the data volume, other volumes, any
//!   letter case, any Unicode normalisation).
//! - **Network** per [`crate::NetPolicy`]: none; localhost only (shared
//!   with the host); outbound only; all; or only the egress proxy on
//!   loopback for `--net allow:...`.
//! - **Processes**: fork and exec allowed; process information and signals
//!   only within the sandbox; a new session; Mach services limited to
//!   [`services::MACH_SERVICES`].
//! - **Limits**: timeout (process group killed, exit 124), file size and
//!   process count by rlimits; the memory rlimits are set but macOS does
//!   not enforce them for mapped memory (reported).
//!
//! The profile is made by a pure function ([`profile::profile`]) from the
//! [`crate::Policy`] and a few host facts ([`facts::MacFacts`]); it is
//! unit- and golden-tested on every OS. The launcher ([`run`]) exists on
//! macOS only.

pub mod doctor;
pub mod facts;
pub mod profile;
pub mod report;
pub mod sbpl;
pub mod secret_paths;
pub mod services;

#[cfg(target_os = "macos")]
mod egress;
#[cfg(target_os = "macos")]
mod launch;

pub use facts::MacFacts;
#[cfg(target_os = "macos")]
pub use launch::{MacosError, SANDBOX_EXEC, run};
pub use profile::{ProfileError, profile};
pub use report::report;
