//! The agent's own file-writing tools (Claude Code `Write`, `Edit`,
//! `MultiEdit`, `NotebookEdit`; Gemini CLI `write_file`, `replace`): they
//! write outside any sandbox, so the hook refuses the writes that would
//! widen the agent's boundary or plant code the host runs later:
//!
//! - skarn's configuration: any `skarn.toml`, `~/.config/skarn`, and
//!   skarn's state (`~/.local/state/skarn`: the trust record);
//! - the agents' own settings and hooks (`.claude`, `.mcp.json`,
//!   `.gemini`, `.codex`, `.cursor`, `.vscode`, `.github/hooks`,
//!   `.windsurf`, and their user-level files);
//! - the persistence paths `skarn run` protects in the workspace
//!   (`skarn_sandbox::persistence`), and their like in the home (shell
//!   start-up files, systemd user units, autostart entries, `~/.local/bin`,
//!   ...);
//! - the skarn program's own directory (a script written over it would
//!   switch the hook off) and every directory on `PATH`.
//!
//! Paths are judged as written and as they resolve (links followed), so a
//! link named `notes.txt` that leads to `.claude/settings.json` is refused.

use std::path::{Path, PathBuf};

use skarn_sandbox::persistence::{ENTRIES, GIT_DIR_ENTRIES};

/// Agent settings and hooks, relative to the workspace.
const PROJECT_AGENT: &[&str] = &[".github/hooks", ".windsurf", ".gemini", ".mcp.json"];

/// Agent settings and hooks, relative to the home directory.
const HOME_AGENT: &[&str] = &[
    ".claude",
    ".claude.json",
    ".codex",
    ".cursor",
    ".gemini",
    ".codeium",
    ".copilot",
    ".windsurf",
    ".config/Code/User",
    ".mcp.json",
];

/// Files and directories in the home whose contents a host program runs
/// (or trusts) later on its own.
const HOME_PERSIST: &[&str] = &[
    ".local/bin",
    ".cargo/bin",
    "bin",
    ".config/skarn",
    ".local/state/skarn",
    ".config/systemd",
    ".config/autostart",
    ".config/environment.d",
    ".config/fish",
    ".config/git",
    ".gitconfig",
    ".local/share/applications",
    ".ipython",
    ".bashrc.d",
    ".ssh",
    ".pam_environment",
    ".xprofile",
    ".xsessionrc",
    ".npmrc",
    ".pypirc",
    ".cargo/config.toml",
    ".cargo/config",
];

/// `p` made absolute against `cwd`, `.` and `..` removed.
fn absolute(p: &str, cwd: &Path) -> PathBuf {
    skarn_sandbox::config::normalize(&cwd.join(p))
}

/// Where `p` really leads: the file's links followed, else its directory's.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(r) = std::fs::canonicalize(p) {
        return Some(r);
    }
    let (dir, name) = (p.parent()?, p.file_name()?);
    // A dangling link: judge where it points.
    if let Ok(target) = std::fs::read_link(p) {
        return resolved(&dir.join(target));
    }
    let mut d = dir.to_path_buf();
    let mut tail = vec![name.to_owned()];
    // The nearest existing ancestor, resolved, then the rest.
    loop {
        if let Ok(r) = std::fs::canonicalize(&d) {
            let mut out = r;
            for t in tail.iter().rev() {
                out.push(t);
            }
            return Some(out);
        }
        tail.push(d.file_name()?.to_owned());
        d = d.parent()?.to_path_buf();
    }
}

fn under(p: &Path, base: &Path, rel: &str) -> bool {
    p.strip_prefix(base).is_ok_and(|r| r.starts_with(rel))
}

