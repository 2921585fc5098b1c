//! Shared helpers for the engine's integration tests.

use std::sync::Arc;
use std::time::Duration;

use skarn_codemode::bridge::NoServers;
use skarn_codemode::{ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge, execute};

pub fn limits_ms(deadline_ms: u64) -> Limits {
    Limits {
        deadline: Duration::from_millis(deadline_ms),
        ..Limits::default()
    }
}

pub fn run(code: &str) -> ExecOutcome {
    execute(code, Arc::new(NoServers), &limits_ms(10_000))
}

pub fn run_with(code: &str, bridge: Arc<dyn ToolBridge>, limits: &Limits) -> ExecOutcome {
    execute(code, bridge, limits)
}

pub fn value(code: &str) -> serde_json::Value {
    match run(code).result {
        Ok(v) => v,
        Err(e) => panic!("{code:?} failed: {e}"),
    }
}

pub fn error(out: &ExecOutcome, kind: ErrorKind, code: &str) -> ExecError {
    match &out.result {
        Err(e) if e.kind == kind => e.clone(),
        other => panic!("{code:?}: expected a {kind:?} error, got {other:?}"),
    }
}

pub fn runtime_error(code: &str) -> ExecError {
    let out = run(code);
    error(&out, ErrorKind::Runtime, code)
}
