//! Code Mode runs for the result-conversion target: a bridge whose every
//! tool answers one fixed JSON value.

use serde_json::Value;
use skarn_codemode::{BridgeFuture, ExecOutcome, Limits, ToolBridge};
use std::time::Duration;

/// The script used when the input gives none: the tool's answer, returned.
pub const ECHO: &str = "return await skarn.server(\"s\").t({});";

/// The output cap of the runs.
pub const LIMITS_OUTPUT: usize = 256 << 10;

struct Answer(Value);

impl ToolBridge for Answer {
    fn call_tool(&self, _server: &str, _tool: &str, _args: Value) -> BridgeFuture<'_, Value> {
        let v = self.0.clone();
        Box::pin(async move { Ok(v) })
    }
    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        let v = self.0.clone();
        Box::pin(async move { Ok(v) })
    }
    fn read_resource(&self, _server: &str, _uri: &str) -> BridgeFuture<'_, Value> {
        let v = self.0.clone();
        Box::pin(async move { Ok(v) })
    }
}

/// Run `script` with every host call answering `answer`, under small
/// limits (the fuzzer's timeout is far above the deadline).
pub fn run(script: &str, answer: Value) -> ExecOutcome {
    let limits = Limits {
        memory_bytes: 32 << 20,
        deadline: Duration::from_secs(2),
        max_tool_calls: 16,
        max_output_bytes: LIMITS_OUTPUT,
        ..Limits::default()
    };
    skarn_codemode::execute(script, std::sync::Arc::new(Answer(answer)), &limits)
}

/// `v` as JavaScript holds it: every number as an IEEE double (a JSON
/// integer beyond 2^53 cannot come back exact, and need not).
pub fn as_js_reads(v: &Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(as_js_reads).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), as_js_reads(v))).collect())
        }
        x => x.clone(),
    }
}

/// An upper bound of the bracket nesting of `text` (strings not skipped):
/// deeper inputs are left out before serde_json, whose recursion the
/// harness's stack would not survive.
pub fn nesting(text: &str) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                d += 1;
                max = max.max(d);
            }
            b']' | b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}
