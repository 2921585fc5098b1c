//! `skarn init --client NAME`: the files each AI client reads, and merging
//! skarn's entries into them without losing anything already there (JSON
//! key order kept; TOML comments and layout kept by toml_edit).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

/// The clients `skarn init --client` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// `.mcp.json` (project) or `~/.claude.json` (--user), plus the Bash hook
    /// in `.claude/settings.json` or `~/.claude/settings.json`.
    ClaudeCode,
    /// `.cursor/mcp.json` or `~/.cursor/mcp.json` (`mcpServers`).
    Cursor,
    /// `~/.codex/config.toml` (`[mcp_servers.skarn]`).
    Codex,
    /// `~/.codeium/windsurf/mcp_config.json` (`mcpServers`).
    Windsurf,
    /// `.vscode/mcp.json` or the user profile's `mcp.json` (`servers`).
    Vscode,
    /// `.gemini/settings.json` or `~/.gemini/settings.json` (`mcpServers`).
    GeminiCli,
}

/// One change to one file.
#[derive(Debug, Clone)]
pub enum Edit {
    /// `root[key].skarn = entry` in a JSON file.
    McpJson { key: &'static str, entry: Value },
    /// `[mcp_servers.skarn]` in a TOML file.
    McpToml { command: String, args: Vec<String> },
    /// A PreToolUse Bash hook running `command` in a Claude Code settings file.
    ClaudeHook { command: String },
}

/// Whether the edit is the hook (for --no-hook / --hook-only).
impl Edit {
    pub fn is_hook(&self) -> bool {
        matches!(self, Edit::ClaudeHook { .. })
    }
}

/// Where things go for `client`: (file, edit), in order.
pub fn plan(
    client: Client,
    user: bool,
    home: &Path,
    cwd: &Path,
    exe: &str,
    config: &Path,
) -> Vec<(PathBuf, Edit)> {
    let args = vec![
        "serve".to_string(),
        "--config".into(),
        config.display().to_string(),
    ];
    let entry = json!({ "command": exe, "args": args });
    let mcp = |key| Edit::McpJson {
        key,
        entry: entry.clone(),
    };
    let at = |project: &str, user_path: &str| {
        if user {
            home.join(user_path)
        } else {
            cwd.join(project)
        }
    };
    match client {
        Client::ClaudeCode => vec![
            (at(".mcp.json", ".claude.json"), mcp("mcpServers")),
            (
                at(".claude/settings.json", ".claude/settings.json"),
                Edit::ClaudeHook {
                    command: format!("{} hook claude-code", super::hook::quote(exe)),
                },
            ),
        ],
        Client::Cursor => vec![(
            at(".cursor/mcp.json", ".cursor/mcp.json"),
            mcp("mcpServers"),
        )],
        Client::Codex => vec![(
            home.join(".codex/config.toml"),
            Edit::McpToml {
                command: exe.into(),
                args,
            },
        )],
        Client::Windsurf => vec![(
            home.join(".codeium/windsurf/mcp_config.json"),
            mcp("mcpServers"),
        )],
        Client::Vscode => vec![(
            at(".vscode/mcp.json", ".config/Code/User/mcp.json"),
            Edit::McpJson {
                key: "servers",
                entry: json!({ "type": "stdio", "command": exe, "args": args }),
            },
        )],
        Client::GeminiCli => vec![(
            at(".gemini/settings.json", ".gemini/settings.json"),
            mcp("mcpServers"),
        )],
    }
}

/// Apply `edit` to a file's current text (`None`: no file yet) and return
/// the new text.
pub fn apply(path: &Path, old: Option<&str>, edit: &Edit) -> anyhow::Result<String> {
    match edit {
        Edit::McpToml { command, args } => merge_toml(path, old.unwrap_or(""), command, args),
        Edit::McpJson { key, entry } => {
            let mut root = parse_json(path, old)?;
            let servers = child_object(&mut root, key, path)?;
            servers.insert("skarn".into(), entry.clone());
            to_text(&root)
        }
        Edit::ClaudeHook { command } => {
            let mut root = parse_json(path, old)?;
            let hooks = child_object(&mut root, "hooks", path)?;
            let list = hooks
                .entry("PreToolUse")
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(list) = list else {
                bail!("{}: hooks.PreToolUse is not an array", path.display());
            };
            let present = list.iter().any(|group| {
                group["hooks"].as_array().is_some_and(|hs| {
                    hs.iter().any(|h| {
                        h["command"]
                            .as_str()
                            .is_some_and(|c| c.contains("hook claude-code"))
                    })
                })
            });
            if !present {
                list.push(json!({
                    "matcher": "Bash",
                    "hooks": [{ "type": "command", "command": command }],
                }));
            }
            to_text(&root)
        }
    }
}

fn parse_json(path: &Path, old: Option<&str>) -> anyhow::Result<Value> {
    match old {
        None => Ok(Value::Object(Map::new())),
        Some(t) if t.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(t) => {
            let v: Value = serde_json::from_str(t).with_context(|| {
                format!(
                    "{} is not plain JSON (comments are not kept: fix it or add skarn by hand)",
                    path.display()
                )
            })?;
            if !v.is_object() {
                bail!("{}: the top level is not a JSON object", path.display());
            }
            Ok(v)
        }
    }
}

fn child_object<'a>(
    root: &'a mut Value,
    key: &str,
    path: &Path,
) -> anyhow::Result<&'a mut Map<String, Value>> {
    let obj = root.as_object_mut().context("not an object")?;
    obj.entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .with_context(|| format!("{}: {key} is not an object", path.display()))
}

fn to_text(v: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

fn merge_toml(path: &Path, old: &str, command: &str, args: &[String]) -> anyhow::Result<String> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = old
        .parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .with_context(|| format!("{}: mcp_servers is not a table", path.display()))?;
    let mut arr = Array::new();
    for a in args {
        arr.push(a.as_str());
    }
    let skarn = servers
        .entry("skarn")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: mcp_servers.skarn is not a table", path.display()))?;
    skarn["command"] = value(command);
    skarn["args"] = value(arr);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests;
