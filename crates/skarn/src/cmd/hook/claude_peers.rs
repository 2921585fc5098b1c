//! Other PreToolUse hooks Claude Code runs on `Bash` beside skarn's
//! (attack atk24j F10). Claude Code aggregates the permission decision of
//! all matching hooks but takes `updatedInput` from one result only (its
//! issues #15897, #81340): with another hook on `Bash`, skarn's `allow`
//! may be kept while its rewrite is dropped, and the model's original
//! command then runs unconfined, approved. So when another hook may run
//! on `Bash`, the hook does not pair `allow` with a rewrite: it refuses
//! and names the confined command to run instead (the Codex route, which
//! no aggregation changes).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Whether a Claude Code `matcher` may match the tool `Bash`: absent,
/// empty or `*`, a regular expression, or a plain alternation with a name
/// found inside `Bash` (matchers match inside a name).
fn may_match_bash(matcher: Option<&str>) -> bool {
    let Some(m) = matcher
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "*")
    else {
        return true;
    };
    m.split('|').any(|t| {
        let plain = !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        !plain || "Bash".contains(t)
    })
}

/// The hook commands of `v` (a settings or plugin hooks file) other than
/// skarn's own that may run on `Bash` before the tool.
fn others(v: &Value) -> Vec<String> {
    let groups = v
        .pointer("/hooks/PreToolUse")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let mut out = Vec::new();
    for g in groups {
        if !may_match_bash(g.get("matcher").and_then(Value::as_str)) {
            continue;
        }
        for h in g
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let cmd = h.get("command").and_then(Value::as_str).unwrap_or("");
            if !crate::cmd::hook::is_own_hook(cmd, "claude-code") {
                out.push(
                    h.get("command")
                        .or(h.get("url"))
                        .or(h.get("prompt"))
                        .map_or_else(|| "a hook".to_string(), Value::to_string),
                );
            }
        }
    }
    out
}

/// The files Claude Code reads hooks from for the project `project`:
/// managed settings, the user's (`$CLAUDE_CONFIG_DIR`, else `~/.claude`),
/// the project's shared and local ones, and installed plugins' hooks.
fn files(project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".claude")));
    let mut out = vec![
        PathBuf::from("/etc/claude-code/managed-settings.json"),
        project.join(".claude/settings.json"),
        project.join(".claude/settings.local.json"),
    ];
    // Plugins loaded for this session with `--plugin-dir` (the client's
    // command line, read from the hook's ancestors).
    let session = super::plugin_dirs::from_parents();
    // The session's `--settings` files (ADR 0287).
    out.extend(super::claude_dirs::session_settings());
    if let Some(c) = &config {
        out.push(c.join("settings.json"));
    }
    if config.is_some() || !session.is_empty() {
        // Installed plugins: `plugins/**/hooks/hooks.json`, a bounded look.
        let mut dirs: Vec<(PathBuf, usize)> =
            config.iter().map(|c| (c.join("plugins"), 0)).collect();
        dirs.extend(session.into_iter().map(|d| (d, 0)));
        let mut seen = 0;
        while let Some((d, depth)) = dirs.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten().take(256) {
                seen += 1;
                if seen > 4096 {
                    return out;
                }
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) && depth < 6 {
                    dirs.push((p, depth + 1));
                } else if p.ends_with("hooks/hooks.json")
                    || p.ends_with(".claude-plugin/plugin.json")
                {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Other hooks that may run on `Bash` beside skarn's, one line each
/// (`file: command`), for the project `project`.
pub fn other_bash_hooks(project: &Path, home: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    for f in files(project, home) {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            // Unreadable as JSON: whether it holds a hook is unknown.
            out.push(format!("{}: not plain JSON", f.display()));
            continue;
        };
        let mut found = others(&v);
        if f.ends_with(".claude-plugin/plugin.json") {
            found.extend(manifest_hooks(&f, &v));
        }
        out.extend(found.into_iter().map(|c| format!("{}: {c}", f.display())));
    }
    out
}

/// The Bash hooks a plugin's manifest declares (atk24k F6): its `hooks`
/// is an inline hooks object (with or without the `hooks` wrapper) or one
/// or more paths, relative to the plugin's directory, of hooks files. A
/// file that cannot be read as JSON counts as a hook (unknown is refused).
fn manifest_hooks(manifest: &Path, v: &Value) -> Vec<String> {
    let Some(h) = v.get("hooks") else {
        return Vec::new();
    };
    let root = manifest.parent().and_then(Path::parent).unwrap_or(manifest);
    let paths: Vec<&str> = match h {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        Value::Object(_) => {
            // `{"PreToolUse": ...}` is read by `others` on the manifest
            // itself; `{"hooks": {"PreToolUse": ...}}` here.
            return others(h);
        }
        _ => return vec![format!("hooks of an unknown form: {h}")],
    };
    let mut out = Vec::new();
    for p in paths {
        let file = root.join(p);
        match skarn_sandbox::policy::config::read_text(&file)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        {
            Some(hv) => out.extend(others(&hv)),
            None => out.push(format!("hooks file {} (unreadable)", file.display())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_that_may_reach_bash() {
        for m in [
            None,
            Some(""),
            Some("*"),
            Some("Bash"),
            Some("Bas"),
            Some("B.*"),
            Some("Write|Bash"),
        ] {
            assert!(may_match_bash(m), "{m:?}");
        }
        for m in ["Write|Edit", "Read", "mcp__x__y"] {
            assert!(!may_match_bash(Some(m)), "{m}");
        }
        let v: Value = serde_json::from_str(
            r#"{"hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "rtk.sh"}]},
                {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}]}}"#,
        )
        .unwrap();
        assert_eq!(others(&v), vec!["\"rtk.sh\"".to_string()]);
    }
}
