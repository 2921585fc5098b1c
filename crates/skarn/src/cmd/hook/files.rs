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
//!   (`skarn_sandbox::protect::persistence`), and their like in the home (shell
//!   start-up files, systemd user units, autostart entries, `~/.local/bin`,
//!   ...);
//! - the skarn program's own directory (a script written over it would
//!   switch the hook off) and every directory on `PATH`.
//!
//! Paths are judged as written and as they resolve (links followed, at
//! most 40 hops), so a link named `notes.txt` that leads to
//! `.claude/settings.json` is refused; names compare as on a
//! case-insensitive volume. The lists are `skarn run`'s own (ADR 0095): the
//! persistence entries (those read in any directory matched at any depth),
//! the home rule of `skarn_sandbox::policy::workspace_kind::home_place`, and git's
//! protected paths from `skarn_sandbox::protect::git::git_vet` (`core.hooksPath`,
//! includes, a linked git directory).

use std::path::{Path, PathBuf};

use skarn_sandbox::policy::workspace_kind::{ALLOW_HOME_FLAG, home_place, non_project};
use skarn_sandbox::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, any_depth};

use super::file_paths::{candidates, fold};

/// Agent settings and hooks, relative to the workspace, besides the
/// agents' entries of `skarn_sandbox::protect::persistence`.
const PROJECT_AGENT: &[&str] = &[".github/hooks", ".github/agents"];

/// Agent settings and hooks in the home (named as such when refused; the
/// whole home rule is [`home_place`]).
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

/// `p` lies in `base/rel`, compared by name as [`fold`] does.
fn under(p: &Path, base: &Path, rel: &str) -> bool {
    fold(p)
        .strip_prefix(fold(base))
        .is_ok_and(|r| r.starts_with(fold(Path::new(rel))))
}

/// `p` has `rel` as a sub-path anywhere (`a/b/.claude/x` has `.claude`).
fn has_subpath(p: &Path, rel: &str) -> bool {
    let p: Vec<_> = fold(p)
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let r: Vec<_> = fold(Path::new(rel))
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    !r.is_empty() && p.windows(r.len()).any(|w| w == r.as_slice())
}

/// The real (canonical) and given names of `dirs`, absolute ones only.
fn both_names(dirs: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    dirs.into_iter()
        .flat_map(|d| [std::fs::canonicalize(&d).unwrap_or_default(), d])
        .filter(|d| d.is_absolute())
        .collect()
}

/// Why the agent may not write `path`, or `None` when the hook has
/// nothing against it (the agent's own permissions still apply).
pub fn refusal(path: &str, cwd: &Path, ws: &Path, home: Option<&Path>) -> Option<String> {
    refusal_of(path, cwd, ws, home, None)
}

