//! Commits a run made, vetted before host git can check them out (issue
//! 22, helper h22f). A run may not write `.envrc`, `.vscode/tasks.json`
//! or a hook manager's configuration in the work tree, and the index it
//! leaves is vetted (ADR 0235), but `git commit` inside the run writes
//! objects: a commit whose tree holds planted content at such a path
//! reaches the work tree when the host checks it out, resets or stashes
//! to it (`git reset --hard`, an IDE's checkout of the agent's branch),
//! and the host's direnv, editor or hook manager then runs it.
//!
//! After a run, every loose object of the workspace's repositories made
//! during it (change time) is read as git stores it (zlib, `<type>
//! <size>\0`); for each commit, its tree is walked through the trees made
//! during the run only (an older tree holds only content the repository
//! already had): an entry at a protected path (the persistence list, the
//! names read in any directory, the upward-searched names) whose object
//! was made during the run, or an agents' environment file that sets a
//! variable host programs run code by, makes the commit unsafe. Its
//! object is set aside: host git can no longer read, check out or reset
//! to it (nor to the commits above it), and the report names it. Packs
//! are not read (`git gc`, a local fetch of more than 100 objects): a
//! commit packed during the run is not vetted (a known gap).

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::protect::grant_walk::changed_since;

/// New loose objects looked at per repository, at most.
const MAX_NEW: usize = 100_000;
/// Largest object inflated.
const MAX_OBJECT: u64 = 64 << 20;
/// Levels of trees followed.
const MAX_DEPTH: usize = 64;

/// What [`vet`] found.
#[derive(Debug, Default)]
pub struct Vetted {
    /// One line per commit set aside or repository not fully vetted.
    pub lines: Vec<String>,
    /// A repository could not be vetted whole: the run must fail.
    pub incomplete: bool,
}

/// One repository's objects made during the run.
struct Objects {
    dir: PathBuf,
    /// Hex names of the loose objects made during the run.
    new: HashSet<String>,
    /// Bytes of an object id (20 for SHA-1, 32 for SHA-256).
    oid_len: usize,
}

/// Vet the repositories at the top of each of `roots` (their `.git`
/// directories) for commits made at or after `since`.
pub fn vet(roots: &[PathBuf], since: SystemTime) -> Vetted {
    let mut out = Vetted::default();
    for r in roots {
        let git = r.join(".git");
        if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        vet_repo(&git, since, &mut out);
    }
    out
}

fn vet_repo(git: &Path, since: SystemTime, out: &mut Vetted) {
    let dir = git.join("objects");
    let Some(objs) = new_objects(&dir, since, out) else {
        return;
    };
    // (Packs are not read: `git gc` in a run repacks the whole
    // repository, so a pack made during it holds old objects too, and
    // telling the new ones apart needs the list from before the run.
    // A commit packed during the run is a known gap, in SECURITY.md.)
    let mut names: Vec<&String> = objs.new.iter().collect();
    names.sort();
    for hex in names {
        let Some((kind, body)) = objs.read(hex) else {
            continue;
        };
        if kind != "commit" {
            continue;
        }
        let Some(tree) = commit_tree(&body) else {
            continue;
        };
        let mut seen = HashSet::new();
        let Some(why) = objs.tree_unsafe(&tree, "", 0, &mut seen) else {
            continue;
        };
        let file = objs.path(hex);
        let aside = crate::protect::set_aside::set_aside(&file, "skarn-set-aside");
        out.lines.push(format!(
            "commit {hex} was made during the run and {why}: host git would write it into the \
             work tree on a checkout, reset or stash of that commit; its object {}",
            aside.describe(
                "git cannot read that commit or those above it; review it with git cat-file \
                 before renaming it back"
            )
        ));
    }
}

/// The loose objects under `dir` made at or after `since`.
fn new_objects(dir: &Path, since: SystemTime, out: &mut Vetted) -> Option<Objects> {
    let mut new = HashSet::new();
    let mut oid_len = 20;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let d = e.file_name();
        let d = d.to_str().unwrap_or("");
        if d.len() != 2 || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(e.path()) else {
            continue;
        };
        for f in rd.flatten() {
            let n = f.file_name();
            let n = n.to_str().unwrap_or("");
            if !(n.len() == 38 || n.len() == 62) || !n.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            if !changed_since(&f.path(), since) {
                continue;
            }
            if new.len() >= MAX_NEW {
                out.incomplete = true;
                out.lines.push(format!(
                    "more than {MAX_NEW} objects were made during the run in {}: the commits \
                     among them were not all vetted, so the run fails; review the branches the \
                     run made before checking them out",
                    dir.display()
                ));
                return None;
            }
            if n.len() == 62 {
                oid_len = 32;
            }
            new.insert(format!("{d}{n}"));
        }
    }
    Some(Objects {
        dir: dir.to_path_buf(),
        new,
        oid_len,
    })
}

