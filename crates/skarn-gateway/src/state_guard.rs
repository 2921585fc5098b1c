//! A server's state directory is its own (issue 25, attack finding F3):
//! every server's HOME, tokens included, lives under one root
//! (`skarn-servers`), so no grant of one server may reach another's.
//!
//! - A grant inside the root but outside the server's own directory (a
//!   file another server stored, named in this server's arguments; a
//!   `cwd` or a `[sandbox]` path there; a command installed there) is
//!   dropped, with a note.
//! - A grant that holds the whole root (a `cwd` or a `[sandbox] read` of
//!   the home) keeps the other servers' directories that exist when the
//!   server starts hidden, as secrets are (`deny_read`). A directory
//!   created after the server started (another project's server started
//!   later) is not hidden from it: SECURITY.md says so.

use std::path::{Path, PathBuf};

use skarn_sandbox::{Grant, Policy};

/// Both names of `p`: as given and canonical (when it exists).
fn names(p: &Path) -> Vec<PathBuf> {
    let mut v = vec![p.to_path_buf()];
    if let Ok(c) = std::fs::canonicalize(p)
        && c != p
    {
        v.push(c);
    }
    v
}

/// Whether `p` lies inside `root` but outside `own` (under any of their
/// names).
fn in_another(p: &Path, roots: &[PathBuf], own: &[PathBuf]) -> bool {
    let ps = names(p);
    ps.iter().any(|p| roots.iter().any(|r| p.starts_with(r)))
        && !ps.iter().any(|p| own.iter().any(|o| p.starts_with(o)))
}

/// Whether `p` holds the whole root.
fn holds_root(p: &Path, roots: &[PathBuf]) -> bool {
    names(p)
        .iter()
        .any(|p| roots.iter().any(|r| r.starts_with(p)))
}

/// Apply the rules above to `policy`, the policy of the server whose state
/// directory is `own`; `others` are the other entries of its parent.
/// Returns one note per dropped grant.
pub fn keep_state_private(policy: &mut Policy, own: &Path, others: &[PathBuf]) -> Vec<String> {
    let Some(root) = own.parent() else {
        return Vec::new();
    };
    let roots = names(root);
    let owns = names(own);
    let mut notes = Vec::new();
    let mut holds = false;
    for list in [
        &mut policy.read,
        &mut policy.exec,
        &mut policy.write,
        &mut policy.overlay,
    ] {
        list.retain(|g: &Grant| {
            if in_another(&g.path, &roots, &owns) {
                notes.push(format!(
                    "grant of {} ({}) dropped: it is in another server's state directory",
                    g.path.display(),
                    g.source
                ));
                return false;
            }
            holds |= holds_root(&g.path, &roots);
            true
        });
    }
    if holds {
        for o in others {
            if !names(o).iter().any(|n| owns.contains(n)) {
                policy.deny_read.push(Grant::new(
                    o,
                    "default (another server's state directory)".to_owned(),
                ));
            }
        }
    }
    notes
}

/// The entries of `own`'s parent other than `own` (at most 4096).
pub fn other_states(own: &Path) -> Vec<PathBuf> {
    let Some(root) = own.parent() else {
        return Vec::new();
    };
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != own)
        .take(4096)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_in_other_states_are_dropped_and_the_root_is_masked() {
        let root = Path::new("/h/.local/state/skarn-servers");
        let own = root.join("a-1");
        let mut p = Policy::new(&own);
        p.read
            .push(Grant::new(root.join("b-2/token"), "args".to_owned()));
        p.read.push(Grant::new(own.join("x"), "args".to_owned()));
        p.exec
            .push(Grant::new(root.join("b-2/.venv"), "cmd".to_owned()));
        p.read.push(Grant::new("/srv/data", "cfg".to_owned()));
        let notes = keep_state_private(&mut p, &own, &[root.join("b-2"), own.clone()]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(p.read.len(), 2);
        assert!(p.exec.is_empty());
        assert!(p.deny_read.is_empty());
        // A grant holding the root: the other directories are masked.
        p.read.push(Grant::new("/h", "cwd".to_owned()));
        keep_state_private(&mut p, &own, &[root.join("b-2"), own.clone()]);
        let denied: Vec<_> = p.deny_read.iter().map(|g| g.path.clone()).collect();
        assert_eq!(denied, [root.join("b-2")]);
    }
}
