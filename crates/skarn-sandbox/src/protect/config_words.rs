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

/// Programs whose first argument that is not an option is a script they
/// run, whatever its name (attack atk24t F4): `sh .ci.sh`, `python3 tool`
/// (its `__main__.py`), `tclsh gen.tcl`, `java Gen.java`.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "python",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "Rscript",
    "julia",
    "elixir",
    "groovy",
    "swift",
    "java",
    "tsx",
    "ts-node",
    "pwsh",
    "nu",
    "osascript",
];

/// Programs whose script comes after a subcommand (`go run gen.go`).
const RUNNERS: &[&str] = &["go", "deno", "bun"];

/// Programs whose script comes after `-f` only (`awk -f gen.awk`): their
/// first other argument is program text.
const FILE_OPTION: &[&str] = &["awk", "gawk", "mawk", "nawk", "sed", "gsed"];

/// Where a command's words stand relative to an interpreter's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Position {
    /// Not after an interpreter.
    #[default]
    None,
    /// After an interpreter: its next word that is not an option is the
    /// script.
    Interpreter,
    /// After a runner (`go`): its `run` subcommand is next.
    Runner,
    /// After an `-f` program (`awk`): only `-f` names a script.
    FileOption,
    /// The next word is the script.
    Script,
}

impl Position {
    /// The position after the word `w` (its program's basename counts),
    /// and whether `w` itself stands where a script does.
    pub fn next(self, w: &str) -> (Position, bool) {
        if w.is_empty() {
            return (self, false);
        }
        let base = w.rsplit('/').next().unwrap_or(w);
        let python = base
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
        let start = if python || INTERPRETERS.contains(&base) {
            Some(Position::Interpreter)
        } else if RUNNERS.contains(&base) {
            Some(Position::Runner)
        } else if FILE_OPTION.contains(&base) {
            Some(Position::FileOption)
        } else {
            None
        };
        match self {
            Position::Script => (start.unwrap_or(Position::None), true),
            Position::Interpreter if w.starts_with('-') => {
                // Code or a module given inline: no script.
                if matches!(
                    w,
                    "-c" | "-e" | "-m" | "-p" | "--eval" | "--print" | "-Command"
                ) {
                    (Position::None, false)
                } else if matches!(w, "-f" | "-File") {
                    (Position::Script, false)
                } else {
                    (self, false)
                }
            }
            Position::Interpreter => (start.unwrap_or(Position::None), true),
            Position::Runner if w == "run" => (Position::Interpreter, false),
            Position::FileOption if w == "-f" => (Position::Script, false),
            Position::FileOption if w.starts_with('-') => (self, false),
            _ => (start.unwrap_or(Position::None), false),
        }
    }
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

/// The rest of `word` after a leading climb (`/../../tools/x`,
/// `./../tools/x` -> `tools/x`), when it climbs and the rest climbs no
/// more.
pub(crate) fn climbing_tail(word: &str) -> Option<&str> {
    let mut t = word.trim_start_matches('/');
    let mut climbed = false;
    loop {
        if let Some(r) = t.strip_prefix("../") {
            (t, climbed) = (r, true);
        } else if let Some(r) = t.strip_prefix("./") {
            t = r;
        } else {
            break;
        }
    }
    let t = t.trim_start_matches('/');
    (climbed && !t.is_empty() && !t.split('/').any(|c| c == "..")).then_some(t)
}

/// `w` as a path relative to (or absolute inside) the workspace, if it
/// reads as one: a leading `$VAR`, `${VAR}` or `!` dropped (the rest keeps
/// its slash); no glob,
/// pattern or URL characters.
pub(crate) fn path_word(w: &str) -> Option<String> {
    let w = w.trim_start_matches('!').trim_end_matches([':', '\\']);
    // After a variable, the rest is kept with its slash (taken from the
    // workspace's top, like a word after a quoted variable).
    let w = if let Some(rest) = w.strip_prefix("${") {
        &rest[rest.find("}/")? + 1..]
    } else if let Some(rest) = w.strip_prefix('$') {
        let (v, _) = rest.split_once('/')?;
        if !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        &rest[v.len()..]
    } else {
        w
    };
    if w.is_empty()
        || w.len() > 4096
        || w.contains("://")
        || w.chars().any(|c| {
            matches!(
                c,
                '*' | '?' | '^' | '$' | '|' | '{' | '}' | '<' | '>' | '\\' | '#'
            ) || c.is_control()
        })
        || w.starts_with('-')
        || w.starts_with('~')
    {
        return None;
    }
    Some(w.to_string())
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

    fn scripts(line: &str) -> Vec<&str> {
        let mut pos = Position::None;
        let mut out = Vec::new();
        for w in line.split(' ') {
            let (n, script) = pos.next(w);
            if script {
                out.push(w);
            }
            pos = n;
        }
        out
    }

    #[test]
    fn a_script_is_known_by_its_place_after_an_interpreter() {
        assert_eq!(scripts("sh .ci.sh"), [".ci.sh"]);
        assert_eq!(scripts("python3 -u tool x"), ["tool"]);
        assert_eq!(scripts("/usr/bin/python3.12 tool"), ["tool"]);
        assert_eq!(scripts("go run gen.go"), ["gen.go"]);
        assert_eq!(scripts("java Gen.java"), ["Gen.java"]);
        assert_eq!(scripts("awk -f gen.awk /dev/null"), ["gen.awk"]);
        assert_eq!(scripts("tclsh gen.tcl && sh b"), ["gen.tcl", "b"]);
        assert!(scripts("python3 -m tools.e").is_empty());
        assert!(scripts("sh -c x").is_empty());
        assert!(scripts("awk {print} f").is_empty());
        assert!(scripts("make lint").is_empty());
    }
}
