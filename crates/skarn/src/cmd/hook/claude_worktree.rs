//! Claude Code's own worktrees (`EnterWorktree`, `claude --worktree`):
//! linked git worktrees it makes at `<project>/.claude/worktrees/NAME`
//! and moves the session into. They lie inside the protected `.claude`,
//! but their files are the agent's work (attack atk24o F7): a worktree is
//! judged as a project of its own (its own `.claude`, `.git`, `.mcp.json`
//! stay protected), and a call whose working directory lies in one runs
//! with that worktree as its workspace.

use std::path::{Path, PathBuf};

/// The Claude Code worktree `path` lies in (or is): its nearest ancestor
/// `A` whose parent is `.claude/worktrees` and whose `.git` is a file (not
/// a link) naming a git directory, as `git worktree add` writes it. The
/// agent cannot make one: `.claude/worktrees` itself stays protected
/// from its file tools and its sandboxed commands.
pub fn root(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| {
            let parent = a.parent();
            parent.and_then(Path::file_name) == Some("worktrees".as_ref())
                && parent.and_then(Path::parent).and_then(Path::file_name)
                    == Some(".claude".as_ref())
                && is_linked_worktree(a)
        })
        .map(Path::to_path_buf)
}

fn is_linked_worktree(dir: &Path) -> bool {
    let git = dir.join(".git");
    std::fs::symlink_metadata(&git).is_ok_and(|m| m.file_type().is_file())
        && std::fs::read(&git).is_ok_and(|t| t.starts_with(b"gitdir: "))
}

/// The workspace for a call in `cwd` whose project is `ws`: the Claude
/// Code worktree of the project `cwd` lies in, else `ws`.
pub fn workspace(ws: &str, cwd: Option<&str>) -> String {
    let Some(cwd) = cwd.filter(|c| c.starts_with('/')) else {
        return ws.to_string();
    };
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    match root(&real(Path::new(cwd))) {
        Some(a) if a.starts_with(real(Path::new(ws))) && a != real(Path::new(ws)) => {
            a.to_string_lossy().into_owned()
        }
        _ => ws.to_string(),
    }
}

/// The directories whose `.claude/settings*.json` Claude Code applies to a
/// call in the workspace `ws` of the project `project` (attack atk24r
/// F5): the worktree's own (its committed files), the project's when the
/// call is in one of its `.claude/worktrees`, and, for any linked git
/// worktree, the main checkout's (its untracked `settings.local.json`
/// is in no worktree's checkout). One set for the unconfined-hook refusal
/// and the peer-hook rule alike; more directories only mean more hooks
/// judged (fail closed).
pub fn settings_dirs(ws: &str, project: &str) -> Vec<String> {
    let mut out = vec![ws.to_string()];
    for d in [Some(project.to_string()), main_checkout(Path::new(ws))]
        .into_iter()
        .flatten()
    {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The main checkout of the linked git worktree `dir` (its `.git` file
/// names `<common>/worktrees/NAME`; the main checkout is the parent of a
/// common directory named `.git`).
fn main_checkout(dir: &Path) -> Option<String> {
    let git = dir.join(".git");
    if !std::fs::symlink_metadata(&git).ok()?.file_type().is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&git).ok()?;
    let gitdir = Path::new(text.strip_prefix("gitdir: ")?.trim_end());
    let gitdir = if gitdir.is_absolute() {
        gitdir.to_path_buf()
    } else {
        dir.join(gitdir)
    };
    let common = match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(c) if Path::new(c.trim_end()).is_absolute() => PathBuf::from(c.trim_end()),
        Ok(c) => gitdir.join(c.trim_end()),
        Err(_) => return None,
    };
    let common = std::fs::canonicalize(common).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    let main = common.parent()?;
    (main != dir).then(|| main.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_linked_worktree_under_claude_worktrees_counts() {
        let d = std::env::temp_dir().join(format!("skarn-claude-wt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let wt = d.join(".claude/worktrees/feat");
        std::fs::create_dir_all(wt.join("src")).unwrap();
        assert_eq!(root(&wt.join("src/a.rs")), None, "no .git file yet");
        std::fs::write(wt.join(".git"), "gitdir: /x/.git/worktrees/feat\n").unwrap();
        assert_eq!(root(&wt.join("src/a.rs")), Some(wt.clone()));
        assert_eq!(root(&d.join(".claude/settings.json")), None);
        let ws = d.to_string_lossy().into_owned();
        let cwd = wt.join("src").to_string_lossy().into_owned();
        assert_eq!(
            workspace(&ws, Some(&cwd)),
            std::fs::canonicalize(&wt).unwrap().to_string_lossy()
        );
        assert_eq!(workspace(&ws, Some(&ws)), ws);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
