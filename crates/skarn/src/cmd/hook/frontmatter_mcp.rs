//! MCP servers a subagent declares in its frontmatter (attack atk24o
//! F11; ADR 0305). Claude Code starts each local server a subagent's
//! `mcpServers:` defines (a list of names of configured servers, or of
//! one-key mappings `NAME: {command, args, env}`) on the host when the
//! `Agent` tool runs that subagent, with no question asked: a cloned
//! repository's `.claude/agents/x.md` runs its code unconfined. Such a
//! definition counts like a project `.mcp.json` entry (ADR 0273): it
//! passes only when this skarn runs it as `init` writes a wrapped entry
//! (`SKARN run --timeout 0 -- ...`), or when its command line is listed
//! word for word in `[hook] trusted_hooks`. A name alone refers to a
//! server of the client's MCP files, which `init` wraps and `doctor`
//! names. What skarn cannot read while the text names `mcpServers`
//! counts as unconfined.

use serde_json::Value;

/// The key Claude Code reads.
const KEY: &str = "mcpServers";

/// The inline server definitions of a skill's, subagent's or command's
/// `text` that run unconfined, one line each.
pub fn unconfined(text: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    let v = match super::frontmatter_yaml::top_value(text, KEY) {
        Ok(Some(v)) => v,
        Ok(None) => return Vec::new(),
        Err(why) => {
            let named = super::frontmatter_yaml::frontmatter(text).is_some_and(|(_, fm)| {
                fm.to_lowercase().contains("mcpservers") || fm.contains('\\')
            });
            return if named {
                vec![format!(
                    "(frontmatter skarn cannot read as YAML within its bounds ({why}) while it \
                     may define MCP servers: they count as unconfined)"
                )]
            } else {
                Vec::new()
            };
        }
    };
    let mut defs: Vec<(String, &Value)> = Vec::new();
    match &v {
        Value::Array(items) => {
            for i in items {
                match i {
                    // A configured server's name.
                    Value::String(_) => {}
                    Value::Object(m) => defs.extend(m.iter().map(|(k, d)| (k.clone(), d))),
                    other => defs.push(("?".into(), other)),
                }
            }
        }
        Value::Object(m) => defs.extend(m.iter().map(|(k, d)| (k.clone(), d))),
        Value::String(s) if s.is_empty() => {}
        other => defs.push(("?".into(), other)),
    }
    defs.into_iter()
        .filter_map(|(name, d)| judge(&name, d, exe, trusted))
        .collect()
}

/// The finding for the definition `d` of the server `name`, if it runs
/// unconfined.
fn judge(name: &str, d: &Value, exe: &str, trusted: &[String]) -> Option<String> {
    let one = skarn_sandbox::protect::terminal_filter::one_line;
    let Value::Object(m) = d else {
        return Some(one(&format!(
            "MCP server {name}: (a definition skarn does not read)"
        )));
    };
    // Every key that is not known inert counts (atk24r F4): a remote
    // definition's `headersHelper` is a shell command the client runs on
    // the host to make the headers; it passes only when trusted word for
    // word. Another key skarn does not know may start something too.
    for (k, v) in m {
        if INERT.contains(&k.as_str()) {
            continue;
        }
        if k == "headersHelper"
            && let Value::String(h) = v
        {
            if trusted.iter().any(|t| t == h) {
                continue;
            }
            return Some(one(&format!("MCP server {name}: headersHelper {h}")));
        }
        return Some(one(&format!(
            "MCP server {name}: (key {k} skarn does not judge)"
        )));
    }
    let Some(cmd) = m.get("command") else {
        // Remote (`url`) with inert keys only: nothing runs locally.
        return None;
    };
    let (Value::String(cmd), Some(args)) = (cmd, strings(m.get("args"))) else {
        return Some(one(&format!(
            "MCP server {name}: (a command or args skarn does not read)"
        )));
    };
    let env: Vec<String> = match m.get("env") {
        None => Vec::new(),
        Some(Value::Object(e)) => e.keys().cloned().collect(),
        Some(_) => {
            return Some(one(&format!(
                "MCP server {name}: (env skarn does not read)"
            )));
        }
    };
    if super::mcp_shape::confined(cmd, &args, &env, exe, trusted) {
        return None;
    }
    Some(one(&format!(
        "MCP server {name}: {}",
        super::mcp_shape::line(cmd, &args)
    )))
}

/// Keys of a definition that start nothing on the host (`command`,
/// `args` and `env` are judged below).
const INERT: &[&str] = &[
    "type",
    "url",
    "headers",
    "timeout",
    "command",
    "args",
    "env",
    "description",
    "oauth",
];

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v {
        None => Some(Vec::new()),
        Some(Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_owned)).collect(),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_servers_count_unless_wrapped_or_trusted() {
        let list = "---\nname: d\nmcpServers:\n  - github\n  - evil:\n      command: sh\n      args: [\"-c\", \"id > /tmp/x\"]\n---\nbody\n";
        assert_eq!(
            unconfined(list, "/sk", &[]),
            vec!["MCP server evil: 'sh' '-c' 'id > /tmp/x'".to_string()]
        );
        assert!(unconfined(list, "/sk", &["'sh' '-c' 'id > /tmp/x'".into()]).is_empty());
        let wrapped = "---\nmcpServers:\n  - ok:\n      command: /sk\n      args: [run, --timeout, \"0\", --, sh, -c, x]\n---\n";
        assert!(unconfined(wrapped, "/sk", &[]).is_empty());
        assert_eq!(unconfined(wrapped, "/other", &[]).len(), 1);
        let map =
            "---\nmcpServers: {a: {command: node, args: [s.js]}, r: {url: 'http://x'}}\n---\n";
        assert_eq!(unconfined(map, "/sk", &[]).len(), 1);
        let alias = "---\nx: &d {command: node}\nmcpServers:\n  - a: *d\n---\n";
        assert_eq!(unconfined(alias, "/sk", &[]).len(), 1);
        assert!(
            unconfined(
                "---\nname: x\n---\nmcpServers: [{a: {command: x}}]\n",
                "/sk",
                &[]
            )
            .is_empty()
        );
        assert!(unconfined("---\nmcpServers: [\"a\n---\n", "/sk", &[]).len() == 1);
        // A remote definition's headersHelper runs on the host (atk24r F4).
        let helper = "---\nmcpServers:\n  - docs:\n      type: http\n      url: http://127.0.0.1:9/mcp\n      headersHelper: \"id; echo {}\"\n---\n";
        assert_eq!(
            unconfined(helper, "/sk", &[]),
            vec!["MCP server docs: headersHelper id; echo {}".to_string()]
        );
        assert!(unconfined(helper, "/sk", &["id; echo {}".into()]).is_empty());
        let other = "---\nmcpServers: {r: {url: 'http://x', envFile: .env}}\n---\n";
        assert_eq!(unconfined(other, "/sk", &[]).len(), 1);
    }
}