/// [`refusal`] for the call `tool` with `input` (`call`): the file is
/// judged as the call will leave it ([`super::file_content`]).
pub fn refusal_of(
    path: &str,
    cwd: &Path,
    ws: &Path,
    home: Option<&Path>,
    call: Option<(&str, &serde_json::Value)>,
) -> Option<String> {
    // A client may trim or clean the path before it writes (Claude Code
    // trims blanks): a path that is not exactly what would be written is
    // refused rather than judged as another file (atk24h F8).
    if path.trim() != path || path.chars().any(char::is_control) {
        return Some(format!(
            "the path {path:?} has leading or trailing blanks or control characters: \
             write to the plain path instead"
        ));
    }
    let candidates = match candidates(path, cwd, home) {
        Ok(c) => c,
        Err(why) => return Some(why),
    };
    let mut bases = both_names([ws.to_path_buf()]);
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
    // A name in the workspace that leads out of it through a link
    // (attack 24 F2), also a link before a `..` (followed as written:
    // `trail` reads `..` as the kernel does, atk24g F6).
    for c in candidates
        .iter()
        .chain(&super::file_paths::raw_forms(path, cwd, home))
    {
        if let Some(why) = super::file_runs::link_out(c, &bases) {
            return Some(why);
        }
    }
    let homes = both_names(home.map(Path::to_path_buf));
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| std::fs::canonicalize(e).ok())
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let path_dirs = both_names(
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    let git = super::file_git::Protected::new(ws, &candidates, home);
    let host = super::file_host::HostPlaces::new(ws, cwd, home);
    let named = super::file_named::Named::new(&bases);
    for c in &candidates {
        // In one of Claude Code's worktrees (atk24o F7): judged as a
        // project of its own, below the `.claude` it lies in.
        let wt = super::claude_worktree::root(c);
        let bases: Vec<PathBuf> = match &wt {
            Some(a) => both_names([a.clone()]),
            None => bases.clone(),
        };
        let inner = wt
            .as_deref()
            .and_then(|a| c.strip_prefix(a).ok())
            .unwrap_or(c);
        // A version-control directory's files anywhere (a nested
        // repository's `.git/config` or hooks, a `.git` file naming a git
        // directory): host git, hg and jj run what they name.
        if let Some(vcs) = fold(c).components().find_map(|x| {
            let n = x.as_os_str();
            [".git", ".hg", ".sl", ".jj"].into_iter().find(|v| n == *v)
        }) {
            return Some(format!(
                "{} is inside a {vcs} directory (or is one): the host's version control runs \
                 the programs its files name",
                c.display()
            ));
        }
        if let Some(why) = host.refusal(c) {
            return Some(why);
        }
        if let Some(why) = git.refusal(c) {
            return Some(why);
        }
        if let Some(why) = super::file_run_sets::refusal(c, &bases, home) {
            return Some(why);
        }
        // A Python environment's start-up files, the environment made
        // yet or not (`skarn run` keeps them read-only and sets new ones
        // aside; host python runs them at every start; atk24i F3).
        #[cfg(unix)]
        if skarn_sandbox::protect::venv_guard::start_up_path(&fold(c)) {
            return Some(format!(
                "{} is a Python environment's start-up file (pyvenv.cfg, a .pth or a \
                 customize module in site-packages: host python runs it at every start); \
                 sandboxed commands cannot plant it either",
                c.display()
            ));
        }
        // Compiled Python (`skarn run` removes or sets aside those a run
        // leaves: python loads them instead of the source).
        #[cfg(unix)]
        if skarn_sandbox::protect::pyc_guard::compiled_path(&fold(c)) {
            return Some(format!(
                "{} is compiled Python (a __pycache__ entry or a .pyc: host python loads it in \
                 place of the source); sandboxed commands cannot leave one either",
                c.display()
            ));
        }
        if let Some(why) = envrc_refusal(c) {
            return Some(why);
        }
        let dir = fold(c.parent().unwrap_or(c));
        if exe_dir.as_deref().map(fold) == Some(dir.clone()) {
            return Some(format!(
                "{} is next to the skarn program the hook runs: replacing it would switch \
                 the hook off",
                c.display()
            ));
        }
        if path_dirs.iter().any(|d| fold(d) == dir) {
            return Some(format!(
                "{} is in a directory on PATH: the host runs programs from it",
                c.display()
            ));
        }
        if let Some(why) = home_refusal(c, &homes, home) {
            return Some(why);
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
        // Names read in whichever directory a program starts in (an agent
        // started in `packages/api` reads its `.claude/settings.json`).
        if let Some(e) = ENTRIES
            .iter()
            .find(|e| any_depth(e) && has_subpath(inner, e.path))
        {
            return Some(format!(
                "{} is protected wherever it lies ({}: {}); sandboxed commands cannot write \
                 it either",
                c.display(),
                e.path,
                e.reason
            ));
        }
        // VS Code's workspace files, wherever they lie (the user opens
        // them by name): `skarn run` keeps the top's read-only and sets
        // new ones aside.
        if c.file_name().is_some_and(|n| {
            fold(Path::new(n))
                .to_string_lossy()
                .ends_with(skarn_sandbox::protect::persistence::WORKSPACE_FILE_SUFFIX)
        }) {
            return Some(format!(
                "{} is an editor workspace file (tasks, settings and extension recommendations applied when it is opened); sandboxed commands cannot write it either",
                c.display()
            ));
        }
        // What the protected configuration names (after the checks
        // with their own reasons: `.envrc`'s, git's).
        if let Some(why) = named.refusal(c) {
            return Some(why);
        }
        // What `skarn run` refuses or sets aside, asked of its own
        // judgement; a git directory's shape; a file's other names.
        let content = call.and_then(|(t, i)| super::file_content::proposed(t, i, path, c));
        if let Some(why) = super::file_layer::refusal(c, &bases, home, content.as_ref()) {
            return Some(why);
        }
    }
    None
}

/// Why `c` may not be written as a file an `.envrc` above it makes direnv
/// read unchecked ([`skarn_sandbox::protect::envrc`], the list `skarn run` keeps
/// read-only).
fn envrc_refusal(c: &Path) -> Option<String> {
    for dir in c.ancestors().skip(1).take(64) {
        let envrc = dir.join(".envrc");
        if std::fs::symlink_metadata(&envrc).is_err() {
            continue;
        }
        let named = skarn_sandbox::protect::envrc::sourced(&envrc);
        if named.iter().any(|p| p == dir) {
            // Past the reader's cap: the whole tree (as `skarn run` does).
            return Some(format!(
                "{} names too many files for skarn to list: everything below {} is refused; \
                 sandboxed commands cannot write there either",
                envrc.display(),
                dir.display()
            ));
        }
        if named.iter().any(|p| fold(c).starts_with(fold(p))) {
            return Some(format!(
                "{} is read by {} or lies in a place it exports to host programs (direnv \
                 runs or loads it without asking, unlike the .envrc itself); sandboxed \
                 commands cannot write it either",
                c.display(),
                envrc.display()
            ));
        }
    }
    None
}

/// Why `c` may not be written as a place of the home (the rule `skarn run`
/// applies to workspaces: [`home_place`], the XDG directories, where the
/// home's dotfiles link).
fn home_refusal(c: &Path, homes: &[PathBuf], home: Option<&Path>) -> Option<String> {
    for h in homes {
        let Ok(rel) = fold(c).strip_prefix(fold(h)).map(Path::to_path_buf) else {
            continue;
        };
        if let Some(a) = HOME_AGENT.iter().find(|a| under(c, h, a)) {
            return Some(format!(
                "{} is this agent's own settings or hooks (~/{a}): only the user changes them",
                c.display()
            ));
        }
        if let Some(place) = home_place(&rel) {
            return Some(format!(
                "{} lies in ~/{place}, which host programs read, load or run on their own \
                 (sandboxed commands cannot write there either)",
                c.display()
            ));
        }
    }
    non_project(c, home)
        .filter(|n| n.flag == ALLOW_HOME_FLAG)
        .map(|n| format!("{n}; sandboxed commands cannot write there either"))
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
        // Blanks and control characters a client may trim (atk24h F8).
        assert!(no(" /home/u/.bashrc"));
        assert!(no(".mcp.json\r"));
        assert!(no("lefthook.yml\t"));
        assert!(!no("src/main.rs"));
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
        std::fs::write(
            ws.join(".envrc"),
            "source_env_if_exists .envrc.local\ndotenv\n",
        )
        .unwrap();
        assert!(no(".envrc.local"), "sourced by the .envrc");
        assert!(no(".env"), "read by dotenv");
        assert!(!no(".envrc.other"));
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
