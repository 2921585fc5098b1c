//! Rebase and cherry-pick instruction lists left by a run (host side).
//!
//! `git rebase --continue` on the host (or an IDE's Continue button) runs
//! every `exec` line of `.git/rebase-merge/git-rebase-todo`, and
//! `git cherry-pick --continue` those of `.git/sequencer/todo`. A command
//! may run git inside (an interrupted rebase is ordinary), so the lists
//! stay writable during the run; afterwards a list the run changed that
//! holds an `exec` line is set aside (renamed), so the host's next
//! `--continue` stops instead of running it.

use std::path::{Path, PathBuf};

/// The instruction lists of a git directory.
const TODOS: &[&str] = &[
    "rebase-merge/git-rebase-todo",
    "rebase-merge/git-rebase-todo.backup",
    "rebase-merge/done",
    "sequencer/todo",
];

/// Largest list read (a larger one counts as changed and is examined
/// only in its first part).
const MAX_READ: u64 = 4 << 20;

/// The lists' contents before the run.
#[derive(Debug, Default)]
pub struct Before {
    seen: Vec<(PathBuf, Option<Vec<u8>>)>,
}

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

/// Whether a list holds a line git runs as a command.
pub fn has_exec(text: &[u8]) -> bool {
    String::from_utf8_lossy(text).lines().any(|l| {
        let w = l.split_whitespace().next().unwrap_or("");
        w == "exec" || w == "x"
    })
}

/// Save the lists of `git_dirs` before the run.
pub fn before(git_dirs: &[PathBuf]) -> Before {
    let mut seen = Vec::new();
    for d in git_dirs {
        for t in TODOS {
            let p = d.join(t);
            seen.push((p.clone(), read(&p)));
        }
    }
    Before { seen }
}

/// After the run: set aside each list that changed and holds an `exec`
/// line; one warning per list.
pub fn after(b: &Before, run_id: u32) -> Vec<String> {
    let mut out = Vec::new();
    for (p, was) in &b.seen {
        let now = read(p);
        if now.is_none() || now == *was || !now.as_deref().is_some_and(has_exec) {
            continue;
        }
        let aside = PathBuf::from(format!("{}.skarn-set-aside-{run_id}", p.display()));
        match std::fs::rename(p, &aside) {
            Ok(()) => out.push(format!(
                "{} was changed by the run and holds `exec` lines that `git rebase \
                 --continue` would run on the host: set aside as {}",
                p.display(),
                aside.display()
            )),
            Err(e) => out.push(format!(
                "{} was changed by the run and holds `exec` lines; it could not be set \
                 aside ({e}): do not continue that rebase",
                p.display()
            )),
        }
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
