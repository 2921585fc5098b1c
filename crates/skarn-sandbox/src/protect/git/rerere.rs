//! Git's rerere state left by a run (attack atk22j F14). An `rr-cache`
//! directory switches rerere on (`rerere.enabled` unset means "on when
//! `rr-cache` exists"), and then every host `git commit`, `merge`,
//! `rebase --continue` or `am` reads `MERGE_RR`: each `<id>\t<path>` line
//! names a file (any path, an absolute one too) that git copies into
//! `rr-cache/<id>/postimage` when it holds no conflict markers, or
//! overwrites with that postimage when the recorded preimage matches. A
//! planted `MERGE_RR` naming `~/.ssh/id_ed25519` made the host's next
//! plain `git commit` copy the key into the repository, where the next
//! run read it; the write direction overwrites a file outside the work
//! tree. A run's own merge may record state there (git does on a
//! conflict), so it stays writable during the run; afterwards a
//! `MERGE_RR` the run made or changed is set aside, and so is an
//! `rr-cache` the run created (it turned rerere on) or each resolution
//! (`rr-cache/<id>`) it made or changed in one that was there. The layer
//! refuses both ([`is_state`]); a repository the run creates may hold
//! neither ([`crate::protect::git::repo_vet`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The file naming the paths rerere reads and writes.
pub const MERGE_RR: &str = "MERGE_RR";
/// The directory of recorded resolutions (its existence turns rerere on).
pub const RR_CACHE: &str = "rr-cache";

/// Entries of one `rr-cache` looked at, at most; past it the whole
/// directory is set aside (it could not be checked).
const MAX_ENTRIES: usize = 100_000;

/// Whether the names `inner` below a git directory are rerere state of
/// it or of a git directory it keeps (`modules/<name>/`,
/// `worktrees/<name>/`): a component `MERGE_RR` or `rr-cache` before
/// any `refs`, `logs` or `objects` (where such names are ref names).
pub fn is_state(inner: &[&OsStr]) -> bool {
    for (i, c) in inner.iter().enumerate() {
        if *c == "refs" || *c == "logs" || *c == "objects" {
            return false;
        }
        if (*c == MERGE_RR || *c == RR_CACHE)
            && (i == 0 || inner[0] == "modules" || inner[0] == "worktrees")
        {
            return true;
        }
    }
    false
}

/// What a repository the run created may not hold: the rerere state
/// there (`None`: none).
pub fn present(git: &Path) -> Option<&'static str> {
    [MERGE_RR, RR_CACHE]
        .into_iter()
        .find(|n| std::fs::symlink_metadata(git.join(n)).is_ok())
}

