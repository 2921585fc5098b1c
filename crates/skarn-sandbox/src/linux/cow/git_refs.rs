//! The copy-on-write layer's judgement of a repository's refs kept in
//! the reftable format (`.git/reftable/`, attack atk22h F40): the tables
//! are binary, so the loose replace-ref and `packed-refs` rules of
//! [`super::vet`] do not see them. `tables.list` (which names the tables
//! git reads) is applied only when the refs it leads to read whole and
//! add no replace ref; a table the host has is never rewritten (git
//! writes new tables and drops old ones). A run that moves the refs of
//! the host's repository to the reftable format (`git refs migrate`;
//! the format keys it needs stay the host's, ADR 0267) has none of its
//! ref changes applied: the host keeps its loose refs and `packed-refs`.

use std::ffi::OsStr;
use std::path::Path;

use crate::protect::git::reftable_read::{dir_refs, read_table, replace_refs, stack_refs};

/// Whether the run moved the host's repository (git directory `host_git`,
/// the layer's `upper_git`) to the reftable format.
pub(super) fn migrating(upper_git: &Path, host_git: &Path) -> bool {
    let list = |g: &Path| std::fs::symlink_metadata(g.join("reftable/tables.list")).is_ok();
    list(upper_git) && !list(host_git) && std::fs::symlink_metadata(host_git.join("HEAD")).is_ok()
}

/// Whether `inner` (names below a git directory) is where the refs live.
pub(super) fn ref_store(inner: &[&OsStr]) -> bool {
    inner.first().is_some_and(|f| {
        ["refs", "packed-refs", "reftable", "logs", "HEAD"]
            .iter()
            .any(|x| f == x)
    })
}

/// A file change under `reftable/` (`upper`: the file in the layer,
/// `host`: whether the host has it).
pub(super) fn check_table(
    inner: &[&OsStr],
    upper: &Path,
    host_path: &Path,
    host: bool,
) -> Result<(), String> {
    if inner.len() != 2 {
        return Err("an entry git never makes in a reftable directory".into());
    }
    if inner[1] != "tables.list" {
        return if host {
            Err("a reftable table rewritten (git writes new tables, never rewrites one)".into())
        } else {
            Ok(())
        };
    }
    let (Some(upper_dir), Some(host_dir)) = (upper.parent(), host_path.parent()) else {
        return Err("a reftable list outside a git directory".into());
    };
    let list =
        std::fs::read(upper).map_err(|e| format!("the reftable list cannot be read ({e})"))?;
    let new = stack_refs(&list, &mut |n| {
        read_table(&upper_dir.join(n)).or_else(|| read_table(&host_dir.join(n)))
    })
    .ok_or("reftable refs that do not read whole (they could hold a replace ref)")?;
    let old = dir_refs(host_dir)
        .map(|r| replace_refs(&r))
        .unwrap_or_default();
    if let Some((n, _)) = replace_refs(&new).iter().find(|x| !old.contains(x)) {
        return Err(format!(
            "a replace ref ({n}) in the reftable refs (host git would show and check out other \
             objects)"
        ));
    }
    Ok(())
}
