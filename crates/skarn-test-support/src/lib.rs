//! skarn-test-support: shared helpers for Skarn's tests (dev-only, never
//! published, never a normal dependency).
//!
//! What it guarantees:
//! - [`TempDir`]: a fresh directory under the system temp dir (or a parent
//!   the test names, such as `/etc`), readable by every user (tests also
//!   run unprivileged and through sandboxes), removed with everything in it
//!   when dropped.
//! - [`bins`]: the path of a program Cargo built next to the running test
//!   binary, or a panic saying which package to build.
//! - [`FakeBridge`]: an in-memory `ToolBridge` whose answers are closures,
//!   counting and recording what a script asked for; ready-made ones echo,
//!   answer a constant, never answer, or block their thread behind a
//!   [`Gate`].
//! - [`CountingSink`]: a loopback TCP upstream counting the bytes it
//!   really received.
//!
//! - [`tls_server::TlsServer`]: an HTTPS server on loopback with its own
//!   CA, answering with a closure and recording every request.
//!
//! - [`skip!`]: skip a test that cannot run here, saying why; CI sets
//!   `SKARN_TEST_FORBID_SKIP` so that any skip fails the run.
//!
//! Helpers panic on failure: in a test, a panic is the failure report.

pub mod bins;
pub mod bridge;
pub mod git_index;
pub mod sink;
pub mod skip;
pub mod temp;
pub mod tls_server;

pub use bins::{bin_next_to, is_root, target_bin};
pub use bridge::{FakeBridge, Gate, Reply};
pub use sink::CountingSink;
pub use temp::TempDir;
