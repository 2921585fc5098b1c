//! The keys of a client's MCP server entry that stay once `init` wraps it
//! (attack atk24r F2). The client applies some keys to the process it
//! starts, which for a wrapped entry is the host `skarn` itself: VS
//! Code's `envFile` sets every variable of a project file on it
//! (`LD_PRELOAD=./x.so` runs the repository's library on the host before
//! any sandbox), a debug or dev mode starts other programs. So an entry
//! keeps only keys skarn knows to be inert for the host process (an
//! allow-list); every other key is dropped and said, already-wrapped
//! entries included (a repository may ship one that looks wrapped).

use serde_json::{Map, Value};

/// Keys that start nothing on the host and set nothing on the started
/// process beyond what `init` judges (`command`, `args`, `env`, `cwd`,
/// `headersHelper` are judged by the caller).
const KEPT: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "headersHelper",
    "timeout",
    "description",
    "disabled",
    "enabled",
    "alwaysAllow",
    "autoApprove",
    "trust",
    "includeTools",
    "excludeTools",
    "tools",
    "oauth",
];

/// Drop every key of `entry` not in [`KEPT`]; what was dropped, one line
/// each, for the server `name`.
pub fn drop_unknown(name: &str, entry: &mut Map<String, Value>) -> Vec<String> {
    let gone: Vec<String> = entry
        .keys()
        .filter(|k| !KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    gone.into_iter()
        .map(|k| {
            entry.remove(&k);
            format!(
                "{name} {k} dropped (the client applies it to the host process it starts, \
                 before any sandbox)"
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inert_keys_stay() {
        let mut m: Map<String, Value> = serde_json::from_str(
            r#"{"type":"stdio","command":"node","args":["s.js"],"envFile":"${workspaceFolder}/x","dev":{"watch":"*"}}"#,
        )
        .unwrap();
        let said = drop_unknown("docs", &mut m);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(m.get("envFile").is_none() && m.get("dev").is_none());
        assert_eq!(m.len(), 3);
    }
}