/// Why the agent may not write `path`, or `None` when the hook has
/// nothing against it (the agent's own permissions still apply).
pub fn refusal(path: &str, cwd: &Path, ws: &Path, home: Option<&Path>) -> Option<String> {
    let p = absolute(path, cwd);
    let mut candidates = vec![p.clone()];
    candidates.extend(resolved(&p));
    // `~/x`: judged as the home's too, whether or not the tool expands it.
    if let (Some(rest), Some(h)) = (path.strip_prefix("~/"), home) {
        let t = skarn_sandbox::config::normalize(&h.join(rest));
        candidates.extend(resolved(&t));
        candidates.push(t);
    }
    let mut bases = vec![ws.to_path_buf()];
    bases.extend(std::fs::canonicalize(ws));
    // The repository the file is in, whatever the hook took for the
    // workspace (an agent started in a subdirectory).
    for c in &candidates {
        bases.extend(
            c.ancestors()
                .skip(1)
                .find(|a| a.join(".git").exists())
                .map(Path::to_path_buf),
        );
    }
    let homes: Vec<PathBuf> = home
        .into_iter()
        .flat_map(|h| {
            [
                h.to_path_buf(),
                std::fs::canonicalize(h).unwrap_or_default(),
            ]
        })
        .filter(|h| h.is_absolute())
        .collect();
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| std::fs::canonicalize(e).ok())
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.is_absolute())
        .flat_map(|d| [std::fs::canonicalize(&d).unwrap_or_default(), d])
        .filter(|d| d.is_absolute())
        .collect();
    for c in &candidates {
        // A version-control directory's files anywhere (a nested
        // repository's `.git/config` or hooks, a `.git` file naming a git
        // directory): host git, hg and jj run what they name.
        if let Some(vcs) = c.components().find_map(|x| {
            let n = x.as_os_str();
            [".git", ".hg", ".jj"].into_iter().find(|v| n == *v)
        }) {
            return Some(format!(
                "{} is inside a {vcs} directory (or is one): the host's version control runs                  the programs its files name",
                c.display()
            ));
        }
        let dir = c.parent().unwrap_or(c);
        if exe_dir.as_deref() == Some(dir) {
            return Some(format!(
                "{} is next to the skarn program the hook runs: replacing it would switch \
                 the hook off",
                c.display()
            ));
        }
        if path_dirs.iter().any(|d| d == dir) {
            return Some(format!(
                "{} is in a directory on PATH: the host runs programs from it",
                c.display()
            ));
        }
        if c.file_name().is_some_and(|n| n == "skarn.toml") {
            return Some(format!(
                "{} is skarn's sandbox configuration: only the user changes it",
                c.display()
            ));
        }
        for h in &homes {
            for rel in HOME_AGENT {
                if under(c, h, rel) {
                    return Some(format!(
                        "{} is this agent's own settings or hooks (~/{rel}): only the user \
                         changes them",
                        c.display()
                    ));
                }
            }
            for rel in HOME_PERSIST.iter().chain(ENTRIES.iter().map(|e| &e.path)) {
                if under(c, h, rel) {
                    return Some(format!(
                        "{} (~/{rel}) is run or trusted later by a host program on its own, \
                         outside the sandbox",
                        c.display()
                    ));
                }
            }
        }
        for b in &bases {
            for rel in PROJECT_AGENT {
                if under(c, b, rel) {
                    return Some(format!(
                        "{} is this agent's own settings or hooks: only the user changes them",
                        c.display()
                    ));
                }
            }
            for e in ENTRIES.iter().chain(GIT_DIR_ENTRIES) {
                if under(c, b, e.path) {
                    return Some(format!(
                        "{} is protected in the workspace ({}: {}); sandboxed commands cannot \
                         write it either",
                        c.display(),
                        e.path,
                        e.reason
                    ));
                }
            }
        }
    }
    None
}

/// The path a file tool's input names (`file_path`, `notebook_path`,
/// `absolute_path` or `path`).
pub fn target(tool_input: &serde_json::Value) -> Option<&str> {
    ["file_path", "notebook_path", "absolute_path", "path"]
        .iter()
        .find_map(|k| tool_input.get(*k).and_then(serde_json::Value::as_str))
}

/// What the agent is told.
pub fn reason(tool: &str, why: &str) -> String {
    format!(
        "skarn: {tool} refused: {why}. Do not try another way around this; tell the user \
         what change you wanted so they can make it themselves."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_config_and_persistence_are_refused() {
        let t = skarn_test_support::TempDir::new("hook_files");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let no = |p: &str| refusal(p, &ws, &ws, Some(&home)).is_some();
        assert!(no("skarn.toml"));
        assert!(no("sub/dir/skarn.toml"));
        assert!(no(".claude/settings.json"));
        assert!(no(".claude/settings.local.json"));
        assert!(no(".mcp.json"));
        assert!(no(".git/hooks/pre-commit"));
        assert!(no("sub/.git/config"), "a nested repository's configuration");
        assert!(no("sub/.git"), "a .git file naming a git directory");
        assert!(no("vendor/x/.hg/hgrc"));
        assert!(no("~/.bashrc"), "judged as the home's file too");
        assert!(no(".envrc"));
        assert!(no(&home
            .join(".claude/settings.json")
            .display()
            .to_string()));
        assert!(no(&home.join(".bashrc").display().to_string()));
        assert!(no(&home
            .join(".config/systemd/user/x.service")
            .display()
            .to_string()));
        assert!(no(&home
            .join(".local/state/skarn/trusted")
            .display()
            .to_string()));
        assert!(no("src/../.claude/hooks/x.sh"));
        assert!(!no("src/main.rs"));
        assert!(!no("README.md"));
        assert!(!no("docs/claude.md"));
        // The skarn program (and its directory), PATH directories.
        let exe = std::env::current_exe().unwrap();
        assert!(no(&exe.display().to_string()));
        assert!(no(&home.join(".local/bin/skarn").display().to_string()));
        // The workspace taken from a subdirectory: the repository's root
        // still counts.
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let sub = t.dir("ws/sub");
        let git_hook = ws.join(".git/hooks/post-checkout").display().to_string();
        assert!(refusal(&git_hook, &sub, &sub, Some(&home)).is_some());
        #[cfg(unix)]
        {
            std::fs::create_dir_all(ws.join(".claude")).unwrap();
            std::os::unix::fs::symlink(ws.join(".claude/settings.json"), ws.join("notes.txt"))
                .unwrap();
            assert!(no("notes.txt"), "a dangling link into .claude");
            std::os::unix::fs::symlink(ws.join(".claude"), ws.join("cfg")).unwrap();
            assert!(no("cfg/settings.json"), "a linked directory");
        }
    }
}
