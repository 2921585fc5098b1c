//! When the check after a run is cut short by its bounds, what the run
//! planted past them was not vetted: every entry at the top of a writable
//! grant that was made or changed during the run is set aside instead, so
//! that nothing unvetted stays where host tools look (attack atk24d F11).
//! The grant's own `.git` is left to the git layer (its configuration and
//! hooks were read-only in the run), and sockets (other runs' placeholders)
//! hold nothing a host tool runs.

use std::path::{Path, PathBuf};

/// Entries looked at in all (their change times) before the rest counts
/// as changed: the set-aside is bounded, and fails closed.
const BUDGET: usize = 1_000_000;

/// Top entries of `roots` as they are now (at most `max` each): taken
/// before anything is set aside, so an entry this check renames is not
/// looked at again under its new name.
pub fn snapshot(roots: &[PathBuf], max: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in roots {
        let Ok(rd) = std::fs::read_dir(r) else {
            continue;
        };
        out.extend(
            rd.flatten()
                .take(max)
                .filter(|e| e.file_name() != ".git")
                .filter(|e| e.file_type().is_ok_and(|t| !is_socket(&t)))
                .map(|e| e.path()),
        );
    }
    out
}

fn is_socket(t: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_socket()
}

/// Set aside each of `top` (from [`snapshot`]) whose tree changed at or
/// after `since`; one line each.
pub(crate) fn set_aside_changed(top: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut budget = BUDGET;
    let mut out = Vec::new();
    for p in top {
        if std::fs::symlink_metadata(p).is_err() || !changed(p, since, &mut budget) {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
        out.push(format!(
            "{} was made or changed during a run whose check did not finish: {}",
            p.display(),
            aside.describe("review it, then rename it back")
        ));
    }
    out
}

/// Whether anything in the tree at `p` (not following links) changed at
/// or after `since`; with `budget` spent, it counts as changed.
fn changed(p: &Path, since: std::time::SystemTime, budget: &mut usize) -> bool {
    let mut stack = vec![p.to_path_buf()];
    while let Some(q) = stack.pop() {
        let Some(b) = budget.checked_sub(1) else {
            return true;
        };
        *budget = b;
        if crate::protect::grant_walk::changed_since(&q, since) {
            return true;
        }
        if std::fs::symlink_metadata(&q).is_ok_and(|m| m.is_dir())
            && let Ok(rd) = std::fs::read_dir(&q)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    false
}
