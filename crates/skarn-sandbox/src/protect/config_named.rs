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

use crate::protect::config_words::{climbing_tail, path_word};
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

/// Words that set the directory the rest of a command runs in (`cd
/// scripts && ./lint.sh`, `npm --prefix frontend run lint`, `make -C
/// sub`): that directory is kept whole (atk24k F7).
const DIR_WORDS: &[&str] = &[
    "cd",
    "pushd",
    "--prefix",
    "-C",
    "--cwd",
    "--dir",
    "--directory",
    "--manifest-path",
];

/// The user's agent configuration files that may name workspace files.
fn home_configs() -> Vec<PathBuf> {
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
fn claude_servers(text: &str) -> String {
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

/// The files of `base` that the words of `cfg` name; with `dirs`, the
/// directory of each too (not `base` itself); with `absolute`, absolute
/// words only.
fn named_in(cfg: &Path, base: &Path, dirs: bool, absolute: bool) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(cfg) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    // `~/.claude.json` is mostly state (projects, prompts): its server
    // tables only, the user's and every project's.
    let text = if cfg.file_name().is_some_and(|n| n == ".claude.json") {
        std::borrow::Cow::Owned(claude_servers(&text))
    } else {
        text
    };
    let dir = cfg.parent().unwrap_or(base);
    words_in(&text, dir, base, dirs, absolute)
}

/// [`named_in`] for the text of a configuration file in `dir`.
fn words_in(text: &str, dir: &Path, base: &Path, dirs: bool, absolute: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    // The directory a DIR word set (the workspace itself too: `uv
    // --directory <ws> run srv.py`, atk22l F5).
    let mut cur: Option<PathBuf> = None;
    let seps = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '=' | ',' | ';' | '(' | ')' | '[' | ']' | '\\'
            )
    };
    // After a `cd` word: the directory the command then runs in.
    let mut after_dir_word = false;
    // Where the words stand after an interpreter (atk24t F4).
    let mut pos = crate::protect::config_words::Position::None;
    for w in text.split(seps).take(2_000_000) {
        let (next, script) = pos.next(w);
        pos = next;
        if DIR_WORDS.contains(&w) {
            after_dir_word = true;
            continue;
        }
        if after_dir_word {
            // (Quotes and a leading `$VAR` split the word: `cd
            // "$CLAUDE_PROJECT_DIR"/scripts`.)
            let var_only = w.strip_prefix('$').is_some_and(|v| {
                let v = v.trim_start_matches('{').trim_end_matches('}');
                !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if w.is_empty() || var_only {
                continue;
            }
            after_dir_word = false;
            if let Some(word) = path_word(w) {
                let places = match word.strip_prefix('/') {
                    Some(rest) => vec![PathBuf::from(&word), base.join(rest)],
                    None if absolute => Vec::new(),
                    None => vec![base.join(&word)],
                };
                for p in places {
                    let p = crate::policy::config::normalize(&p);
                    if p.starts_with(base) && p.is_dir() {
                        cur.get_or_insert_with(|| p.clone());
                        if p != base && !out.contains(&p) {
                            out.push(p);
                        }
                    }
                }
            }
        }
        let Some(word) = path_word(w) else { continue };
        // A word without a slash names a file of the workspace when it
        // is an interpreter's script argument (`node server.js`, `python3
        // check.py`: run from the client's directory, atk22l F5); other
        // bare words run from PATH.
        // An interpreter's script argument names a workspace file or
        // directory whatever its name (`sh .ci.sh`, `python3 tool`:
        // atk24t F4), when it exists.
        let script = script && !absolute;
        if !word.contains('/')
            && !script
            && (absolute || !crate::protect::config_words::script_word(&word))
        {
            continue;
        }
        let mut places: Vec<PathBuf> = match word.strip_prefix('/') {
            // An absolute path, or the rest after a quoted variable
            // (`"$CLAUDE_PROJECT_DIR"/scripts/lint.sh`).
            Some(_) if absolute => vec![PathBuf::from(&word)],
            // Or after a command or variable naming the file's own
            // directory or the git directory (`"$(dirname "$0")"/../../
            // tools/common.sh` in a hook, `${GIT_DIR:-.git}/../tools/x`;
            // attack atk24l F6): resolved against the file's directory,
            // and a path climbing out of it by its tail from the top.
            Some(rest) => {
                let mut v = vec![PathBuf::from(&word), base.join(rest), dir.join(rest)];
                v.extend(climbing_tail(rest).map(|t| base.join(t)));
                v
            }
            None if absolute => Vec::new(),
            None => vec![base.join(&word), dir.join(&word)],
        };
        if !absolute
            && !word.starts_with('/')
            && let Some(c) = &cur
        {
            places.push(c.join(&word));
        }
        // A path climbing up from a place a shell computes (a git hook's
        // `$(dirname "$0")/../../tools/common.sh`, `${GIT_DIR:-.git}/../x`):
        // its tail is taken from the workspace's top, failing closed
        // (atk24l F6).
        if !absolute && let Some(t) = climbing_tail(&word) {
            places.push(base.join(t));
        }
        for p in places {
            let p = crate::policy::config::normalize(&p);
            if !p.starts_with(base) || p == base || out.contains(&p) {
                continue;
            }
            // What a link leads to, every hop (atk24t F7): the program
            // reads it by the named path.
            for h in crate::protect::config_links::hops(&p, base) {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
            // A directory an interpreter runs (`python3 tool`: its
            // `__main__.py`) whole; others are not kept (`src` in a
            // setting would freeze the project).
            if p.is_dir() {
                if script {
                    out.push(p);
                }
                continue;
            }
            // Not by its place alone when missing (a JSON key after an
            // interpreter's name is no script).
            if script
                && !word.contains('/')
                && !p.exists()
                && !crate::protect::config_words::script_word(&word)
            {
                continue;
            }
            // A missing file too (a hook naming a missing script is
            // planted by making it), when its directory exists.
            if p.is_file() || p.parent().is_some_and(Path::is_dir) {
                if dirs
                    && let Some(d) = p.parent()
                    && d != base
                    && d.starts_with(base)
                    && !out.iter().any(|o| o == d)
                {
                    out.push(d.to_path_buf());
                }
                out.push(p);
            }
        }
    }
    out
}
