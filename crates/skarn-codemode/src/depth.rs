//! How deeply a tool result may nest before a script gets an error
//! instead (the same bound in-process and in the worker).

use crate::bridge::BridgeError;

/// Deepest tool result (JSON nesting levels) handed to a script; a deeper
/// one becomes a catchable error, in-process and in the worker alike.
pub const MAX_RESULT_DEPTH: usize = 512;

/// Nesting depth of a JSON value (a scalar is 0, `[]` is 1), without
/// recursion.
pub fn json_depth(v: &serde_json::Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let kids: Box<dyn Iterator<Item = &serde_json::Value>> = match v {
            serde_json::Value::Array(a) => Box::new(a.iter()),
            serde_json::Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        max = max.max(d + 1);
        stack.extend(kids.map(|k| (k, d + 1)));
    }
    max
}

/// The catchable error a script gets instead of a result nested deeper
/// than [`MAX_RESULT_DEPTH`] (`what` names the call).
pub fn result_too_deep(what: &str) -> BridgeError {
    BridgeError::Other {
        message: format!("the result of {what} is nested deeper than {MAX_RESULT_DEPTH} levels"),
    }
}
