//! Programs the host's configuration runs by name (attack pass h22b E):
//! `core.pager = delta`, `credential.helper = manager` (git runs
//! `git-credential-manager`), `diff.external`, `gpg.program`,
//! `core.fsmonitor`, a `!`-alias, `$EDITOR`... Git and the shell look each
//! up on `PATH` when it runs. A name not installed anywhere is no program
//! of a later `PATH` directory, so a run that creates it in a `PATH`
//! directory it can write (one missing before the run, or one a relative
//! entry names) plants what the host's next `git log` runs. The names are
//! read on the host before the run, as git reads its configuration (the
//! system, global and XDG files with their includes, the workspace
//! repository's own, `GIT_CONFIG_COUNT`), and the environment variables
//! naming programs, with git's own defaults (`less`, `vi`, `ssh`, the
//! signing programs); [`crate::protect::path_shadow`] treats each as a
//! program of a later directory.

use std::path::{Path, PathBuf};

use crate::protect::git::gitconfig;
use crate::protect::shell_words::{Token, commands};

/// Names kept, at most (a bound on what a hostile configuration makes us
/// carry).
pub const MAX_NAMES: usize = 512;

/// Environment variables whose value is a command a host program runs.
const ENV_COMMANDS: &[&str] = &[
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
];

/// Programs git runs by name when nothing is configured: its default
/// pager and editor, the ssh transport, the signing programs of
/// `gpg.format` (openpgp, x509, ssh) and the default askpass.
const GIT_DEFAULTS: &[&str] = &["less", "vi", "ssh", "gpg", "gpgsm", "ssh-keygen"];

/// Words that run the next word as the command.
const WRAPPERS: &[&str] = &["env", "exec", "command", "nohup", "nice", "time", "builtin"];

/// Values of a key that are no command (`core.fsmonitor = true` runs
/// git's own daemon; `pager.log = false`).
fn is_boolean(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    )
}

/// A word that is a bare program name (looked up on `PATH`).
fn bare(w: &str) -> Option<String> {
    let ok = !w.is_empty()
        && w.len() <= 255
        && !w.contains('/')
        && !w.starts_with(['-', '$', '~', '.'])
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_+.@:".contains(c));
    ok.then(|| w.to_string())
}

/// The program names a shell command line runs through `PATH` (the first
/// word of each command, past assignments and wrappers; inside `$(...)`
/// too).
pub fn shell_names(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    shell_names_into(line, 0, &mut out);
    out
}

fn shell_names_into(line: &str, depth: u32, out: &mut Vec<String>) {
    for cmd in commands(line) {
        let mut first = true;
        for t in &cmd {
            let Token::Word(w) = t else { continue };
            if let Some(inner) = w.strip_prefix("$(").and_then(|r| r.strip_suffix(')'))
                && depth < 4
            {
                shell_names_into(inner, depth + 1, out);
            }
            if !first {
                continue;
            }
            let assignment = w.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if assignment || WRAPPERS.contains(&w.as_str()) {
                continue;
            }
            first = false;
            if let Some(n) = bare(w) {
                out.push(n);
            }
        }
    }
}

/// The names one git configuration item makes git run through `PATH`.
pub fn git_item_names(it: &gitconfig::Item) -> Vec<String> {
    let Some(v) = it.value.as_deref() else {
        return Vec::new();
    };
    let (sec, name) = (it.section.as_str(), it.name.as_str());
    if matches!(
        (sec, name),
        ("core", "hookspath") | ("init", "templatedir") | ("difftool" | "mergetool", "path")
    ) && !v.trim_start().starts_with('!')
    {
        // Directories or full paths, not names looked up on PATH (a
        // `path` of a tool is run as given).
        return Vec::new();
    }
    if (matches!((sec, name), ("core", "fsmonitor")) || sec == "pager") && is_boolean(v) {
        return Vec::new();
    }
    if let Some(shell) = v.trim_start().strip_prefix('!') {
        return shell_names(shell);
    }
    // `credential.helper = manager`: git runs `git credential-manager`,
    // the program `git-credential-manager` on its exec path or PATH.
    if sec == "credential" && name == "helper" {
        return commands(v)
            .first()
            .and_then(|c| match c.first() {
                Some(Token::Word(w)) => bare(w).map(|n| vec![format!("git-credential-{n}")]),
                _ => None,
            })
            .unwrap_or_default();
    }
    // `alias.x = foo ...`: `git foo`, a `git-foo` program when foo is no
    // built-in command.
    if sec == "alias" {
        return commands(v)
            .first()
            .and_then(|c| match c.first() {
                Some(Token::Word(w)) => bare(w).map(|n| vec![format!("git-{n}")]),
                _ => None,
            })
            .unwrap_or_default();
    }
    shell_names(v)
}

