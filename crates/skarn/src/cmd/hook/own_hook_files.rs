//! The hook files VS Code and Gemini CLI run by themselves (attack atk24t
//! F6): while one holds a hook neither wrapped in `skarn run` nor trusted
//! word for word, their hook refuses every call, as Claude Code's does
//! (ADR 0255). VS Code runs the hooks of `.github/hooks/*.json`, of each
//! folder `chat.hookFilesLocations` names, of `~/.copilot/hooks` and of
//! Claude Code's settings files (the project's and the user's); Gemini
//! CLI those of the project's and the user's `.gemini/settings.json`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use skarn_sandbox::protect::agent_md::{self, Location};

use super::confine_hooks::{self, Kind};

/// Most hook files read from one folder; past it the folder counts as
/// holding an unconfined hook (fail closed).
const MAX_FILES: usize = 256;

/// The `.json` files of the folder `d`, sorted; `Err` past [`MAX_FILES`].
fn json_files(d: &Path) -> Result<Vec<PathBuf>, ()> {
    let Ok(rd) = std::fs::read_dir(d) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json") {
            if out.len() == MAX_FILES {
                return Err(());
            }
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// The files (and, past the bound, folders) whose hooks VS Code runs for
/// the workspace `ws`, with the findings of settings skarn cannot read.
fn vscode_files(ws: &Path, home: Option<&Path>, found: &mut Vec<String>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for l in agent_md::vscode_locations(ws, home) {
        // An unreadable location setting is the agents' refusal already.
        if let Location::Dir(d, _) = l
            && !dirs.contains(&d)
        {
            dirs.push(d);
        }
    }
    if let Some(h) = home {
        dirs.push(h.join(".copilot/hooks"));
    }
    let mut out = Vec::new();
    for d in dirs {
        match json_files(&d) {
            Ok(f) => out.extend(f),
            Err(()) => found.push(format!(
                "{}: (more than {MAX_FILES} hook files: their hooks count as unconfined)",
                d.display()
            )),
        }
    }
    out.push(ws.join(".claude/settings.json"));
    out.push(ws.join(".claude/settings.local.json"));
    if let Some(c) = confine_hooks::claude_dir(home) {
        out.push(c.join("settings.json"));
    }
    out
}

/// Hook entries with an OS-specific command (`linux`, `osx`, `windows`):
/// VS Code runs it instead of `command`, and skarn does not judge it.
fn os_commands(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for k in ["linux", "osx", "windows"] {
                if let Some(Value::String(c)) = m.get(k)
                    && (m.contains_key("command") || m.contains_key("type"))
                {
                    out.push(format!("{k}: {c}"));
                }
            }
            m.values().for_each(|x| os_commands(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| os_commands(x, out)),
        _ => {}
    }
}

/// The unconfined hooks of the files `agent` (`vscode`, `gemini-cli`)
/// runs by itself for the workspace `ws`, one line each (`file: command`).
/// A command is confined when it is this skarn's own hook (for `agent`
/// or, in Claude Code's settings, for Claude Code), wrapped by this skarn,
/// or trusted.
fn unconfined(
    agent: &str,
    ws: &Path,
    home: Option<&Path>,
    exe: &str,
    trusted: &[String],
) -> Vec<String> {
    let mut found = Vec::new();
    let files = match agent {
        "vscode" => vscode_files(ws, home, &mut found),
        "gemini-cli" => {
            let mut f = vec![ws.join(".gemini/settings.json")];
            f.extend(home.map(|h| h.join(".gemini/settings.json")));
            f
        }
        _ => Vec::new(),
    };
    for f in files {
        let text = match skarn_sandbox::policy::config::read_text(&f) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                found.push(confine_hooks::unreadable(&f, &e.to_string()));
                continue;
            }
        };
        let mut cmds: Vec<String> =
            confine_hooks::unconfined_in_settings(&text, agent, exe, trusted)
                .into_iter()
                .filter(|c| {
                    confine_hooks::judge(c, "claude-code", exe, trusted) == Kind::Unconfined
                })
                .collect();
        if agent == "vscode"
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            os_commands(&v, &mut cmds);
        }
        found.extend(cmds.into_iter().map(|c| {
            format!(
                "{}: {}",
                f.display(),
                skarn_sandbox::protect::terminal_filter::one_line(&c)
            )
        }));
    }
    found
}

/// Most findings named in a refusal.
const MAX_SHOWN: usize = 3;

/// The refusal of every call while [`unconfined`] finds a hook: `init`
/// does not rewrite these files (it lists them), so the user removes the
/// hook or trusts it word for word.
pub fn refusal(
    agent: &str,
    ws: &Path,
    home: Option<&Path>,
    exe: &str,
    trusted: &[String],
) -> Option<String> {
    let found = unconfined(agent, ws, home, exe, trusted);
    if found.is_empty() {
        return None;
    }
    let shown: Vec<&str> = found.iter().take(MAX_SHOWN).map(String::as_str).collect();
    let more = found.len().saturating_sub(MAX_SHOWN);
    Some(format!(
        "skarn: {} hook command(s) of this agent's own hook files run outside skarn's sandbox, \
         on the host, where the code they load may be the agent's ({}{}); every tool call is \
         refused while they are there{}: remove them (`skarn init --client {agent}` lists the \
         hook files this agent runs), or list each exact command in [hook] trusted_hooks of \
         ~/.config/skarn/config.toml to keep it unconfined.",
        found.len(),
        shown.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        },
        skarn_sandbox::report::advice::USER_MAY_CONFINE,
    ))
}
