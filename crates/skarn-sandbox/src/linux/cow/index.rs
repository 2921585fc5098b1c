//! A repository index the run changed, vetted before it is applied
//! ([`crate::protect::git::index_vet`], ADR 0235): the host's index stays
//! when the run staged content for a path it could not write; flags the
//! run set are cleared and the cached trees dropped otherwise.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::vet::{Change, Rules, check};
use crate::protect::git::index_vet::{MAX_INDEX, Verdict, vet};

/// Read a regular file of at most [`MAX_INDEX`] bytes, never through a
/// link.
fn read(p: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut v = Vec::new();
    f.take(MAX_INDEX as u64 + 1).read_to_end(&mut v).ok()?;
    Some(v)
}

/// Whether `rel` (relative to the workspace) is a repository's index in
/// its git directory (`.git/index`, `sub/.git/index`, a linked worktree's
/// `.git/worktrees/<name>/index`).
pub(super) fn is_index(rel: &Path) -> bool {
    rel.file_name() == Some(OsStr::new("index"))
        && rel
            .components()
            .any(|c| c.as_os_str() == OsStr::new(".git"))
}

/// The work tree of a linked worktree's index (`<g>/worktrees/<name>/index`,
/// its `gitdir` file naming `<tree>/.git`), relative to the workspace, and
/// whether it lies inside it. One outside the workspace (`git worktree
/// add ../feature`) is judged by names as if at the workspace's top: the
/// run could write none of it, and host git there writes what the index
/// holds on `checkout -- .`, `stash` or `reset --hard` (so a staged
/// `.envrc` or `.vscode/tasks.json` is refused as at the top).
fn linked_top(rules: &Rules, rel: &Path) -> Option<(std::path::PathBuf, bool)> {
    let wt = rel.parent()?;
    if wt.parent()?.file_name() != Some(OsStr::new("worktrees")) {
        return None;
    }
    // The host's `gitdir` file (the run's copy is its own to change).
    let named = crate::protect::small_file::read_bytes(&rules.ws.join(wt).join("gitdir"))
        .ok()
        .flatten()?;
    let named = std::path::PathBuf::from(OsStr::from_bytes(named.trim_ascii()));
    let tree = named.parent()?;
    let real = std::fs::canonicalize(tree).unwrap_or_else(|_| tree.to_path_buf());
    let ws = std::fs::canonicalize(&rules.ws).unwrap_or_else(|_| rules.ws.clone());
    match real.strip_prefix(&ws) {
        Ok(inner) => Some((inner.to_path_buf(), true)),
        Err(_) => Some((std::path::PathBuf::new(), false)),
    }
}

/// Vet the run's `upper` file for the index at `rel` (`since`: when the
/// run started): the notes of what was changed in it, or why it is
/// refused.
pub(super) fn vet_index(
    rules: &Rules,
    rel: &Path,
    upper: &Path,
    since: (i64, i64),
) -> Result<Vec<String>, String> {
    let new = read(upper).ok_or("the index the run left could not be read")?;
    let old = read(&rules.ws.join(rel));
    // The working tree of `<top>/.git/index` is `<top>`; another index's
    // (a linked worktree's) is elsewhere: its flags and cached trees are
    // still vetted.
    let top = rel
        .parent()
        .filter(|g| g.file_name() == Some(OsStr::new(".git")))
        .and_then(Path::parent)
        .map(|t| (t.to_path_buf(), true))
        .or_else(|| linked_top(rules, rel));
    // A path is the run's to stage when the run could have written it:
    // the layer's own decision, for a file that was there before the run
    // (tracked, or on the host and not made since the run started) or
    // one that was not (a missing unreserved name may be made).
    let protected = |p: &[u8], tracked: bool| match &top {
        // `.gitmodules` is the layer's to vet (`git submodule add` stages
        // it; its content is vetted where git reads it, ADR 0181), and
        // git refuses the commands it could name.
        Some(_) if p == b".gitmodules" => false,
        Some((t, inside)) => {
            let path = t.join(OsStr::from_bytes(p));
            let there = tracked
                || *inside
                    && rustix::fs::lstat(rules.ws.join(&path))
                        .is_ok_and(|st| !super::apply::changed_since(&st, since));
            check(
                rules,
                &path,
                Change::File,
                Path::new("/nonexistent"),
                there,
                None,
            )
            .is_err()
        }
        None => false,
    };
    let hash_len = rules
        .ws
        .join(rel)
        .parent()
        .map_or(20, crate::protect::git::object_format::oid_len);
    if let Some((t, true)) = &top {
        staged_gitmodules(rules, rel, upper, t, old.as_deref(), &new, hash_len)?;
        staged_links(rules, rel, upper, t, old.as_deref(), &new, hash_len)?;
    }
    match vet(old.as_deref(), &new, hash_len, &protected) {
        Verdict::Keep => Ok(Vec::new()),
        Verdict::Refuse(why) => Err(why),
        Verdict::Rewrite(bytes, notes) => {
            let tmp = upper.with_extension("skarn-vetted");
            std::fs::write(&tmp, bytes)
                .and_then(|()| std::fs::rename(&tmp, upper))
                .map_err(|e| format!("the index could not be vetted ({e})"))?;
            Ok(notes)
        }
    }
}

