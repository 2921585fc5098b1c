//! Where `execute` runs a script: the isolation seam. The gateway holds one
//! [`skarn_worker::Executor`] for its lifetime, built in the background at
//! start (`auto` probes once whether confined workers can run here); each
//! script then runs in a fresh confined worker from the warm pool, or
//! in-process, and the result names which.

use std::sync::Arc;

use skarn_codemode::{ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge};
use skarn_worker::{Executor, Isolation, PoolConfig, WorkerCommand, WorkerSize};

/// Build the executor for `isolation` (blocking: may start a probe worker).
pub fn build_executor(
    isolation: Isolation,
    warm: usize,
    limits: &Limits,
    command: WorkerCommand,
) -> Result<Executor, String> {
    let mut cfg = PoolConfig::new(command);
    cfg.warm = warm;
    cfg.size = WorkerSize::for_limits(limits);
    Executor::new(isolation, cfg).map_err(|e| e.to_string())
}

/// The sentence every result carries when a script ran without the confined
/// worker (`reason`: why, as the executor found it).
pub fn in_process_note(reason: &str) -> String {
    format!(
        "note: this script ran in-process, without the confined worker process \
         (only the hermetic isolate confined it): {reason}"
    )
}

/// Run `code` with `executor`; returns the outcome, the mode used, and a
/// note when it ran without the worker.
pub async fn run_script(
    executor: Result<Arc<Executor>, String>,
    code: String,
    bridge: Arc<dyn ToolBridge>,
    limits: Limits,
) -> (ExecOutcome, &'static str, Option<String>) {
    let executor = match executor {
        Ok(e) => e,
        Err(reason) => {
            return (
                ExecOutcome::failed(ExecError::new(ErrorKind::Internal, reason)),
                "none",
                None,
            );
        }
    };
    let note = (executor.isolation() == skarn_worker::IsolationUsed::InProcess)
        .then(|| in_process_note(executor.reason()));
    let joined =
        tokio::task::spawn_blocking(move || executor.execute(&code, bridge, &limits)).await;
    match joined {
        Ok(out) => {
            let note = (out.isolation == skarn_worker::IsolationUsed::InProcess)
                .then(|| note.unwrap_or_else(|| in_process_note("the worker was not used")));
            (out.outcome, out.isolation.as_str(), note)
        }
        Err(e) => (
            ExecOutcome::failed(ExecError::new(
                ErrorKind::Internal,
                format!("the script runner stopped unexpectedly: {e}"),
            )),
            "none",
            None,
        ),
    }
}