/// The git directories whose rerere state is looked at: each given one,
/// its linked worktrees' (`worktrees/*`: their own `MERGE_RR`) and its
/// submodules' (`modules/*`), 256 of each at most.
fn all_git_dirs(git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in git_dirs {
        v.push(d.clone());
        for sub in ["worktrees", "modules"] {
            if let Ok(rd) = std::fs::read_dir(d.join(sub)) {
                v.extend(
                    rd.flatten()
                        .take(256)
                        .map(|e| e.path())
                        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())),
                );
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

/// The git directories before the run, with whether each had an
/// `rr-cache`.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Before {
    seen: Vec<(PathBuf, bool)>,
}

/// Record which of `git_dirs` (and the git directories they keep) had
/// an `rr-cache` before the run.
pub fn before(git_dirs: &[PathBuf]) -> Before {
    Before {
        seen: all_git_dirs(git_dirs)
            .into_iter()
            .map(|g| {
                let had = std::fs::symlink_metadata(g.join(RR_CACHE)).is_ok();
                (g, had)
            })
            .collect(),
    }
}

fn aside(p: &Path, what: &str) -> String {
    let a = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
    format!(
        "{} {what} (host git's next commit, merge or rebase would read or write the files \
         rerere state names, outside the work tree too): {}",
        p.display(),
        a.describe("review it before renaming it back")
    )
}

/// After the run: set aside the rerere state the run made or changed
/// (status-change time at or after `since`); one line each.
pub fn after(b: &Before, since: std::time::SystemTime) -> Vec<String> {
    use crate::protect::grant_walk::changed_since;
    let mut out = Vec::new();
    // A git directory the run made inside a recorded one (a worktree's, a
    // submodule's) has no state before: any rr-cache there is the run's.
    let now = all_git_dirs(&b.seen.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>());
    for git in now {
        if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let had = b.seen.iter().any(|(g, h)| *g == git && *h);
        let mr = git.join(MERGE_RR);
        if std::fs::symlink_metadata(&mr).is_ok() && changed_since(&mr, since) {
            out.push(aside(&mr, "was made or changed by the run"));
        }
        let rr = git.join(RR_CACHE);
        let Ok(md) = std::fs::symlink_metadata(&rr) else {
            continue;
        };
        if !had || !md.is_dir() {
            out.push(aside(
                &rr,
                "was made by the run (it turns rerere on for host git)",
            ));
            continue;
        }
        out.extend(changed_resolutions(&rr, since));
    }
    out
}

/// In an `rr-cache` that was there before: each entry made or changed
/// since `since` (a resolution directory whose files changed counts as
/// changed), set aside; past [`MAX_ENTRIES`], the whole directory.
fn changed_resolutions(rr: &Path, since: std::time::SystemTime) -> Vec<String> {
    use crate::protect::grant_walk::changed_since;
    let Ok(rd) = std::fs::read_dir(rr) else {
        return vec![aside(rr, "could not be read after the run")];
    };
    let mut seen = 0usize;
    let mut changed = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        seen += 1;
        let mut hit = changed_since(&p, since);
        if !hit && e.file_type().is_ok_and(|t| t.is_dir()) {
            match std::fs::read_dir(&p) {
                Ok(inner) => {
                    for f in inner.flatten() {
                        seen += 1;
                        if changed_since(&f.path(), since) {
                            hit = true;
                            break;
                        }
                    }
                }
                Err(_) => hit = true,
            }
        }
        if seen > MAX_ENTRIES {
            return vec![aside(rr, "holds more entries than are checked")];
        }
        if hit {
            changed.push(p);
        }
    }
    changed
        .iter()
        .map(|p| aside(p, "is a resolution the run recorded or changed"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rerere_state_names_are_recognised_where_git_keeps_them() {
        let f = |s: &str| {
            let v: Vec<&OsStr> = s.split('/').map(OsStr::new).collect();
            is_state(&v)
        };
        assert!(f("MERGE_RR"));
        assert!(f("rr-cache/0123/postimage"));
        assert!(f("modules/sub/MERGE_RR"));
        assert!(f("modules/a/b/rr-cache/x"));
        assert!(f("worktrees/wt/MERGE_RR"));
        assert!(!f("refs/heads/rr-cache"));
        assert!(!f("logs/refs/heads/MERGE_RR"));
        assert!(!f("modules/sub/refs/heads/rr-cache"));
        assert!(!f("info/rr-cache"));
        assert!(!f("config"));
    }

    #[test]
    fn state_the_run_made_is_set_aside() {
        let tmp = skarn_test_support::TempDir::new("rerere-after");
        let g = tmp.path().join("repo/.git");
        std::fs::create_dir_all(g.join("rr-cache/old")).unwrap();
        std::fs::write(g.join("rr-cache/old/postimage"), "x").unwrap();
        let fresh = tmp.path().join("fresh/.git");
        std::fs::create_dir_all(&fresh).unwrap();
        let b = before(&[g.clone(), fresh.clone()]);
        let since = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        // Nothing changed since a mark after the set-up: all stays.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        assert!(after(&b, later).is_empty());
        std::fs::write(g.join(MERGE_RR), "id\t/etc/passwd\0").unwrap();
        std::fs::create_dir_all(fresh.join("rr-cache/id")).unwrap();
        let out = after(&b, since);
        assert!(
            std::fs::symlink_metadata(g.join(MERGE_RR)).is_err(),
            "{out:?}"
        );
        assert!(
            std::fs::symlink_metadata(fresh.join(RR_CACHE)).is_err(),
            "{out:?}"
        );
        // A resolution changed since the mark (here: made after it).
        assert!(
            std::fs::symlink_metadata(g.join("rr-cache/old")).is_err(),
            "{out:?}"
        );
        assert_eq!(out.len(), 3, "{out:?}");
    }
}