/// A `.gitmodules` the run staged through the index only (not in the
/// work tree) is vetted as the work tree's file is: host git reads the
/// index's blob (`git submodule update` on a fresh checkout, `git
/// checkout -- .gitmodules`).
fn staged_gitmodules(
    rules: &Rules,
    rel: &Path,
    upper: &Path,
    top: &Path,
    old: Option<&[u8]>,
    new: &[u8],
    hash_len: usize,
) -> Result<(), String> {
    use crate::protect::git::index_vet::staged_oid;
    let Some(oid) = staged_oid(new, hash_len, b".gitmodules") else {
        return Ok(());
    };
    if old
        .and_then(|o| staged_oid(o, hash_len, b".gitmodules"))
        .as_deref()
        == Some(oid.as_str())
    {
        return Ok(());
    }
    let (Some(upper_git), Some(host_git)) = (
        upper.parent(),
        rules.ws.join(rel).parent().map(Path::to_path_buf),
    ) else {
        return Ok(());
    };
    let blob = crate::protect::git::new_packs::read_object(upper_git, &host_git, &oid)
        .filter(|(k, _)| k == "blob")
        .map(|(_, b)| b)
        .ok_or(
            "the run staged a .gitmodules whose content cannot be read: the host's index is kept",
        )?;
    let tmp = upper.with_extension(format!(
        "skarn-gitmodules-{}",
        crate::protect::set_aside::random_suffix()
    ));
    std::fs::write(&tmp, &blob)
        .map_err(|e| format!("the staged .gitmodules could not be vetted ({e})"))?;
    let host_file = rules.ws.join(top).join(".gitmodules");
    let root = upper.ancestors().nth(rel.components().count());
    let r = super::vet::check_gitmodules(rules, &tmp, &host_file, root);
    let _ = std::fs::remove_file(&tmp);
    r.map_err(|why| {
        format!("the run staged a .gitmodules through the index: {why}; the host's index is kept")
    })
}

/// A link the run staged through the index only that leads out of the
/// work tree (refused in the layer itself): host `git checkout -- .`
/// would make it (attack atk22h F21).
fn staged_links(
    rules: &Rules,
    rel: &Path,
    upper: &Path,
    top: &Path,
    old: Option<&[u8]>,
    new: &[u8],
    hash_len: usize,
) -> Result<(), String> {
    use crate::protect::git::index_vet::staged_entries;
    let Some(entries) = staged_entries(new, hash_len) else {
        return Ok(());
    };
    let before = old
        .and_then(|o| staged_entries(o, hash_len))
        .unwrap_or_default();
    let (Some(upper_git), Some(host_git)) = (
        upper.parent(),
        rules.ws.join(rel).parent().map(Path::to_path_buf),
    ) else {
        return Ok(());
    };
    let root = rules.ws.join(top);
    for (path, mode, oid) in &entries {
        if *mode & 0o170000 != 0o120000
            || before
                .iter()
                .any(|(p, m, o)| p == path && m == mode && o == oid)
        {
            continue;
        }
        let p = String::from_utf8_lossy(path);
        let Some((_, text)) =
            crate::protect::git::new_packs::read_object(upper_git, &host_git, oid)
        else {
            return Err(format!(
                "the run staged a link at {p} whose target cannot be read: the host's index is kept"
            ));
        };
        if let Err(why) = crate::protect::git::commit_walk::link_out(&root, &p, &text) {
            return Err(format!(
                "the run staged {p} through the index, {why}: the host's index is kept"
            ));
        }
    }
    Ok(())
}
