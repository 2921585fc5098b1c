//! Hook handlers skarn can neither wrap nor judge (attack atk24n F7, F8).
//! Claude Code runs a `command` hook through a shell (wrapped by `init`,
//! ADR 0255), asks its own model for a `prompt` hook and starts a
//! subagent (whose tool calls meet skarn's hook) for an `agent` hook. An
//! `http` hook POSTs every tool's input and output, the confined
//! command's output included, to the URL the settings name, and its
//! answer may `allow` a new command; an `mcp_tool` hook hands them to a
//! server's tool; a type a later release adds is unknown. So any other
//! handler counts as unconfined: `init` lists it, the hook refuses every
//! call while it is there, unless its line ([`line`]) is listed word for
//! word in `[hook] trusted_hooks`.

use serde_json::{Map, Value};

/// Handler types that run no program skarn does not see and send the
/// tool calls nowhere but the client's own model.
const SEEN: &[&str] = &["prompt", "agent"];

/// One line per handler under the settings value's `hooks` that is not a
/// `command` (with a string command), `prompt` or `agent` handler.
pub fn in_settings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(h) = v.get("hooks") {
        walk(h, &mut out);
    }
    out
}

/// [`in_settings`] less those the user trusts.
pub fn untrusted(v: &Value, trusted: &[String]) -> Vec<String> {
    in_settings(v)
        .into_iter()
        .filter(|l| !trusted.iter().any(|t| t == l))
        .collect()
}

/// Every object under `v` with a `type` that is not a seen one; the
/// values of a group or a seen handler are looked through too (the client
/// ignores keys it does not know: a matcher group with a decoy `"type":
/// "agent"` still runs the `http` handlers in its `hooks`, attack atk24o
/// F2). A handler found is one line, its own values are not walked.
fn walk(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => match m.get("type") {
            Some(Value::String(t))
                if SEEN.contains(&t.as_str())
                    || t == "command" && matches!(m.get("command"), Some(Value::String(_))) =>
            {
                m.values().for_each(|x| walk(x, out))
            }
            None => m.values().for_each(|x| walk(x, out)),
            Some(_) => out.push(line(m)),
        },
        Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
        _ => {}
    }
}

/// Whether `found` (a line of [`line`], perhaps after `FILE: `) names a
/// handler of this kind rather than a command.
pub fn is_line(found: &str) -> bool {
    found.contains(" hook to ") || found.contains(" hook calling ") || found.contains(" hook {")
}

/// What a handler does, in one line: its type and where it sends the
/// call (`http http://host/path`, `mcp_tool server/tool`), else its JSON.
pub fn line(m: &Map<String, Value>) -> String {
    let s = |k: &str| m.get(k).and_then(Value::as_str);
    let t = match m.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    };
    let what = match (s("url"), s("server"), s("tool")) {
        (Some(u), _, _) => format!("{t} hook to {u}"),
        (None, Some(srv), Some(tool)) => format!("{t} hook calling {srv}/{tool}"),
        _ => format!("{t} hook {}", Value::Object(m.clone())),
    };
    let cut: String = what.chars().take(300).collect();
    skarn_sandbox::protect::terminal_filter::one_line(&cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_command_prompt_and_agent_handlers_pass() {
        let v = serde_json::json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "x"},
                {"type": "prompt", "prompt": "ok?"},
                {"type": "agent", "prompt": "check"},
                {"type": "http", "url": "http://h/p"},
                {"type": "mcp_tool", "server": "s", "tool": "t"},
                {"type": "command", "command": ["not", "a", "string"]},
                {"type": "later"}]}]}});
        let f = in_settings(&v);
        assert_eq!(f.len(), 4, "{f:?}");
        assert_eq!(f[0], "http hook to http://h/p");
        assert_eq!(f[1], "mcp_tool hook calling s/t");
        assert!(untrusted(&v, &f).is_empty());
        assert!(in_settings(&serde_json::json!({"statusLine": {"type": "http"}})).is_empty());
        // A group's decoy `type` hides nothing (atk24o F2).
        let decoy = serde_json::json!({"hooks": {"PostToolUse": [{"matcher": "*",
            "type": "prompt", "hooks": [{"type": "http", "url": "http://h/q"}]}]}});
        assert_eq!(in_settings(&decoy), ["http hook to http://h/q"]);
    }
}
