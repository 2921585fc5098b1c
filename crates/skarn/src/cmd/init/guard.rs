//! `skarn init --client claude-code` puts the prompt guard (ADR 0342) in
//! the user's own Claude Code settings, whatever the project: a
//! `UserPromptSubmit` entry naming a per-user token, which blocks the
//! prompt while the settings alter skarn's hook chain. A repository's
//! settings cannot remove it (hooks of every settings file run) nor
//! replace it (its command is one no repository can guess).

use std::path::Path;

use serde_json::{Value, json};

use super::init_clients::AGENT_TIMEOUT_SECS;
use super::init_clients::{self, Edit};
use super::init_files;
use super::{Change, exe};

/// The token of a guard already in the settings text `text`.
fn token_in(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text).ok()?;
    v.pointer("/hooks/UserPromptSubmit")?
        .as_array()?
        .iter()
        .filter_map(|g| g.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .find_map(|c| crate::cmd::hook::guard_of(c, "claude-code"))
}

/// Add the guard to the user's Claude Code settings among `changes`.
pub(super) fn add_guard(changes: &mut Vec<Change>, home: &Path) -> anyhow::Result<()> {
    let Some(dir) = crate::cmd::hook::confine_hooks::claude_dir(Some(home)) else {
        return Ok(());
    };
    let path = dir.join("settings.json");
    // The user's directory (`$CLAUDE_CONFIG_DIR` may lie outside the home).
    let base = if path.starts_with(home) {
        home
    } else {
        dir.as_path()
    };
    let target = init_files::resolve(&path, base)?;
    let at = changes.iter().position(|c| c.target.real == target.real);
    let old = match at {
        Some(i) => Some(changes[i].new.clone()),
        None => init_files::read(&target)?,
    };
    let token = match old.as_deref().and_then(token_in) {
        Some(t) => t,
        None => crate::cmd::hook::new_guard_token()?,
    };
    let command = crate::cmd::hook::guard_command(&exe(), "claude-code", &token);
    let edit = Edit::JsonHook {
        event: "UserPromptSubmit",
        agent: "claude-code",
        entry: json!({
            "hooks": [{ "type": "command", "command": command,
                        "timeout": AGENT_TIMEOUT_SECS, "onFailure": "block" }],
        }),
        version: None,
    };
    let new = init_clients::apply(&path, old.as_deref(), &edit)?;
    match at {
        Some(i) => changes[i].new = new,
        None => changes.push(Change { target, old, new }),
    }
    Ok(())
}
