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

mod home;
mod words;

use std::path::{Path, PathBuf};

use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES};
use home::home_configs;
use words::{named_in, words_in};

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
        // `HEAD` names a ref (`ref: refs/heads/main`), never a program:
        // keeping the ref read-only made every `git commit` in a run with
        // `--write <ws>/.git` fail (h22l).
        .filter(|rel| *rel != "HEAD")
    {
        for cfg in config_files(&base.join(rel), &mut budget) {
            if seen.contains(&cfg) {
                continue;
            }
            seen.push(cfg.clone());
            let agent = AGENT_CONFIG.iter().any(|a| cfg.starts_with(base.join(a)));
            for f in named_in(&cfg, base, agent, false) {
                if files.len() < MAX_NAMED && !files.iter().any(|(g, _)| *g == f) {
                    files.push((f, cfg.clone()));
                }
            }
        }
    }
    // The commands of skills, subagents, commands and VS Code agents
    // (atk24r F7); the folders VS Code's settings load agents from (atk24s F5).
    #[cfg(unix)]
    {
        let mut extra = crate::protect::agent_md::location_dirs(base);
        for (md, text) in crate::protect::agent_md::commands(base) {
            let dir = md.parent().unwrap_or(base).to_path_buf();
            extra.extend(
                words_in(&text, &dir, base, true, false)
                    .into_iter()
                    .map(|f| (f, md.clone())),
            );
        }
        for (f, cfg) in extra {
            if files.len() < MAX_NAMED && !files.iter().any(|(g, _)| *g == f) {
                files.push((f, cfg));
            }
        }
    }
    // What the user's trusted lines run besides the files they name: a
    // makefile, `package.json`, the scripts their text names (atk24t F3,
    // ADR 0328).
    let (inputs, texts) = crate::protect::trusted_lines::inputs(base);
    let via = PathBuf::from("~/.config/skarn/config.toml [hook] trusted_hooks");
    let from_texts = texts
        .iter()
        .flat_map(|(t, d)| words_in(t, d, base, false, false));
    for f in inputs.into_iter().chain(from_texts) {
        // What a link leads to too (the program reads it by the path).
        let mut all = crate::protect::config_links::hops(&f, base);
        all.push(f);
        for f in all {
            if f.starts_with(base)
                && f != base
                && files.len() < MAX_NAMED
                && !files.iter().any(|(g, _)| *g == f)
            {
                files.push((f, via.clone()));
            }
        }
    }
    // The user's own agent configuration naming this workspace's files
    // (atk24k F3): `claude mcp add`'s servers in `~/.claude.json`, VS
    // Code's and Windsurf's user MCP files, Cursor's and Windsurf's user
    // hooks, Claude Code's user agents' and skills' hooks. Absolute words
    // only (these files name every project ever opened, in prose too).
    for cfg in home_configs() {
        let mut found = named_in(&cfg, base, true, true);
        // `claude mcp add`'s local-scope servers: relative words from
        // their project's directory (atk22l F5).
        if cfg.file_name().is_some_and(|n| n == ".claude.json") {
            let text =
                String::from_utf8_lossy(&std::fs::read(&cfg).unwrap_or_default()).into_owned();
            for (p, servers) in crate::protect::config_words::claude_projects(&text, base) {
                found.extend(words_in(&servers, &p, base, true, false));
            }
        }
        for f in found {
            if files.len() < MAX_NAMED && !files.iter().any(|(g, _)| *g == f) {
                files.push((f, cfg.clone()));
            }
        }
    }
    files
}

/// Agent configuration whose words are commands the client runs: the
/// directory of a file it names is kept too (python puts a script's
/// directory first on its path, a script sources its neighbours).
const AGENT_CONFIG: &[&str] = &[
    ".claude",
    ".gemini",
    ".codex",
    ".cursor",
    ".github/hooks",
    ".github/agents",
    ".mcp.json",
    ".vscode/mcp.json",
    ".windsurf",
];

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
    ".github/agents",
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
