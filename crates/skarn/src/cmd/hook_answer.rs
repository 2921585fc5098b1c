//! What a wrapped hook may answer (ADR 0282). Confining a hook's process
//! does not confine its answer: Claude Code reads the hook's stdout as
//! JSON and takes `updatedInput` (a new command for `Bash`, a new
//! `file_path` for `Write`), `permissionDecision: allow`,
//! `decision: approve` and a PermissionRequest's `allow` with
//! `updatedPermissions` from it (attack atk24m F19-F21). A hook that runs
//! code the agent may rewrite could so turn an already-confined command
//! into an unconfined one, or a judged write into one anywhere.
//!
//! So `__hook-confined` passes on only what narrows or informs: the
//! fields below, by name, with deny/ask/block decisions; everything else
//! (`updatedInput`, `allow`, `approve`, permission updates, any field not
//! known here) is dropped and said on stderr. Output that is not a JSON
//! object passes as plain text unless it holds a `{` (a reader more
//! lenient than ours might find JSON in it): then it is dropped.

use serde_json::{Map, Value};

/// Top-level fields a hook's answer keeps (Claude Code's common output,
/// Gemini CLI's equivalents).
const TOP: &[&str] = &[
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "reason",
];

/// `hookSpecificOutput` fields kept as they are.
const SPECIFIC: &[&str] = &[
    "hookEventName",
    "permissionDecisionReason",
    "additionalContext",
];

/// Decisions that narrow: a tool call refused or put to the user, a stop
/// refused.
fn narrows(d: &Value) -> bool {
    matches!(d.as_str(), Some("deny" | "ask" | "block"))
}

/// The answer `out` (the wrapped hook's stdout) as the client may read
/// it, and the names of what was dropped.
pub fn narrow(out: &[u8]) -> (Vec<u8>, Vec<String>) {
    let text = String::from_utf8_lossy(out);
    if text.trim().is_empty() {
        return (out.to_vec(), Vec::new());
    }
    match serde_json::from_slice::<Value>(out) {
        Ok(Value::Object(m)) => {
            let mut dropped = Vec::new();
            let kept = object(m, &mut dropped);
            let mut s = Value::Object(kept).to_string().into_bytes();
            s.push(b'\n');
            (s, dropped)
        }
        Ok(_) if !text.contains('{') => (out.to_vec(), Vec::new()),
        Err(_) if !text.contains('{') => (out.to_vec(), Vec::new()),
        _ => (
            Vec::new(),
            vec!["the whole answer (not a JSON object skarn can read)".into()],
        ),
    }
}

fn object(m: Map<String, Value>, dropped: &mut Vec<String>) -> Map<String, Value> {
    let mut kept = Map::new();
    for (k, v) in m {
        match k.as_str() {
            _ if TOP.contains(&k.as_str()) => {
                kept.insert(k, v);
            }
            "decision" if narrows(&v) => {
                kept.insert(k, v);
            }
            "hookSpecificOutput" => {
                if let Value::Object(h) = v {
                    kept.insert(k, Value::Object(specific(h, dropped)));
                } else {
                    dropped.push(k);
                }
            }
            _ => dropped.push(k),
        }
    }
    kept
}

fn specific(h: Map<String, Value>, dropped: &mut Vec<String>) -> Map<String, Value> {
    let mut kept = Map::new();
    for (k, v) in h {
        match k.as_str() {
            _ if SPECIFIC.contains(&k.as_str()) => {
                kept.insert(k, v);
            }
            // `ask` beside skarn's own `allow` + `updatedInput` makes
            // Claude Code drop the rewrite and, once the user approves,
            // run the original command unconfined (attack atk24n F5): a
            // confined hook's `ask` is passed on as `deny`.
            "permissionDecision" if v.as_str() == Some("ask") => {
                dropped
                    .push("hookSpecificOutput.permissionDecision ask (passed on as deny)".into());
                kept.insert(k, Value::from("deny"));
            }
            "permissionDecision" if narrows(&v) => {
                kept.insert(k, v);
            }
            // PermissionRequest: `{behavior: deny, message, interrupt}`.
            "decision" if v.get("behavior").is_some_and(narrows) => {
                let mut d = Map::new();
                for f in ["behavior", "message", "interrupt"] {
                    if let Some(x) = v.get(f) {
                        d.insert(f.into(), x.clone());
                    }
                }
                kept.insert(k, Value::Object(d));
            }
            _ => dropped.push(format!("hookSpecificOutput.{k}")),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(v: &str) -> (Value, Vec<String>) {
        let (o, d) = narrow(v.as_bytes());
        (serde_json::from_slice(&o).unwrap_or(Value::Null), d)
    }

    #[test]
    fn widening_fields_are_dropped() {
        let (v, d) = run(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"id"}},"decision":"approve"}"#,
        );
        assert_eq!(
            v,
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse"}})
        );
        assert_eq!(d.len(), 3, "{d:?}");
        let (v, _) = run(
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{},"updatedPermissions":[{}]}}}"#,
        );
        assert_eq!(
            v,
            json!({"hookSpecificOutput":{"hookEventName":"PermissionRequest"}})
        );
    }

    #[test]
    fn narrowing_fields_are_kept() {
        let s = r#"{"continue":false,"decision":"block","reason":"r","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#;
        let (v, d) = run(s);
        assert_eq!(v, serde_json::from_str::<Value>(s).unwrap());
        assert!(d.is_empty());
        let (v, _) = run(
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"m","updatedPermissions":[{}]}}}"#,
        );
        assert_eq!(
            v["hookSpecificOutput"]["decision"],
            json!({"behavior":"deny","message":"m"})
        );
    }

    #[test]
    fn text_passes_and_unreadable_json_does_not() {
        assert_eq!(narrow(b"remember the tests\n").0, b"remember the tests\n");
        // A lone surrogate: JavaScript's parser reads it, serde_json not.
        let s = "\u{feff}{\"hookSpecificOutput\":{\"updatedInput\":{\"command\":\"id\"}},\"x\":\"\\ud800\"}";
        assert!(narrow(s.as_bytes()).0.is_empty());
    }
}
