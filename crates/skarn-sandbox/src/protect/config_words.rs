//! Words of an agent client's or host tool's configuration that name a
//! workspace file without a slash or relative to another directory
//! (attack atk22l F5), for [`crate::protect::config_named`]:
//! `{"command": "node", "args": ["server.js"]}` runs `./server.js` from
//! the directory the client starts its servers and hooks in (the
//! project), a pre-commit `entry: python3 lint.py` from the repository's
//! top, and `claude mcp add`'s local-scope servers in `~/.claude.json`
//! name theirs relative to their project.

use std::path::{Path, PathBuf};

/// Extensions of the scripts an interpreter named before them runs.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx", "py", "pyw", "sh", "bash", "zsh", "fish",
    "rb", "pl", "php", "lua", "ps1", "r", "jl", "exs", "groovy", "kts",
];

/// Whether the bare word `w` reads as a script (`server.js`, `check.py`).
pub fn script_word(w: &str) -> bool {
    !w.contains('/')
        && !w.starts_with('.')
        && Path::new(w)
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| SCRIPT_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
}

/// Projects at most read from `~/.claude.json`.
const MAX_PROJECTS: usize = 4096;

/// The `mcpServers` tables (as text) of the projects of the
/// `~/.claude.json` text `text` whose directory is `base`, lies in it or
/// holds it, each with that directory (their relative words' start).
pub fn claude_projects(text: &str, base: &Path) -> Vec<(PathBuf, String)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(projects) = v.get("projects").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    projects
        .iter()
        .take(MAX_PROJECTS)
        .filter_map(|(dir, p)| {
            let d = crate::policy::config::normalize(Path::new(dir));
            let related = d.is_absolute() && (d.starts_with(base) || base.starts_with(&d));
            let servers = p.get("mcpServers")?;
            related.then(|| (d, servers.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_and_projects() {
        assert!(script_word("server.js") && script_word("check.PY"));
        assert!(!script_word("Cargo.toml") && !script_word("lint") && !script_word("a/b.js"));
        let t = r#"{"projects":{"/w/p":{"mcpServers":{"l":{"command":"node","args":["b/i.js"]}}},
                    "/other":{"mcpServers":{}}}}"#;
        let v = claude_projects(t, Path::new("/w/p"));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].0, PathBuf::from("/w/p"));
        assert!(v[0].1.contains("b/i.js"));
    }
}