impl Objects {
    fn path(&self, hex: &str) -> PathBuf {
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// A loose object: its type and body (`None` when it cannot be read).
    fn read(&self, hex: &str) -> Option<(String, Vec<u8>)> {
        let f = std::fs::File::open(self.path(hex)).ok()?;
        let mut z = flate2::read::ZlibDecoder::new(f).take(MAX_OBJECT);
        let mut raw = Vec::new();
        z.read_to_end(&mut raw).ok()?;
        let nul = raw.iter().position(|b| *b == 0)?;
        let head = std::str::from_utf8(&raw[..nul]).ok()?;
        let kind = head.split(' ').next()?.to_string();
        Some((kind, raw[nul + 1..].to_vec()))
    }

    /// Why the tree `hex` (at `prefix`) holds planted content at a
    /// protected path; only trees made during the run are read.
    fn tree_unsafe(
        &self,
        hex: &str,
        prefix: &str,
        depth: usize,
        seen: &mut HashSet<String>,
    ) -> Option<String> {
        if !self.new.contains(hex) || !seen.insert(hex.to_string()) {
            return None;
        }
        if depth > MAX_DEPTH {
            return Some(format!(
                "its tree at {prefix} is deeper than {MAX_DEPTH} levels"
            ));
        }
        let Some((kind, body)) = self.read(hex) else {
            return Some(format!("its tree at '{prefix}' cannot be read"));
        };
        if kind != "tree" {
            return None;
        }
        let mut i = 0;
        while i < body.len() {
            let sp = body[i..].iter().position(|b| *b == b' ')? + i;
            let nul = body[sp..].iter().position(|b| *b == 0)? + sp;
            let end = nul + 1 + self.oid_len;
            if end > body.len() {
                return Some(format!("its tree at '{prefix}' does not parse"));
            }
            let mode = &body[i..sp];
            let name = String::from_utf8_lossy(&body[sp + 1..nul]).into_owned();
            let oid: String = body[nul + 1..end]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            i = end;
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let new = self.new.contains(&oid);
            // (A submodule's commit is another repository's.)
            if mode == b"160000" || !new {
                continue;
            }
            if protected(&path) {
                return Some(format!(
                    "holds content made during the run at {path}, a path host tools read and \
                     run"
                ));
            }
            if mode == b"40000" {
                if let Some(why) = self.tree_unsafe(&oid, &path, depth + 1, seen) {
                    return Some(why);
                }
            } else if crate::protect::dotenv::is_env_file(std::ffi::OsStr::new(&name))
                && let Some((_, b)) = self.read(&oid)
                && let Some((line, var)) = crate::protect::dotenv::code_variable(&b)
            {
                return Some(format!(
                    "holds {path}, whose line {line} sets {var} (agents load it at start and \
                     pass it to every command)"
                ));
            }
        }
        None
    }
}

/// The tree a commit's body names.
fn commit_tree(body: &[u8]) -> Option<String> {
    let first = body.split(|b| *b == b'\n').next()?;
    let hex = std::str::from_utf8(first.strip_prefix(b"tree ")?).ok()?;
    (hex.bytes().all(|b| b.is_ascii_hexdigit()) && (hex.len() == 40 || hex.len() == 64))
        .then(|| hex.to_string())
}

/// Whether host tools read and run what a work tree's `path` holds: a
/// persistence entry (or a path below one; shell start-up files only
/// matter in a home), a name read in any directory or looked up upward,
/// an editor workspace file at the top.
pub(crate) fn protected(path: &str) -> bool {
    use crate::protect::persistence::{ENTRIES, Reserve, WORKSPACE_FILE_SUFFIX, any_depth_name};
    let listed = ENTRIES.iter().any(|e| {
        e.reserve != Reserve::IfHome
            && (path == e.path
                || path
                    .strip_prefix(e.path)
                    .is_some_and(|rest| rest.starts_with('/')))
    });
    let named = path.split('/').any(|c| {
        let c = std::ffi::OsStr::new(c);
        any_depth_name(c) || crate::protect::grant_walk::upward_entry(c).is_some()
    });
    let top_file = !path.contains('/') && path.to_lowercase().ends_with(WORKSPACE_FILE_SUFFIX);
    listed || named || top_file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_are_the_persistence_list_and_the_names_read_anywhere() {
        for p in [
            ".envrc",
            ".vscode/tasks.json",
            "pkg/.envrc",
            "sub/.claude/settings.json",
            ".husky/pre-commit",
            "x.code-workspace",
            ".github/hooks/a.json",
        ] {
            assert!(protected(p), "{p}");
        }
        for p in [
            "src/main.rs",
            "README.md",
            ".bashrc",
            "docs/x.code-workspace",
        ] {
            assert!(!protected(p), "{p}");
        }
    }

    #[test]
    fn a_commits_tree_is_read_from_its_first_line() {
        let t = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            commit_tree(format!("tree {t}\nparent x\n").as_bytes()),
            Some(t.to_string())
        );
        assert_eq!(commit_tree(b"parent x\n"), None);
    }
}
