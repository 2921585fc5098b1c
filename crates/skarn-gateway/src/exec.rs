//! Where `execute` runs a script. The isolation seam: today every mode runs
//! the engine in-process on a blocking thread (`auto` resolves to
//! `in_process`, and the configuration refuses `worker` until the worker
//! process exists); the result always names the mode actually used.

use std::sync::Arc;

use skarn_codemode::{ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge};

use crate::config::Isolation;

/// Run `code` under `isolation`; returns the outcome and the mode used.
pub async fn run_script(
    isolation: Isolation,
    code: String,
    bridge: Arc<dyn ToolBridge>,
    limits: Limits,
) -> (ExecOutcome, &'static str) {
    match isolation {
        Isolation::Auto | Isolation::InProcess | Isolation::Worker => {
            let used = Isolation::InProcess.as_str();
            let joined = tokio::task::spawn_blocking(move || {
                skarn_codemode::execute(&code, bridge, &limits)
            })
            .await;
            let outcome = joined.unwrap_or_else(|e| {
                ExecOutcome::failed(ExecError::new(
                    ErrorKind::Internal,
                    format!("the script runner stopped unexpectedly: {e}"),
                ))
            });
            (outcome, used)
        }
    }
}
