//! Codex's and Windsurf's own hooks run confined too (ADR 0272; ADR 0255
//! for Claude Code). Both clients run every hook command of their
//! configuration on the host, in the project, with the project's paths
//! on stdin, like Claude Code:
//!
//! - Codex: inline `[hooks]` tables of `config.toml` and `hooks.json`, in
//!   `$CODEX_HOME` (else `~/.codex`) and in each project directory's
//!   `.codex/` from the project root down to the working directory; and
//!   `notify` (an argv Codex runs when a turn ends, the event as its last
//!   argument). A project's `[features] hooks = false` switches every
//!   hook off, skarn's with them.
//! - Windsurf (Cascade): `hooks.json` in `~/.codeium/windsurf/` and the
//!   workspace's `.windsurf/` (the system file is the administrator's).
//!
//! A command is judged as Claude Code's are ([`confine_hooks::judge`]):
//! skarn's own, wrapped by this skarn (`'SKARN' __hook-confined 'CMD'`),
//! listed in `[hook] trusted_hooks`, or unconfined. `skarn init` wraps
//! what it finds ([`wrap_toml`], [`confine_hooks::wrap_settings`]); the
//! hook refuses every call while one is left ([`unconfined`]).

use std::path::{Path, PathBuf};

use super::confine_hooks::{self, Kind};
use super::shell::quote;

/// Most project directories looked at between the working directory and
/// the project root.
const MAX_DEPTH: usize = 32;

/// Codex's home (`$CODEX_HOME`, else `~/.codex`).
pub fn codex_home(home: Option<&Path>) -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".codex")))
}

/// The directories whose `.codex/` Codex reads for `ws`: `ws` and its
/// parents up to the project root (the first holding `.git`), root first.
fn codex_project_dirs(ws: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ws.ancestors().take(MAX_DEPTH) {
        out.push(d.to_path_buf());
        if std::fs::symlink_metadata(d.join(".git")).is_ok() {
            out.reverse();
            return out;
        }
    }
    // No project root: Codex reads the working directory's only.
    vec![ws.to_path_buf()]
}

/// The files holding hooks `agent` (`codex`, `windsurf`) runs for `ws`
/// that the user or a repository can change.
pub fn files(agent: &str, ws: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match agent {
        "codex" => {
            if let Some(c) = codex_home(home) {
                out.push(c.join("config.toml"));
                out.push(c.join("hooks.json"));
            }
            let dirs = codex_project_dirs(ws);
            for d in &dirs {
                out.push(d.join(".codex/config.toml"));
                out.push(d.join(".codex/hooks.json"));
            }
            // In a linked git worktree Codex may read the project hooks
            // from the same directories of the main checkout (atk24n
            // F11): judged and wrapped too.
            if let Some(root) = dirs.first()
                && let Some(main) = main_checkout(root)
            {
                for d in &dirs {
                    if let Ok(rel) = d.strip_prefix(root) {
                        out.push(main.join(rel).join(".codex/hooks.json"));
                    }
                }
            }
        }
        "windsurf" => {
            if let Some(h) = home {
                out.push(h.join(".codeium/windsurf/hooks.json"));
            }
            out.push(ws.join(".windsurf/hooks.json"));
        }
        _ => {}
    }
    out
}

/// The main checkout of the linked git worktree `root` (its `.git` a
/// file naming `<main>/.git/worktrees/NAME`); `None` for any other.
fn main_checkout(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    if !std::fs::symlink_metadata(&git).ok()?.file_type().is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&git).ok()?;
    let gitdir = root.join(text.strip_prefix("gitdir: ")?.trim_end());
    let common = match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(c) => gitdir.join(c.trim_end()),
        Err(_) => gitdir.parent()?.parent()?.to_path_buf(),
    };
    let common = std::fs::canonicalize(common).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    let main = common.parent()?.to_path_buf();
    (main != root).then_some(main)
}

fn is_toml(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "toml")
}

