//! What makes a commit the run made unsafe for the host (issue 22): its
//! tree, compared with its parents' (only where it differs from them:
//! content an earlier run stored with `git hash-object -w` is judged
//! too, attack atk22h F1), holds content at a protected path (the
//! persistence list, the names read in any directory, the upward-searched
//! names) that no parent holds there, or an agents' environment file that
//! sets a variable host programs run code by. Shared by the
//! loose objects' vetting ([`super::new_commits`]) and the packs'
//! ([`super::new_packs`], ADR 0257): only where the objects are read
//! from differs ([`Source`]).
//!
//! Content at a protected path that is byte for byte the user's own file
//! there (an untracked `.envrc` of the user's the run committed as it
//! was, with `git add -A`) is not planted: the work tree already holds
//! it, unchanged since before the run.

use std::path::Path;
use std::time::SystemTime;

use crate::protect::grant_walk::changed_since;

/// Levels of trees followed.
const MAX_DEPTH: usize = 64;
/// Tree entries read per commit where it differs from its parents.
const MAX_ENTRIES: usize = 1_000_000;

/// Where the objects of a repository are read from.
pub(crate) trait Source {
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
    /// The writable place the work tree lies in (the workspace, a grant's
    /// top; `root` itself for the outermost): a link to a sibling of a
    /// nested repository inside it does not lead out.
    pub(crate) bound: &'a Path,
}

/// Why the commit (or tag) `body` of type `kind` is unsafe, if it is.
pub(crate) fn object_unsafe(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    kind: &str,
    body: &[u8],
) -> Option<String> {
    let (tree, parents) = match kind {
        "commit" => {
            let tree = first_line_oid(body, b"tree ")?;
            // The parents' trees: what they hold at a path was there
            // before (each commit the run made is vetted itself).
            let mut parents = Vec::new();
            // Git reads parents only from the lines right after `tree`: a
            // `parent` line further down is not one (atk22j H1), and its
            // tree must not count as what was there before.
            for l in body.split(|b| *b == b'\n').skip(1) {
                if !l.starts_with(b"parent ") {
                    break;
                }
                if let Some(p) = first_line_oid(l, b"parent ") {
                    let t = src
                        .read(&p)
                        .filter(|(k, _)| k == "commit")
                        .and_then(|(_, b)| first_line_oid(&b, b"tree "));
                    parents.extend(t);
                }
            }
            (tree, parents)
        }
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
            (target, Vec::new())
        }
        _ => return None,
    };
    let mut budget = MAX_ENTRIES;
    tree_unsafe(src, work, &tree, &parents, "", false, 0, &mut budget)
}

/// Why the object `hex` a ref names is unsafe when it is a tree: judged
/// as a tag of that tree (a lightweight ref is checked out as one; atk22i
/// F10). Other objects are judged as objects.
pub(crate) fn tree_ref_unsafe(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    hex: &str,
) -> Option<String> {
    let (kind, _) = src.read(hex)?;
    if kind != "tree" {
        return None;
    }
    let mut budget = MAX_ENTRIES;
    tree_unsafe(src, work, hex, &[], "", false, 0, &mut budget)
}

/// One entry of a tree: mode, name, object id (hex).
type TreeEntry = (Vec<u8>, String, String);

/// The entries of the tree `hex` (`None`: it does not read or parse).
fn entries(src: &mut dyn Source, hex: &str) -> Option<Vec<TreeEntry>> {
    let (kind, body) = src.read(hex)?;
    if kind != "tree" {
        return None;
    }
    let oid_len = src.oid_len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let sp = body[i..].iter().position(|b| *b == b' ')? + i;
        let nul = body[sp..].iter().position(|b| *b == 0)? + sp;
        let end = nul + 1 + oid_len;
        if end > body.len() {
            return None;
        }
        // The mode as git reads it (`040000` is a directory: atk22j
        // F1), and a name git would write (no `/`, `..`, `.git`).
        let mode = crate::protect::git::path_check::tree_mode(&body[i..sp])?;
        let name = &body[sp + 1..nul];
        if name.contains(&b'/') || !crate::protect::git::path_check::git_accepts(name, mode) {
            return None;
        }
        out.push((
            crate::protect::git::path_check::mode_text(mode).to_vec(),
            String::from_utf8_lossy(name).into_owned(),
            body[nul + 1..end]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        ));
        i = end;
    }
    Some(out)
}

