//! What makes a commit the run made unsafe for the host (issue 22): its
//! tree, walked through the objects made during the run only (an older
//! object holds only content the repository already had), holds new
//! content at a protected path (the persistence list, the names read in
//! any directory, the upward-searched names), or an agents' environment
//! file that sets a variable host programs run code by. Shared by the
//! loose objects' vetting ([`super::new_commits`]) and the packs'
//! ([`super::new_packs`], ADR 0257): only where the objects are read
//! from differs ([`Source`]).
//!
//! Content at a protected path that is byte for byte the user's own file
//! there (an untracked `.envrc` of the user's the run committed as it
//! was, with `git add -A`) is not planted: the work tree already holds
//! it, unchanged since before the run.

use std::collections::HashSet;
use std::path::Path;
use std::time::SystemTime;

use crate::protect::grant_walk::changed_since;

/// Levels of trees followed.
const MAX_DEPTH: usize = 64;

/// Where the objects of a repository are read from.
pub(crate) trait Source {
    /// Whether the object `hex` was made during the run.
    fn is_new(&self, hex: &str) -> bool;
    /// The object's type and body (`None` when it cannot be read).
    fn read(&mut self, hex: &str) -> Option<(String, Vec<u8>)>;
    /// Bytes of an object id (20 for SHA-1, 32 for SHA-256).
    fn oid_len(&self) -> usize;
}

/// The work tree the commits would be checked out in, to tell the
/// user's own files from planted content.
pub(crate) struct WorkTree<'a> {
    pub(crate) root: &'a Path,
    pub(crate) since: SystemTime,
}

/// Why the commit (or tag) `body` of type `kind` is unsafe, if it is.
pub(crate) fn object_unsafe(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    kind: &str,
    body: &[u8],
) -> Option<String> {
    let tree = match kind {
        "commit" => first_line_oid(body, b"tree ")?,
        // A tag naming a tree is checked out as one (`git checkout <tag>
        // -- .`).
        "tag" => {
            let target = first_line_oid(body, b"object ")?;
            let is_tree = body
                .split(|b| *b == b'\n')
                .nth(1)
                .is_some_and(|l| l == b"type tree");
            if !is_tree {
                return None;
            }
            target
        }
        _ => return None,
    };
    let mut seen = HashSet::new();
    tree_unsafe(src, work, &tree, "", false, 0, &mut seen)
}

/// Why the tree `hex` (at `prefix`; `all`: the whole tree lies at a
/// protected path) holds planted content at a protected path.
fn tree_unsafe(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    hex: &str,
    prefix: &str,
    all: bool,
    depth: usize,
    seen: &mut HashSet<(String, String)>,
) -> Option<String> {
    if !src.is_new(hex) || !seen.insert((hex.to_string(), prefix.to_string())) {
        return None;
    }
    if depth > MAX_DEPTH {
        return Some(format!(
            "its tree at {prefix} is deeper than {MAX_DEPTH} levels"
        ));
    }
    let Some((kind, body)) = src.read(hex) else {
        return Some(format!("its tree at '{prefix}' cannot be read"));
    };
    if kind != "tree" {
        return None;
    }
    let oid_len = src.oid_len();
    let mut i = 0;
    while i < body.len() {
        let bad = || Some(format!("its tree at '{prefix}' does not parse"));
        let Some(sp) = body[i..].iter().position(|b| *b == b' ').map(|p| p + i) else {
            return bad();
        };
        let Some(nul) = body[sp..].iter().position(|b| *b == 0).map(|p| p + sp) else {
            return bad();
        };
        let end = nul + 1 + oid_len;
        if end > body.len() {
            return bad();
        }
        let mode = body[i..sp].to_vec();
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
        // (A submodule's commit is another repository's.)
        if mode == b"160000" || !src.is_new(&oid) {
            continue;
        }
        let here = all || protected(&path);
        if mode == b"40000" {
            if let Some(why) = tree_unsafe(src, work, &oid, &path, here, depth + 1, seen) {
                return Some(why);
            }
            continue;
        }
        if here {
            if users_own(src, work, &path, &mode, &oid) {
                continue;
            }
            return Some(format!(
                "holds content made during the run at {path}, a path host tools read and run"
            ));
        }
        if crate::protect::dotenv::is_env_file(std::ffi::OsStr::new(&name))
            && let Some((_, b)) = src.read(&oid)
            && let Some((line, var)) = crate::protect::dotenv::code_variable(&b)
        {
            return Some(format!(
                "holds {path}, whose line {line} sets {var} (agents load it at start and pass \
                 it to every command)"
            ));
        }
    }
    None
}

/// Whether the blob `oid` at `path` is the user's own file there: a
/// regular file of the work tree (no link on the way), not changed since
/// the run started, holding exactly these bytes.
fn users_own(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    path: &str,
    mode: &[u8],
    oid: &str,
) -> bool {
    if mode != b"100644" && mode != b"100755" {
        return false;
    }
    let mut at = work.root.to_path_buf();
    for c in path.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return false;
        }
        at.push(c);
        let Ok(m) = std::fs::symlink_metadata(&at) else {
            return false;
        };
        if m.file_type().is_symlink() {
            return false;
        }
    }
    let Ok(m) = std::fs::symlink_metadata(&at) else {
        return false;
    };
    if !m.is_file() || changed_since(&at, work.since) || m.len() > 1 << 20 {
        return false;
    }
    let Ok(mine) = std::fs::read(&at) else {
        return false;
    };
    matches!(src.read(oid), Some((k, body)) if k == "blob" && body == mine)
}

/// The object id on the first line of a commit or tag, after `key`.
pub(crate) fn first_line_oid(body: &[u8], key: &[u8]) -> Option<String> {
    let first = body.split(|b| *b == b'\n').next()?;
    let hex = std::str::from_utf8(first.strip_prefix(key)?).ok()?;
    (hex.bytes().all(|b| b.is_ascii_hexdigit()) && (hex.len() == 40 || hex.len() == 64))
        .then(|| hex.to_ascii_lowercase())
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
            first_line_oid(format!("tree {t}\nparent x\n").as_bytes(), b"tree "),
            Some(t.to_string())
        );
        assert_eq!(first_line_oid(b"parent x\n", b"tree "), None);
    }
}
