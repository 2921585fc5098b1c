//! Claude Code's MCP tools pass only when their server is one a file the
//! hook reads defines (issue 24, atk24u F4 left open): the servers `init`
//! wraps in `skarn run` are there (the project's `.mcp.json`, the user's
//! `.claude.json`, its per-project entries, the managed `managed-mcp.json`).
//! A plugin's server (`mcp__plugin_<plugin>_<server>__*`) is started by
//! Claude Code from the plugin's directory on the host and never wrapped;
//! an Agent SDK server runs in the SDK program's own process; a server of
//! `--mcp-config` or one the client adds by itself is in no file the hook
//! reads: their tools are refused with the reason, unless the user allows
//! them (`[hook] allow_tools`, e.g. `"mcp__plugin_x_y__*"`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::settings::Settings;
use super::unknown_tools::ALLOW_ADVICE;

/// Claude Code's managed MCP servers file on Linux.
const MANAGED: &str = "/etc/claude-code/managed-mcp.json";

/// A server name as Claude Code puts it in a tool name: every character
/// but ASCII letters, digits, `_` and `-` becomes `_` (its `claude.ai`
/// connectors also lose runs and ends of `_`).
pub(super) fn tool_name_part(name: &str) -> String {
    let t: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with("claude.ai ") {
        return t;
    }
    let mut out = String::new();
    for c in t.chars() {
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out.trim_matches('_').to_string()
}

/// The `mcpServers` names of the JSON file `f`, and of its
/// `projects[<dir>]` entries for `dirs`.
fn names_in(f: &Path, dirs: &[PathBuf], out: &mut Vec<String>) {
    let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(f) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    let mut tables = vec![v.get("mcpServers")];
    for d in dirs {
        tables.push(
            v.get("projects")
                .and_then(|p| p.get(d.to_string_lossy().as_ref()))
                .and_then(|p| p.get("mcpServers")),
        );
    }
    for t in tables.into_iter().flatten().filter_map(Value::as_object) {
        out.extend(t.keys().map(|k| tool_name_part(k)));
    }
}

/// The names (as in tool names) of the servers the files Claude Code
/// reads define for the project directories `dirs`.
pub(super) fn known(dirs: &[PathBuf], home: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    for d in dirs {
        names_in(&d.join(".mcp.json"), &[], &mut out);
    }
    let user = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|d| d.join(".claude.json"))
        .or_else(|| home.map(|h| h.join(".claude.json")));
    if let Some(u) = user {
        names_in(&u, dirs, &mut out);
    }
    names_in(Path::new(MANAGED), &[], &mut out);
    out
}

/// Why the MCP tool `tool` must not run (`None`: not an MCP tool, its
/// server is defined where the hook reads, or the user allowed it).
pub(super) fn refusal(
    tool: &str,
    dirs: &[PathBuf],
    home: Option<&Path>,
    settings: &Settings,
) -> Option<String> {
    let rest = tool.strip_prefix("mcp__")?;
    if settings.allows_tool(tool)
        || super::unknown_tools::gateway_tool(tool)
        || super::unknown_tools::CLAUDE_HARMLESS.contains(&tool)
    {
        return None;
    }
    let why = if rest.starts_with("plugin_") {
        "it is a tool of a plugin's MCP server, which Claude Code starts from the plugin's \
         directory on the host, outside skarn run (skarn init does not wrap plugin servers)"
    } else if known(dirs, home)
        .iter()
        .any(|s| !s.is_empty() && tool.starts_with(&format!("mcp__{s}__")))
    {
        return None;
    } else {
        "its server is defined in no file skarn reads (the project's .mcp.json, ~/.claude.json, \
         managed-mcp.json): an Agent SDK server runs in the SDK program's own process and a \
         server given on the command line or added by the client runs as the client started it, \
         not wrapped in skarn run by skarn init"
    };
    Some(format!(
        "skarn: {tool} refused: {why}{ALLOW_ADVICE} if it neither writes files nor runs code: \
         allow_tools = [\"{tool}\"] under [hook] in ~/.config/skarn/config.toml"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_and_unknown_servers_are_refused_configured_ones_pass() {
        let d = std::env::temp_dir().join(format!("skarn-mcp-servers-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(".mcp.json"),
            r#"{"mcpServers":{"git hub":{"command":"x"},"docs":{"url":"http://127.0.0.1:9"}}}"#,
        )
        .unwrap();
        let s = Settings::load(None, None, &[]).unwrap();
        let dirs = vec![d.clone()];
        let home = Some(d.as_path());
        for t in [
            "mcp__git_hub__search",
            "mcp__docs__read",
            "mcp__skarn__run",
            "mcp__ide__getDiagnostics",
        ] {
            assert!(refusal(t, &dirs, home, &s).is_none(), "{t}");
        }
        for t in [
            "mcp__plugin_p_docs__read",
            "mcp__sdk__run",
            "mcp__doc__read",
            "mcp__docsx__read",
        ] {
            assert!(refusal(t, &dirs, home, &s).is_some(), "{t}");
        }
        assert_eq!(
            tool_name_part("claude.ai Google Drive"),
            "claude_ai_Google_Drive"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