/// Why the tree `hex` (at `prefix`; `all`: the whole tree lies at a
/// protected path) holds content at a protected path that none of the
/// `parents` (their trees at the same path) holds there. Only where the
/// tree differs from its parents is it read (attack atk22h F1: objects
/// an earlier run wrote with `git hash-object -w` / `git mktree` and a
/// later run committed are judged as well).
#[allow(clippy::too_many_arguments)]
fn tree_unsafe(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    hex: &str,
    parents: &[String],
    prefix: &str,
    all: bool,
    depth: usize,
    budget: &mut usize,
) -> Option<String> {
    if parents.iter().any(|p| p == hex) {
        return None;
    }
    if depth > MAX_DEPTH {
        return Some(format!(
            "its tree at {prefix} is deeper than {MAX_DEPTH} levels"
        ));
    }
    let Some(mine) = entries(src, hex) else {
        return Some(format!("its tree at '{prefix}' cannot be read"));
    };
    let theirs: Vec<Vec<TreeEntry>> = parents.iter().filter_map(|p| entries(src, p)).collect();
    for (mode, name, oid) in mine {
        if *budget == 0 {
            return Some(format!(
                "its tree differs from its parents' in more than {MAX_ENTRIES} entries (not \
                 vetted whole)"
            ));
        }
        *budget -= 1;
        let before: Vec<&TreeEntry> = theirs
            .iter()
            .filter_map(|t| t.iter().find(|(_, n, _)| *n == name))
            .collect();
        if before.iter().any(|(m, _, o)| *m == mode && *o == oid) {
            continue;
        }
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let here = all || protected(&path);
        // A submodule's commit is another repository's, but host `git
        // submodule update` checks it out at this path: one at (or above)
        // a protected path plants that repository's files there (attack
        // atk22i F12, ADR 0278).
        if mode == b"160000" {
            if here || holds_protected(&path) {
                return Some(format!(
                    "holds a submodule at {path}, a path host tools read and run (host git \
                     submodule update would check another repository out there)"
                ));
            }
            continue;
        }
        if mode == b"40000" {
            let sub: Vec<String> = before
                .iter()
                .filter(|(m, _, _)| m == b"40000")
                .map(|(_, _, o)| o.clone())
                .collect();
            if let Some(why) = tree_unsafe(src, work, &oid, &sub, &path, here, depth + 1, budget) {
                return Some(why);
            }
            continue;
        }
        // A link host `git checkout` would make that leads out of the
        // work tree to a directory or file the user can write (refused
        // in the layer itself; attack atk22h F21).
        if mode == b"120000"
            && let Some((_, text)) = src.read(&oid)
            && let Err(why) = link_out_within(work.bound, work.root, &path, &text)
        {
            return Some(format!("holds {path}, {why}"));
        }
        if here {
            if users_own(src, work, &path, &mode, &oid) {
                continue;
            }
            return Some(format!(
                "holds content its parents do not have at {path}, a path host tools read and run"
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

/// Whether the link with text `text` at `path` of the work tree `root`
/// leads out of it to a place the user can write
/// ([`crate::protect::links_out::check_link_text`]).
pub(crate) fn link_out(root: &Path, path: &str, text: &[u8]) -> Result<(), String> {
    link_out_within(root, root, path, text)
}

/// [`link_out`] for a work tree `root` inside the writable place `bound`
/// (a nested repository's link to a sibling directory of the workspace
/// stays inside: SECURITY.md's false positive of atk22h F21's fix).
pub(crate) fn link_out_within(
    bound: &Path,
    root: &Path,
    path: &str,
    text: &[u8],
) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let t = Path::new(std::ffi::OsStr::from_bytes(text));
    let bound = if root.starts_with(bound) { bound } else { root };
    crate::protect::links_out::check_link_text(bound, &root.join(path), t)
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

/// Whether a directory at `path` would hold a protected path: it is one,
/// or a persistence entry lies below it (`.vscode` holds
/// `.vscode/tasks.json`). A submodule or link there would fill it from
/// elsewhere (ADR 0278).
pub(crate) fn holds_protected(path: &str) -> bool {
    use crate::protect::persistence::{ENTRIES, Reserve};
    let path = path.trim_end_matches('/');
    protected(path)
        || ENTRIES.iter().any(|e| {
            e.reserve != Reserve::IfHome
                && (path.is_empty()
                    || e.path
                        .strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with('/')))
        })
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
        for p in [".claude", ".vscode", ".github", "sub/.claude"] {
            assert!(holds_protected(p), "{p}");
        }
        for p in ["vendor/lib", "src", "docs"] {
            assert!(!holds_protected(p), "{p}");
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
