//! One protection resolved against the host: bound when it exists,
//! reserved (placeholder, empty file) when missing.

use std::path::{Path, PathBuf};

use super::super::ws_entries::WsEntries;
use super::{Op, ReserveNotes};
use crate::linux::plan::FsOp;
use crate::protect::placeholder::{is_placeholder, make_socket_inode};

/// The resolved protections and what they left on the host.
#[derive(Default)]
pub(super) struct Resolved {
    /// The workspace is a copy-on-write layer: nothing is reserved in it
    /// (other writable grants, written directly, still are).
    pub(super) layered: bool,
    /// The workspace (see `layered`).
    pub(super) ws: PathBuf,
    pub(super) steps: Vec<FsOp>,
    pub(super) placeholders: Vec<PathBuf>,
    /// Missing protected paths of a copy-on-write workspace (see
    /// `Reserved::sweep`).
    pub(super) sweep: Vec<PathBuf>,
    pub(super) absent: Vec<PathBuf>,
    pub(super) empties: Vec<(PathBuf, u64)>,
    /// A directory known to exist (the workspace).
    pub(super) known_dir: Option<PathBuf>,
    /// The workspace's entries as listed right before the protections are
    /// resolved (before any placeholder was made).
    pub(super) entries: Option<WsEntries>,
}

/// Apply the rule for one protection (see [`crate::linux::plan::Reservation`]).
pub(super) fn resolve(
    op: Op,
    empty_kind: &[PathBuf],
    done: &mut Resolved,
    notes: &mut ReserveNotes,
) {
    let (mut target, reserve, is_mask) = op;
    let listed = done.entries.as_ref();
    // (The listing predates this run's placeholders.)
    let missing = !done.placeholders.contains(&target)
        && !listed.map_or_else(
            || std::fs::symlink_metadata(&target).is_ok(),
            |e| e.exists(&target),
        );
    // An existing entry the listing saw as no socket is no placeholder.
    let maybe_placeholder = missing || listed.is_none_or(|e| e.may_be_placeholder(&target));
    // Only the workspace is the layer: a missing protected name in another
    // writable grant (`--write`, a linked worktree's git directory) is
    // written directly, so it is reserved as in the direct mode.
    if missing && done.layered && target.starts_with(&done.ws) {
        // Vetted after the run instead; a direct run in the same workspace
        // may reserve it meanwhile, and leave its placeholder to the last
        // run out, which may be this one.
        if reserve {
            done.sweep.push(target);
        }
        return;
    }
    if missing && target.file_name() == Some(std::ffi::OsStr::new("commondir")) {
        done.absent.push(target.clone());
    }
    if missing && !reserve {
        return;
    }
    // (A missing file whose directory is missing too: reserved at its
    // first missing component below, like any protected path.)
    let parent_there = target.parent().is_some_and(|d| d.is_dir());
    if missing && empty_kind.contains(&target) && parent_there {
        match make_empty_file(&target) {
            Ok(ino) => done.empties.push((target.clone(), ino)),
            Err(e) => {
                notes.degraded.push(format!(
                    "could not reserve missing git file {} ({e}); it is not protected",
                    target.display()
                ));
                return;
            }
        }
    } else if missing {
        // Reserve the first missing component: with it taken, nothing
        // below it can be created either.
        match first_missing(&target, done.known_dir.as_deref()) {
            Ok(Some(c)) => target = c,
            Ok(None) => return, // an ancestor is not a directory
            Err(why) => {
                notes.degraded.push(format!(
                    "could not reserve missing protected path {} ({why}); it is not protected",
                    target.display()
                ));
                return;
            }
        }
        if done.placeholders.contains(&target) {
            return;
        }
        if let Err(e) = make_socket_inode(&target)
            && std::fs::symlink_metadata(&target).is_err()
        {
            notes.degraded.push(format!(
                "could not reserve missing protected path {} ({e}); it is not protected",
                target.display()
            ));
            return;
        }
    }
    if maybe_placeholder
        && is_placeholder(&target).is_some()
        && !done.placeholders.contains(&target)
    {
        done.placeholders.push(target.clone());
    }
    done.steps.push(if is_mask {
        FsOp::Mask {
            path: target,
            reserve,
            pin: None,
        }
    } else {
        FsOp::Protect {
            path: target,
            reserve,
            reserve_if: Vec::new(),
        }
    });
}

/// A protected path below a linked directory of a writable grant
/// (`.cargo/config.toml` with `.cargo -> cfg/cargo`, dangling or not) is
/// where the kernel puts it: that path is protected instead (a bind
/// refuses a path through a link, so the run could not start: attack
/// atk22h F17; and a dangling link's target would be made unprotected:
/// F35). One that leads out of every writable grant is not writable:
/// dropped.
pub(super) fn through_links(ops: &mut Vec<Op>, roots: &[PathBuf]) {
    // Nothing is written on the host in this loop: each name's answer is
    // asked once (ADR 0247; the workspace's ancestors were asked once per
    // protected name: about 550 `statx` a run, issue 30).
    let _facts = crate::policy::link_facts::Scope::enter();
    let mut seen: std::collections::HashSet<PathBuf> = ops.iter().map(|o| o.0.clone()).collect();
    let mut out = Vec::with_capacity(ops.len());
    for (p, reserve, mask) in ops.drain(..) {
        if !roots.iter().any(|r| p.starts_with(r)) {
            out.push((p, reserve, mask));
            continue;
        }
        match crate::protect::linked_targets::through_linked_dir(&p) {
            None => out.push((p, reserve, mask)),
            Some(q) => {
                if roots.iter().any(|r| q.starts_with(r)) && seen.insert(q.clone()) {
                    out.push((q, reserve, mask));
                }
            }
        }
    }
    *ops = out;
}

fn make_empty_file(p: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(p)?;
    Ok(f.metadata()?.ino())
}

/// The first component of `path` (found missing) that does not exist (`path` itself when
/// only its last component is missing). `Ok(None)` when an existing
/// ancestor is not a directory (nothing can be created below it); an error
/// when an ancestor is a symlink (the name would be created wherever it
/// points). `known_dir`, a directory known to exist, is where the search
/// starts when `path` lies below it (its own ancestors are not looked at
/// again).
fn first_missing(path: &Path, known_dir: Option<&Path>) -> Result<Option<PathBuf>, &'static str> {
    let (mut acc, rest) = match known_dir.and_then(|d| Some((d, path.strip_prefix(d).ok()?))) {
        Some((d, rest)) if !rest.as_os_str().is_empty() => (d.to_path_buf(), rest),
        _ => (PathBuf::new(), path),
    };
    if !acc.as_os_str().is_empty() && path.parent() == Some(acc.as_path()) {
        // A missing entry right in the known directory (`path` was found
        // missing by the caller).
        return Ok(Some(path.to_path_buf()));
    }
    for c in rest.components() {
        acc.push(c);
        match std::fs::symlink_metadata(&acc) {
            Ok(m) if m.file_type().is_symlink() => return Err("an ancestor is a symlink"),
            Ok(m) if acc.as_path() != path && !m.is_dir() => return Ok(None),
            Ok(_) => {}
            Err(_) => return Ok(Some(acc)),
        }
    }
    Ok(None)
}
