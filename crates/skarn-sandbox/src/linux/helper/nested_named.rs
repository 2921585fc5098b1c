//! What the configuration of a repository nested in a writable grant
//! names inside the grants (attack atk22g F19): its `core.hooksPath`
//! directory, `core.fsmonitor` program, filters, include files... Host
//! git in that work tree runs them, so they are kept read-only like the
//! nested repository's own hooks and config (reserved when missing).

use std::path::PathBuf;

use super::reserve::ReserveNotes;
use crate::linux::plan::Reservation;

/// Add the protections for the nested `.git` entry `g` to `ops` (path,
/// reserve when missing, is a mask).
pub(super) fn add(
    g: &std::path::Path,
    r: &Reservation,
    ops: &mut Vec<(PathBuf, bool, bool)>,
    notes: &mut ReserveNotes,
) {
    if g.file_name() != Some(std::ffi::OsStr::new(".git")) {
        return;
    }
    let Some(top) = g.parent() else { return };
    let Some(layout) = crate::protect::git::git_vet::discover(top) else {
        return;
    };
    if layout.top != top {
        return;
    }
    let named = crate::protect::git::config_names::named(&layout, r.git_home.as_deref());
    let over = named.len() > crate::protect::git::config_names::MAX_PATHS;
    let mut added = Vec::new();
    for p in named {
        // Past the bound: the nested work tree whole.
        let p = if over && p == layout.top {
            top.to_path_buf()
        } else {
            p
        };
        let inside = r.nested_roots.iter().any(|root| p.starts_with(root));
        if !inside || p == layout.git_dir || ops.iter().any(|(q, _, _)| *q == p) {
            continue;
        }
        // Reserved when missing, where its directory is there.
        let reserve = p.parent().is_some_and(|d| d.is_dir());
        added.push(p.display().to_string());
        ops.push((p, reserve, false));
    }
    if !added.is_empty() {
        notes.info.push(format!(
            "read-only as named by the git configuration of the nested repository {}: {}",
            top.display(),
            added.join(", ")
        ));
    }
}