/// The git configuration files git reads in `workspace` (with the home
/// `home`): system, XDG and global files with their includes, and the
/// repository's own `config` (with its includes).
fn git_files(home: Option<&Path>, workspace: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(h) = home {
        files.extend(crate::protect::host_programs::global_git_files(h));
        files.extend(
            crate::protect::host_programs::global_git_includes(h)
                .into_iter()
                .map(|(p, _)| p),
        );
    }
    if let Some(cfg) = repo_config(workspace) {
        files.push(cfg.clone());
        if let Some(h) = home {
            let mut inc = Vec::new();
            crate::protect::host_programs::includes_of(&cfg, h, &mut inc);
            files.extend(inc.into_iter().map(|(p, _)| p));
        }
    }
    files
}

/// The workspace repository's `config` (`.git` a directory, or a file
/// naming one with `gitdir:`).
fn repo_config(ws: &Path) -> Option<PathBuf> {
    let dot = ws.join(".git");
    let m = std::fs::symlink_metadata(&dot).ok()?;
    if m.is_dir() {
        return Some(dot.join("config"));
    }
    if !m.is_file() || m.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let dir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let dir = ws.join(dir);
    // A linked worktree's own directory names the shared one.
    let common = std::fs::read_to_string(dir.join("commondir"))
        .ok()
        .map(|c| dir.join(c.trim()));
    Some(common.unwrap_or(dir).join("config"))
}

/// Every program name the host's configuration runs through `PATH`
/// (sorted, deduplicated, at most [`MAX_NAMES`]).
pub fn names(home: Option<&Path>, workspace: &Path) -> Vec<String> {
    let mut out: Vec<String> = GIT_DEFAULTS.iter().map(|s| s.to_string()).collect();
    for f in git_files(home, workspace) {
        let Ok(Some(text)) = crate::protect::host_programs::read_git_file(&f) else {
            continue;
        };
        for it in gitconfig::parse(&text).items {
            if crate::protect::host_programs::names_program(&it) {
                out.extend(git_item_names(&it));
            }
        }
    }
    for (it, _) in crate::protect::host_programs::env_config_items() {
        out.extend(git_item_names(&it));
    }
    for var in ENV_COMMANDS {
        if let Ok(v) = std::env::var(var) {
            out.extend(shell_names(&v));
        }
    }
    out.sort();
    out.dedup();
    out.truncate(MAX_NAMES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(section: &str, sub: Option<&str>, name: &str, v: &str) -> gitconfig::Item {
        gitconfig::Item {
            section: section.into(),
            sub: sub.map(Into::into),
            name: name.into(),
            value: Some(v.into()),
        }
    }

    #[test]
    fn names_git_runs_through_path() {
        type Case<'a> = (&'a str, Option<&'a str>, &'a str, &'a str, &'a [&'a str]);
        let cases: &[Case] = &[
            ("core", None, "pager", "delta --dark", &["delta"]),
            ("core", None, "pager", "LESS=R less | cat", &["cat", "less"]),
            ("core", None, "fsmonitor", "true", &[]),
            (
                "core",
                None,
                "fsmonitor",
                "watchman-hook",
                &["watchman-hook"],
            ),
            (
                "credential",
                None,
                "helper",
                "manager",
                &["git-credential-manager"],
            ),
            (
                "credential",
                None,
                "helper",
                "!pass-helper get",
                &["pass-helper"],
            ),
            ("credential", None, "helper", "/usr/lib/x", &[]),
            ("alias", None, "co", "checkout", &["git-checkout"]),
            (
                "alias",
                None,
                "x",
                "!env A=1 tool $(inner arg)",
                &["inner", "tool"],
            ),
            ("diff", None, "external", "difft", &["difft"]),
            ("gpg", None, "program", "gpg2", &["gpg2"]),
            ("pager", None, "log", "false", &[]),
            ("core", None, "hookspath", "hooks", &[]),
        ];
        for (s, sub, n, v, want) in cases {
            let mut got = git_item_names(&item(s, *sub, n, v));
            got.sort();
            assert_eq!(got, *want, "{s}.{n} = {v}");
        }
    }

    #[test]
    fn the_workspace_repository_config_is_read() {
        let t = skarn_test_support::TempDir::new("configured-programs");
        let ws = t.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            ws.join(".git/config"),
            "[core]\n\tpager = zz-pager\n[gpg]\n\tprogram = zz-gpg\n",
        )
        .unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let n = names(Some(&home), &ws);
        assert!(n.contains(&"zz-pager".to_string()), "{n:?}");
        assert!(n.contains(&"zz-gpg".to_string()), "{n:?}");
        assert!(n.contains(&"less".to_string()), "{n:?}");
    }
}
