//! Rebase and cherry-pick instruction lists left by a run (host side).
//!
//! `git rebase --continue` on the host (or an IDE's Continue button) runs
//! every `exec` line of `.git/rebase-merge/git-rebase-todo`, executes the
//! merge `strategy` recorded there, and `git cherry-pick --continue` does
//! the same from `.git/sequencer/`. A command may run git inside (an
//! interrupted rebase is ordinary), so the state stays writable during
//! the run; afterwards a state directory the run created or changed (in
//! the git directory or a linked worktree's, `worktrees/*`) is set aside
//! (renamed), so the host's next `--continue` stops instead of running
//! what the command left.

use std::path::{Path, PathBuf};

/// The state directories of a git directory: every file in them steers
/// what `git rebase --continue`, `git am --continue` or `git cherry-pick
/// --continue` runs (`exec` lines, a merge `strategy` git executes,
/// options).
pub(crate) const STATE_DIRS: &[&str] = &["rebase-merge", "rebase-apply", "sequencer"];

/// Files read per state directory, at most.
const MAX_FILES: usize = 512;

/// Largest file read (a larger one counts as changed when its first part
/// or its size differs).
const MAX_READ: u64 = 4 << 20;

/// The state directories' contents before the run.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Before {
    seen: Vec<(PathBuf, Option<State>)>,
}

/// One state directory: (name, size, first bytes) of each entry.
type State = Vec<(std::ffi::OsString, u64, Vec<u8>)>;

fn read(p: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut v = Vec::new();
    f.take(MAX_READ).read_to_end(&mut v).ok()?;
    Some(v)
}

fn state(dir: &Path) -> Option<State> {
    let md = std::fs::symlink_metadata(dir).ok()?;
    if !md.is_dir() {
        // A link or file there: recorded as a state that differs from
        // any directory.
        return Some(vec![("<not a directory>".into(), md.len(), Vec::new())]);
    }
    let mut v: State = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if v.len() >= MAX_FILES {
                break;
            }
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap_or(&p).as_os_str().to_os_string();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(_) => {
                    let len = std::fs::symlink_metadata(&p).map_or(0, |m| m.len());
                    v.push((rel, len, read(&p).unwrap_or_default()));
                }
                Err(_) => {}
            }
        }
    }
    v.sort();
    Some(v)
}

/// Whether a list holds a line git runs as a command.
pub fn has_exec(text: &[u8]) -> bool {
    String::from_utf8_lossy(text).lines().any(|l| {
        let w = l.split_whitespace().next().unwrap_or("");
        w == "exec" || w == "x"
    })
}

/// The git directories to look at: each given one and its linked
/// worktrees' (`worktrees/*`, at most 256).
fn all_git_dirs(git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in git_dirs {
        v.push(d.clone());
        if let Ok(rd) = std::fs::read_dir(d.join("worktrees")) {
            v.extend(rd.flatten().take(256).map(|e| e.path()));
        }
    }
    v
}

/// Save the state directories of `git_dirs` before the run.
pub fn before(git_dirs: &[PathBuf]) -> Before {
    let mut seen = Vec::new();
    for d in all_git_dirs(git_dirs) {
        for s in STATE_DIRS {
            let p = d.join(s);
            seen.push((p.clone(), state(&p)));
        }
    }
    Before { seen }
}

/// After the run: set aside each state directory the run created or
/// changed; one warning each.
pub fn after(b: &Before) -> Vec<String> {
    let mut out = Vec::new();
    for (p, was) in &b.seen {
        let now = state(p);
        if now.is_none() || now == *was {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
        out.push(format!(
            "{} was created or changed by the run (what `git rebase --continue`, `git am \
             --continue` or `git cherry-pick --continue` would run on the host): {}",
            p.display(),
            aside.describe("do not continue that operation before reviewing it")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_lines_are_recognised() {
        assert!(has_exec(b"pick 1234 a\nexec make\n"));
        assert!(has_exec(b"pick 1234 a\n  x touch y\n"));
        assert!(!has_exec(b"pick 1234 exec\n# exec no\n"));
    }
}
