//! skarn-codemode: run a short LLM-written JS/TS script so that only its
//! returned value and its `skarn.log` lines ever leave it.
//!
//! The contract every other crate codes against lives in [`bridge`],
//! [`limits`] and [`outcome`]. The engine entry point is [`execute`].

pub mod bridge;
pub mod limits;
pub mod outcome;

pub use bridge::{BridgeError, BridgeFuture, ToolBridge};
pub use limits::Limits;
pub use outcome::{ErrorKind, ExecError, ExecOutcome};

use std::sync::Arc;

/// Validate, strip and run `code` (the body of an async function) in a fresh
/// hermetic isolate, with every host call going through `bridge`.
///
/// Blocking: call it from a plain thread or `tokio::task::spawn_blocking`.
/// It never panics and always returns within `limits.deadline` plus about a
/// second, even when the isolate is stuck in native code.
pub fn execute(code: &str, bridge: Arc<dyn ToolBridge>, limits: &Limits) -> ExecOutcome {
    let _ = (code, bridge, limits);
    ExecOutcome::failed(ExecError::new(
        ErrorKind::Internal,
        "the Code Mode engine is not built yet (issue 3)",
    ))
}
