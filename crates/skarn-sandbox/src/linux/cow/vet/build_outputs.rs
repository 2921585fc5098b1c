//! Files the run made or changed that are build outputs, given the
//! oldest time when the layer applies them (atk22n F7; issue 22, eighth
//! round). Time-stamp build tools (make, ninja, scons, javac's
//! incremental build, cargo's dep-info) take an output newer than its
//! sources as up to date: a planted object would be linked and run by the
//! host's next `make`, and `git status` shows nothing. An output dated
//! 1970 is older than every source, so each of them builds it again. Only
//! the layer's application does it: a run that builds twice sees its own
//! fresh outputs; tracked files keep their time (a source the run changed
//! still makes the host rebuild).
//!
//! What a file is decides: a compiled object by its first bytes
//! ([`crate::protect::build_output_kind`]) is dated wherever it lies, in
//! a repository or not. Another file is judged by the repository it lies
//! in (the nearest directory with a `.git`, read after the layer is
//! applied): one git tracks keeps its time, and so does one git shows as
//! untracked (`??`, not ignored: a new source the user sees, which must
//! stay newer than the outputs the host has); one an ignore pattern
//! might cover (read the cautious way) is dated. A text file in no
//! repository keeps its time (nothing tells an output from a source
//! there). An index that cannot be read counts as tracking nothing (fails
//! closed: one more rebuild).

use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Files dated at most (a bigger run is dated in part and said so).
const MAX_FILES: usize = 1 << 20;

/// Directories looked at above a file for its repository, at most.
const MAX_UP: usize = 600;

/// A repository's tracked paths (relative to its top), or `None` when its
/// index could not be read.
type Tracked = Option<HashSet<Vec<u8>>>;

/// The git directory of the work tree `top` (a `.git` directory, or the
/// one a `.git` file names), if any.
fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot = top.join(".git");
    let m = std::fs::symlink_metadata(&dot).ok()?;
    if m.is_dir() {
        return Some(dot);
    }
    if !m.is_file() || m.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let to = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(top.join(to))
}

/// The tracked paths of the repository whose git directory is `git`.
fn tracked(git: &Path) -> Tracked {
    use std::io::Read;
    let f = std::fs::File::open(git.join("index")).ok();
    let Some(f) = f else {
        // A repository with no index yet tracks nothing.
        return Some(HashSet::new());
    };
    let mut b = Vec::new();
    let max = crate::protect::git::index_vet::MAX_INDEX as u64;
    f.take(max + 1).read_to_end(&mut b).ok()?;
    let len = crate::protect::git::object_format::oid_len(git);
    let (entries, split) = crate::protect::git::index_vet::all_entries(&b, len)?;
    if split {
        return None;
    }
    Some(entries.into_iter().map(|(p, _, _)| p).collect())
}

/// Whether `rel` is a file an untracked build output could be: not in a
/// git directory.
fn candidate(rel: &Path) -> bool {
    !rel.iter().any(|c| c == ".git")
}

/// Date to 1970 every regular file of `applied` (the layer's `+ path`
/// lines, relative to `ws`) that the index of its repository does not
/// track; returns the note for the report, if any was.
pub(crate) fn stamp(ws: &Path, applied: &[String]) -> Option<String> {
    let mut repos: HashMap<PathBuf, (Option<PathBuf>, Tracked)> = HashMap::new();
    let (mut done, mut unread, mut failed) = (0usize, 0usize, 0usize);
    for line in applied {
        let Some(rel) = line.strip_prefix("+ ") else {
            continue;
        };
        if rel.ends_with('/') || rel == ".git (new repository)" {
            continue;
        }
        let rel = Path::new(rel);
        if !candidate(rel) {
            continue;
        }
        // The nearest repository top above the file (in the workspace, or
        // the workspace's own above it).
        let abs = ws.join(rel);
        let mut found = None;
        for top in abs.ancestors().skip(1).take(MAX_UP) {
            let e = repos.entry(top.to_path_buf()).or_insert_with(|| {
                let g = git_dir(top);
                let t = g.as_deref().map_or(Some(HashSet::new()), tracked);
                (g, t)
            });
            if e.0.is_some() {
                found = Some(top.to_path_buf());
                break;
            }
        }
        let object = crate::protect::build_output_kind::is_object(&abs);
        match found {
            None if !object => continue,
            None => {}
            Some(top) => {
                let entry = &repos[&top];
                let Ok(in_repo) = abs.strip_prefix(&top) else {
                    continue;
                };
                match &entry.1 {
                    Some(set) if set.contains(in_repo.as_os_str().as_bytes()) => continue,
                    Some(_) => {
                        let git = entry.0.as_deref().unwrap_or(&top);
                        if !object && !super::build_ignored::might_be_ignored(&top, git, in_repo) {
                            continue;
                        }
                    }
                    None => unread += 1,
                }
            }
        }
        if done >= MAX_FILES {
            failed += 1;
            continue;
        }
        if crate::protect::build_output_kind::date_old(&abs) {
            done += 1;
        } else {
            failed += 1;
        }
    }
    if done == 0 && failed == 0 {
        return None;
    }
    let mut s = format!(
        "{done} file(s) the run made or changed that are build outputs (compiled objects, or \
         files git ignores) were dated 1970-01-01: time-stamp build tools (make, ninja, scons, javac) build them again \
         instead of trusting them"
    );
    if unread > 0 {
        s.push_str(&format!(
            " ({unread} in a repository whose index could not be read: dated too)"
        ));
    }
    if failed > 0 {
        s.push_str(&format!(
            "; {failed} could not be dated: a host build may take them as up to date"
        ));
    }
    Some(s)
}

#[cfg(test)]
#[path = "build_outputs_tests.rs"]
mod tests;
