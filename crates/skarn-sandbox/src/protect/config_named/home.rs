//! The user's own agent configuration files that may name workspace files.

use std::path::PathBuf;

/// The user's agent configuration files that may name workspace files.
pub(super) fn home_configs() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
    else {
        return Vec::new();
    };
    let claude = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    let claude_dir = claude.clone().unwrap_or_else(|| home.join(".claude"));
    let mut out = vec![
        claude.map_or_else(|| home.join(".claude.json"), |c| c.join(".claude.json")),
        xdg.join("Code/User/mcp.json"),
        xdg.join("Code - Insiders/User/mcp.json"),
        home.join(".codeium/windsurf/mcp_config.json"),
        home.join(".codeium/windsurf/hooks.json"),
        home.join(".cursor/hooks.json"),
    ];
    let mut budget = 128usize;
    for d in [claude_dir.join("agents"), claude_dir.join("skills")] {
        let mut stack = vec![(d, 0usize)];
        while let Some((d, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten().take(256) {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) && depth < 2 {
                    stack.push((p, depth + 1));
                } else if budget > 0 && p.extension().is_some_and(|x| x == "md") {
                    budget -= 1;
                    out.push(p);
                }
            }
        }
    }
    out.retain(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_HOME_BYTES));
    out
}

/// The `mcpServers` tables of `~/.claude.json` as text (all of it when
/// it is not JSON: unknown is read whole).
pub(super) fn claude_servers(text: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return text.to_string();
    };
    let mut out = v
        .get("mcpServers")
        .map(|s| s.to_string())
        .unwrap_or_default();
    if let Some(projects) = v.get("projects").and_then(|p| p.as_object()) {
        for p in projects.values() {
            if let Some(s) = p.get("mcpServers") {
                out.push(' ');
                out.push_str(&s.to_string());
            }
        }
    }
    out
}

/// Bytes read per home file, at most (`~/.claude.json` keeps history).
const MAX_HOME_BYTES: u64 = 16 << 20;