/// An argv as one shell line.
fn joined(words: &[&str]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// Every hook command of a Codex `config.toml` (each `command` under
/// `hooks`, an argv joined) and its `notify` argv, as shell lines.
/// `None`: not TOML (what it runs is unknown).
pub fn toml_commands(text: &str) -> Option<Vec<String>> {
    fn walk(v: &toml::Value, key: Option<&str>, out: &mut Vec<String>) {
        match v {
            toml::Value::String(s) if key == Some("command") => out.push(s.clone()),
            toml::Value::Array(a) if key == Some("command") => {
                let w: Vec<&str> = a.iter().filter_map(toml::Value::as_str).collect();
                out.push(joined(&w));
            }
            toml::Value::Array(a) => a.iter().for_each(|x| walk(x, None, out)),
            toml::Value::Table(t) => t.iter().for_each(|(k, x)| walk(x, Some(k), out)),
            _ => {}
        }
    }
    let doc: toml::Table = text.parse().ok()?;
    let mut out = Vec::new();
    if let Some(h) = doc.get("hooks") {
        walk(h, None, &mut out);
    }
    if let Some(toml::Value::Array(a)) = doc.get("notify") {
        let w: Vec<&str> = a.iter().filter_map(toml::Value::as_str).collect();
        out.push(joined(&w));
    }
    Some(out)
}

/// Whether a Codex `config.toml` switches hooks off (`[features] hooks =
/// false`, or the older `codex_hooks = false`).
pub fn hooks_off(text: &str) -> bool {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    let f = doc.get("features").and_then(toml::Value::as_table);
    ["hooks", "codex_hooks"]
        .iter()
        .any(|k| f.and_then(|f| f.get(*k)).and_then(toml::Value::as_bool) == Some(false))
}

/// The unconfined commands of one file's text.
pub fn unconfined_in(path: &Path, text: &str, agent: &str, exe: &str, t: &[String]) -> Vec<String> {
    if !is_toml(path) {
        return confine_hooks::unconfined_in_settings(text, agent, exe, t);
    }
    match toml_commands(text) {
        Some(c) => c
            .into_iter()
            .filter(|c| confine_hooks::judge(c, agent, exe, t) == Kind::Unconfined)
            // Handlers skarn cannot wrap (`mcp_tool`, `http`, a later
            // type), read as Claude Code's are (atk24n F11).
            .chain(
                text.parse::<toml::Table>()
                    .ok()
                    .and_then(|d| serde_json::to_value(d).ok())
                    .map(|v| super::other_handlers::untrusted(&v, t))
                    .unwrap_or_default(),
            )
            .collect(),
        None => vec!["(not plain TOML: its hooks cannot be read)".into()],
    }
}

/// The hook commands in the files `agent` reads for `ws` that run
/// unconfined, one line each (`file: command`).
pub fn unconfined(
    agent: &str,
    ws: &Path,
    home: Option<&Path>,
    exe: &str,
    trusted: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for f in files(agent, ws, home) {
        let text = match skarn_sandbox::policy::config::read_text(&f) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                out.push(confine_hooks::unreadable(&f, &e.to_string()));
                continue;
            }
        };
        out.extend(
            unconfined_in(&f, &text, agent, exe, trusted)
                .into_iter()
                .map(|c| {
                    format!(
                        "{}: {}",
                        f.display(),
                        skarn_sandbox::protect::terminal_filter::one_line(&c)
                    )
                }),
        );
    }
    out
}

/// Codex's `PreToolUse` hook commands for `ws` other than skarn's own:
/// Codex runs them together and applies the rewrite of the one that
/// finishes last, so beside one skarn's rewrite may be lost.
pub fn codex_peers(ws: &Path, home: Option<&Path>) -> usize {
    let mut n = 0;
    for f in files("codex", ws, home) {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f) else {
            continue;
        };
        let pre: Vec<String> = if is_toml(&f) {
            let Ok(doc) = text.parse::<toml::Table>() else {
                n += 1;
                continue;
            };
            let Some(h) = doc.get("hooks").and_then(|h| h.get("PreToolUse")) else {
                continue;
            };
            let t = format!("[hooks]\nPreToolUse = {h}\n");
            toml_commands(&t).unwrap_or_default()
        } else {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                n += 1;
                continue;
            };
            let Some(p) = v.pointer("/hooks/PreToolUse") else {
                continue;
            };
            let only = serde_json::json!({ "hooks": { "PreToolUse": p } });
            confine_hooks::unconfined_in_settings(&only.to_string(), "codex", "", &[])
        };
        n += pre
            .iter()
            .filter(|c| !super::is_own_hook(c, "codex"))
            .count();
    }
    n
}

