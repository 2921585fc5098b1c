//! Merging skarn's entries into a client's file without losing what is
//! there: JSON keeps its key order (serde_json `preserve_order`), TOML its
//! comments and layout (toml_edit).

use std::path::Path;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::{Edit, TomlValue};

/// Apply `edit` to a file's current text (`None`: no file yet) and return
/// the new text.
pub fn apply(path: &Path, old: Option<&str>, edit: &Edit) -> anyhow::Result<String> {
    match edit {
        Edit::McpToml { keys } => merge_toml(path, old.unwrap_or(""), keys),
        Edit::McpJson { key, entry, input } => {
            let mut root = parse_json(path, old)?;
            let servers = child_object(&mut root, key, path)?;
            servers.insert("skarn".into(), entry.clone());
            if let Some(input) = input {
                let obj = root.as_object_mut().context("not an object")?;
                let list = obj.entry("inputs").or_insert_with(|| json!([]));
                let Value::Array(list) = list else {
                    bail!("{}: inputs is not an array", path.display());
                };
                if !list.iter().any(|i| i["id"] == input["id"]) {
                    list.push(input.clone());
                }
            }
            to_text(&root)
        }
        Edit::JsonHook {
            event,
            agent,
            entry,
            version,
        } => {
            let mut root = parse_json(path, old)?;
            if let Some(v) = version {
                let obj = root.as_object_mut().context("not an object")?;
                obj.entry("version").or_insert_with(|| json!(v));
            }
            let hooks = child_object(&mut root, "hooks", path)?;
            let list = hooks
                .entry(*event)
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(list) = list else {
                bail!("{}: hooks.{event} is not an array", path.display());
            };
            // Earlier skarn entries (an older path, the unguarded command)
            // are replaced, everything else kept.
            let ours = |e: &Value| {
                e["command"]
                    .as_str()
                    .is_some_and(|c| crate::cmd::hook::is_installed_hook(c, agent))
            };
            for group in list.iter_mut() {
                if let Some(Value::Array(hs)) = group.get_mut("hooks") {
                    hs.retain(|h| !ours(h));
                }
            }
            list.retain(|e| !ours(e) && !e["hooks"].as_array().is_some_and(|hs| hs.is_empty()));
            list.push(entry.clone());
            to_text(&root)
        }
        Edit::GeminiHooksOn => {
            let mut root = parse_json(path, old)?;
            let obj = root.as_object_mut().context("not an object")?;
            crate::cmd::gemini_hooks::turn_on(obj);
            to_text(&root)
        }
        Edit::TomlHook { matcher, command } => {
            merge_toml_hook(path, old.unwrap_or(""), matcher, command)
        }
    }
}

/// Codex: `[[hooks.PreToolUse]]` `matcher`, `[[hooks.PreToolUse.hooks]]`
/// `type = "command"`, `command`; earlier skarn entries replaced.
fn merge_toml_hook(path: &Path, old: &str, matcher: &str, command: &str) -> anyhow::Result<String> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = old
        .parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .with_context(|| format!("{}: hooks is not a table", path.display()))?;
    let list = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .with_context(|| {
            format!(
                "{}: hooks.PreToolUse is not an array of tables",
                path.display()
            )
        })?;
    let ours = |t: &Table| {
        t.get("hooks")
            .and_then(Item::as_array_of_tables)
            .is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command")
                        .and_then(Item::as_str)
                        .is_some_and(|c| crate::cmd::hook::is_installed_hook(c, "codex"))
                })
            })
    };
    list.retain(|t| !ours(t));
    let mut inner = Table::new();
    inner["type"] = value("command");
    inner["command"] = value(command);
    let mut inner_list = ArrayOfTables::new();
    inner_list.push(inner);
    let mut group = Table::new();
    group["matcher"] = value(matcher);
    group.insert("hooks", Item::ArrayOfTables(inner_list));
    list.push(group);
    Ok(doc.to_string())
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

fn merge_toml(path: &Path, old: &str, keys: &[(&str, TomlValue)]) -> anyhow::Result<String> {
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
    let skarn = servers
        .entry("skarn")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: mcp_servers.skarn is not a table", path.display()))?;
    // Keys of the other transport would make the entry invalid: drop them.
    for stale in ["command", "args", "url", "bearer_token_env_var"] {
        if !keys.iter().any(|(k, _)| *k == stale) {
            skarn.remove(stale);
        }
    }
    for (k, v) in keys {
        skarn[*k] = match v {
            TomlValue::Str(s) => value(s.as_str()),
            TomlValue::List(l) => value(l.iter().map(String::as_str).collect::<Array>()),
        };
    }
    Ok(doc.to_string())
}
