//! Claude Code's own worktrees (`EnterWorktree`, `claude --worktree`):
//! linked git worktrees the client makes at `<ws>/.claude/worktrees/NAME`
//! and moves a session into. They lie inside the protected `.claude`, but
//! their files are the agent's work (atk24o, usability: a command run with
//! the project as its workspace could not write them). In the
//! copy-on-write layer (the default), a `.claude` holding such a worktree
//! is not bound read-only: its changes are vetted when the layer is
//! applied. A change inside a worktree is judged as in a workspace of its
//! own (its `.git`, its persistence paths: `.claude`, `.mcp.json`,
//! `.husky`, ... stay protected); any other change under `.claude`
//! (settings, hooks, skills, commands, agents, a new worktree) is refused.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Change, Rules};
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};

/// Whether `dir` (a host directory) is a linked worktree of the
/// repository of `ws`: its `.git` is a regular file naming a directory of
/// `<ws>/.git/worktrees`.
fn is_worktree(ws: &Path, dir: &Path) -> bool {
    let git = dir.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.file_type().is_file()) {
        return false;
    }
    let Ok(text) = std::fs::read(&git) else {
        return false;
    };
    let Some(target) = crate::protect::git::git_vet::gitfile_target(&text) else {
        return false;
    };
    let target = dir.join(target);
    let (Ok(t), Ok(w)) = (
        std::fs::canonicalize(&target),
        std::fs::canonicalize(ws.join(".git/worktrees")),
    ) else {
        return false;
    };
    t.parent() == Some(w.as_path()) && t.is_dir()
}

/// Whether `p` is the workspace's `.claude` and it holds at least one of
/// Claude Code's worktrees: then it is vetted in the layer, not bound
/// read-only.
pub(crate) fn opened(ws: &Path, p: &Path) -> bool {
    if p != ws.join(".claude") {
        return false;
    }
    let Ok(rd) = std::fs::read_dir(p.join("worktrees")) else {
        return false;
    };
    rd.flatten()
        .take(256)
        .any(|e| e.file_type().is_ok_and(|t| t.is_dir()) && is_worktree(ws, &e.path()))
}

/// The decision on a change whose names are `n` (`n[0]` is `.claude`) when
/// the workspace's `.claude` holds worktrees; `None` when it holds none
/// (the change is judged as any other, and refused: `.claude` is read
/// at any depth).
pub(super) fn check(
    rules: &Rules,
    n: &[&OsStr],
    what: Change,
    upper: &Path,
    host: bool,
    git: Option<usize>,
) -> Option<Result<(), String>> {
    let claude = rules.ws.join(".claude");
    if !opened(&rules.ws, &claude) {
        return None;
    }
    let refused = || {
        Err(
            "Claude Code's .claude (settings, hooks, skills, commands, agents): only the \
             files of its worktrees, .claude/worktrees/NAME, may change"
                .to_string(),
        )
    };
    // `.claude` and `.claude/worktrees` themselves: copied up when a
    // worktree's file changes (times only).
    if n.len() == 1 || (n.len() == 2 && n[1] == "worktrees") {
        return Some(if what == Change::Dir && host {
            Ok(())
        } else {
            refused()
        });
    }
    let wt: Option<PathBuf> = (n.len() >= 3 && n[1] == "worktrees")
        .then(|| claude.join("worktrees").join(n[2]))
        .filter(|w| is_worktree(&rules.ws, w));
    let Some(wt) = wt else {
        return Some(refused());
    };
    if n.len() == 3 {
        // The worktree's own directory: its times and mode only.
        return Some(if what == Change::Dir && host {
            Ok(())
        } else {
            refused()
        });
    }
    let inner: PathBuf = n[3..].iter().collect();
    Some(inside(rules, &wt, &inner, what, upper, host, git))
}

/// A change at `inner` inside the worktree `wt`: its persistence paths
/// as the workspace's are, the rest as in a workspace of its own.
fn inside(
    rules: &Rules,
    wt: &Path,
    inner: &Path,
    what: Change,
    upper: &Path,
    host: bool,
    git: Option<usize>,
) -> Result<(), String> {
    if inner.starts_with(".git") {
        return Err(
            "the worktree's .git (where host git goes for its hooks and \
                    configuration)"
                .into(),
        );
    }
    for en in GIT_DIR_ENTRIES.iter().chain(ENTRIES) {
        let p = Path::new(en.path);
        if !inner.starts_with(p) {
            continue;
        }
        let reserve = match en.reserve {
            Reserve::Always => true,
            Reserve::IfAny(fam) => fam
                .iter()
                .any(|f| std::fs::symlink_metadata(wt.join(f)).is_ok()),
            Reserve::Never | Reserve::IfHome => false,
        };
        if what == Change::Delete && inner == p {
            return Err(format!("{}: a protected path may not be removed", en.path));
        }
        if what != Change::Delete && (host || reserve || inner != p) {
            return Err(format!("{}: {}", en.path, en.reason));
        }
    }
    let mut r = rules.clone();
    r.ws = wt.to_path_buf();
    r.protected.retain(|(p, _)| !wt.starts_with(p));
    super::check(
        &r,
        inner,
        what,
        upper,
        host,
        git.and_then(|i| i.checked_sub(3)),
    )
}