/// Wrap every unconfined hook command and `notify` of a Codex
/// `config.toml` (comments and layout kept); the new text and what
/// changed, one line each.
pub fn wrap_toml(
    text: &str,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<(String, Vec<String>)> {
    use toml_edit::{DocumentMut, Item, Value};
    let mut doc: DocumentMut = text.parse()?;
    let mut said = Vec::new();
    let mut one = |cmd: &str| -> Option<String> {
        let new = confine_hooks::wrapped(cmd, "codex", exe, trusted)?;
        said.push(skarn_sandbox::protect::terminal_filter::one_line(cmd));
        Some(new)
    };
    fn value(v: &mut Value, key: Option<&str>, one: &mut dyn FnMut(&str) -> Option<String>) {
        let argv = |a: &toml_edit::Array| -> Option<String> {
            let w: Option<Vec<&str>> = a.iter().map(Value::as_str).collect();
            w.map(|w| joined(&w))
        };
        match v {
            Value::String(s) if key == Some("command") => {
                if let Some(new) = one(s.value()) {
                    *v = Value::from(new);
                }
            }
            Value::Array(a) if key == Some("command") => {
                if let Some(new) = argv(a).and_then(|c| one(&c)) {
                    *v = Value::from(new);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| value(x, None, one)),
            Value::InlineTable(t) => t.iter_mut().for_each(|(k, x)| value(x, Some(k.get()), one)),
            _ => {}
        }
    }
    fn item(i: &mut Item, key: Option<&str>, one: &mut dyn FnMut(&str) -> Option<String>) {
        match i {
            Item::Value(v) => value(v, key, one),
            Item::Table(t) => t.iter_mut().for_each(|(k, x)| item(x, Some(k.get()), one)),
            Item::ArrayOfTables(a) => a
                .iter_mut()
                .for_each(|t| t.iter_mut().for_each(|(k, x)| item(x, Some(k.get()), one))),
            Item::None => {}
        }
    }
    if let Some(h) = doc.get_mut("hooks") {
        item(h, None, &mut one);
    }
    // `notify`: Codex appends the event (JSON) as the last argument; the
    // wrapped form passes it on to the original argv (`"$@"`).
    if let Some(Item::Value(Value::Array(a))) = doc.get_mut("notify") {
        let w: Option<Vec<String>> = a.iter().map(|x| x.as_str().map(str::to_owned)).collect();
        if let Some(w) = w.filter(|w| !w.is_empty()) {
            let refs: Vec<&str> = w.iter().map(String::as_str).collect();
            let line = joined(&refs);
            if confine_hooks::judge(&line, "codex", exe, trusted) == Kind::Unconfined {
                // (Wrapped by a skarn since moved: its command, wrapped again.)
                let cmd = match confine_hooks::unwrap(&line) {
                    Some((_, orig)) => orig,
                    None => format!("{line} \"$@\""),
                };
                let mut new = toml_edit::Array::new();
                for x in [exe, confine_hooks::ENTRY, &cmd] {
                    new.push(x);
                }
                *a = new;
                said.push(skarn_sandbox::protect::terminal_filter::one_line(&line));
            }
        }
    }
    Ok((doc.to_string(), said))
}

/// What a project's `.codex/config.toml` sets that a cloned repository
/// (or the agent) could use against the user, one line each: hooks and
/// `notify` (programs run on the host), MCP servers, and the sandbox and
/// approval settings of Codex's own tools.
pub fn codex_project_findings(
    path: &Path,
    text: &str,
    exe: &str,
    trusted: &[String],
) -> Vec<String> {
    let p = path.display();
    let Ok(doc) = text.parse::<toml::Table>() else {
        return vec![format!("{p}: not plain TOML (what it sets cannot be read)")];
    };
    let mut f: Vec<String> = unconfined_in(path, text, "codex", exe, trusted)
        .into_iter()
        .map(|c| format!("{p}: runs on the host: {c}"))
        .collect();
    for key in [
        "sandbox_mode",
        "approval_policy",
        "sandbox_workspace_write",
        "shell_environment_policy",
        "mcp_servers",
        "features",
        "profiles",
        "model_providers",
    ] {
        if let Some(v) = doc.get(key) {
            let s: String = v.to_string().chars().take(200).collect();
            f.push(format!(
                "{p}: sets {key} = {}",
                skarn_sandbox::protect::terminal_filter::one_line(&s)
            ));
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_hooks_and_notify_are_read_and_wrapped() {
        let text = "# mine\nnotify = [\"notify-send\", \"Codex\"]\n\
            [[hooks.PostToolUse]]\nmatcher = \"apply_patch\"\n\
            [[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"npx prettier --write .\"\n\
            [mcp_servers.x]\ncommand = \"not-a-hook\"\n";
        let found = toml_commands(text).unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        let p = Path::new("/h/.codex/config.toml");
        assert_eq!(unconfined_in(p, text, "codex", "/s/skarn", &[]).len(), 2);
        let (new, said) = wrap_toml(text, "/s/skarn", &[]).unwrap();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(new.starts_with("# mine\n"), "{new}");
        assert!(new.contains("command = \"not-a-hook\""), "{new}");
        assert!(
            unconfined_in(p, &new, "codex", "/s/skarn", &[]).is_empty(),
            "{new}"
        );
        assert_eq!(unconfined_in(p, &new, "codex", "/other", &[]).len(), 2);
        // Wrapping again changes nothing.
        let (again, said) = wrap_toml(&new, "/s/skarn", &[]).unwrap();
        assert!(said.is_empty());
        assert_eq!(again, new);
        let trusted = vec!["npx prettier --write .".to_string()];
        assert_eq!(
            unconfined_in(p, text, "codex", "/s/skarn", &trusted).len(),
            1
        );
        assert!(hooks_off("[features]\nhooks = false\n"));
        assert!(!hooks_off("[features]\nhooks = true\n"));
    }
}
