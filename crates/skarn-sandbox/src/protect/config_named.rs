//! The files the workspace's protected configuration names (attack atk24j
//! F3): an accepted project hook (`"$CLAUDE_PROJECT_DIR"/scripts/lint.sh`),
//! an MCP server's `command`, a `runOn: folderOpen` task, a pre-commit
//! `repo: local` entry, a husky hook sourcing `tools/h.sh`, lefthook's
//! `run:`, `.gitmodules`' `update = !tools/up.sh`, an `.lfsconfig` transfer
//! agent, a cargo `rustc-wrapper`, a yarn plugin, the repository's own
//! `core.fsmonitor`. The configuration is protected, but an agent client
//! or a host tool runs what it names outside any sandbox: rewriting the
//! named script is rewriting the configuration. `skarn run` keeps these
//! files read-only (missing ones reserved) and the agent's file tools
//! refuse them (`skarn hook`), from this one list.
//!
//! No parser per format is trusted to be complete (as
//! [`crate::protect::home_mentions`]): every word of those files with a
//! slash that names a file of the workspace (relative to the workspace or
//! to the file, absolute, or after a leading `$VAR`, `${VAR}` or `!`) is
//! kept, whether the file exists yet or not (a hook naming a missing script
//! is planted by making it). Directories named are not (`src` in a setting
//! would freeze the project), nor words without a slash (`lint.sh` runs
//! from `PATH`), nor configuration the user runs by hand
//! (`.vscode/launch.json`) or prose.

use std::path::{Path, PathBuf};

use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES};

/// The files the configuration of `base` names, each with the file naming
/// it (bounded: [`MAX_FILES`] files read, [`MAX_NAMED`] names kept).
pub fn named(base: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut files = Vec::new();
    let mut budget = MAX_FILES;
    let mut seen: Vec<PathBuf> = Vec::new();
    for rel in GIT_DIR_ENTRIES
        .iter()
        .chain(ENTRIES)
        .map(|e| e.path)
        .chain(EXTRA.iter().copied())
    {
        for cfg in config_files(&base.join(rel), &mut budget) {
            if seen.contains(&cfg) {
                continue;
            }
            seen.push(cfg.clone());
            for f in named_in(&cfg, base) {
                if files.len() < MAX_NAMED && !files.iter().any(|(g, _)| *g == f) {
                    files.push((f, cfg.clone()));
                }
            }
        }
    }
    files
}

/// Configuration read besides the persistence entries (some of them are
/// entries already; each is read once).
const EXTRA: &[&str] = &[
    ".git/config",
    ".gitmodules",
    ".lfsconfig",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".cargo/config.toml",
    ".cargo/config",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    ".husky",
    ".githooks",
    ".vscode/tasks.json",
    ".vscode/mcp.json",
    ".vscode/settings.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".cursor/hooks.json",
    ".cursor/mcp.json",
    ".github/hooks",
    "mise.toml",
    ".mise.toml",
];

/// Files read at most.
const MAX_FILES: usize = 256;
/// Bytes read per file, at most.
const MAX_BYTES: u64 = 1 << 20;
/// Names kept at most.
const MAX_NAMED: usize = 4096;

/// The readable files at `p` (itself, or the files below it, a few levels
/// deep), within `budget`.
fn config_files(p: &Path, budget: &mut usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(p.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        if *budget == 0 {
            break;
        }
        let Ok(m) = std::fs::metadata(&d) else {
            continue;
        };
        if m.is_file() {
            if m.len() <= MAX_BYTES && read_as_configuration(&d) {
                *budget -= 1;
                out.push(d);
            }
        } else if m.is_dir() && depth < 3 {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten().take(256) {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out
}

/// Whether `p` is configuration (or a hook script) rather than prose or a
/// file the user runs by hand.
fn read_as_configuration(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    // skarn's own servers run confined unless nothing they run lies where
    // a sandboxed command may write (ADR 0237): their scripts stay the
    // project's.
    if name == "launch.json" || name == "skarn.toml" || name.ends_with(".sample") {
        return false;
    }
    match Path::new(&name).extension().and_then(|x| x.to_str()) {
        None => true,
        Some(x) => matches!(
            x,
            "json"
                | "jsonc"
                | "json5"
                | "toml"
                | "yml"
                | "yaml"
                | "cfg"
                | "conf"
                | "ini"
                | "sh"
                | "local"
                | "lua"
        ),
    }
}

/// The files of `base` that the words of `cfg` name.
fn named_in(cfg: &Path, base: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(cfg) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let dir = cfg.parent().unwrap_or(base);
    let mut out: Vec<PathBuf> = Vec::new();
    let seps = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '=' | ',' | ';' | '(' | ')' | '[' | ']' | '\\'
            )
    };
    for w in text.split(seps).take(200_000) {
        let Some(word) = path_word(w) else { continue };
        // Only words with a slash name a file of the workspace: a bare
        // `lint.sh` runs from PATH.
        if !word.contains('/') {
            continue;
        }
        let places: Vec<PathBuf> = match word.strip_prefix('/') {
            // An absolute path, or the rest after a quoted variable
            // (`"$CLAUDE_PROJECT_DIR"/scripts/lint.sh`).
            Some(rest) => vec![PathBuf::from(&word), base.join(rest)],
            None => vec![base.join(&word), dir.join(&word)],
        };
        for p in places {
            let p = crate::policy::config::normalize(&p);
            if !p.starts_with(base) || p == base || out.contains(&p) || p.is_dir() {
                continue;
            }
            // A missing file too (a hook naming a missing script is
            // planted by making it), when its directory exists.
            if p.is_file() || p.parent().is_some_and(Path::is_dir) {
                out.push(p);
            }
        }
    }
    out
}

/// `w` as a path relative to (or absolute inside) the workspace, if it
/// reads as one: a leading `$VAR`, `${VAR}` or `!` dropped (the rest keeps
/// its slash); no glob,
/// pattern or URL characters.
fn path_word(w: &str) -> Option<String> {
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
