//! The reservation step ([`crate::linux::plan::Reservation`]): before any
//! namespace exists, look at the workspace's persistence paths on the host
//! and turn the plan's `Protect` and reserving `Mask` steps into the steps
//! init mounts. Existing paths are bound read-only by init; missing
//! reserved ones get a placeholder ([`crate::protect::placeholder`], covered
//! read-only, removed after the run) so they cannot be created during it.
//! The git directory follows git's effective layout and configuration
//! ([`crate::protect::git::git_vet`]); a missing `.git` is staged ([`crate::linux::staging`]).

use std::path::{Path, PathBuf};

use super::release::{Reserved, open_dir};
use super::ws_entries::WsEntries;
use crate::linux::plan::{FsOp, Plan, Reservation};

mod host_sockets;
mod nested;
mod planned;
mod resolve;
mod socket_identity;
mod socket_places;

use nested::nested_repos;
pub(super) use planned::layer_covers;
use planned::planned_ops;
use resolve::{Resolved, resolve, through_links};

/// Messages of the reservation step.
#[derive(Default)]
pub(super) struct ReserveNotes {
    /// Report notes (status unchanged), added at once.
    pub(super) info: Vec<String>,
    /// Gaps (lower the status), added after the run.
    pub(super) degraded: Vec<String>,
    /// The walk of the writable grants did not cover them all: why, and
    /// what the run loses (no unix socket; ADR 0204).
    pub(super) walk_cut: Option<String>,
    /// The walk stopped before it reached every ordinary directory: a
    /// repository it did not find is vetted after the run only when
    /// changed during it.
    pub(super) repos_cut: bool,
    /// The unix sockets the walk found, with their (device, inode).
    pub(super) socket_pins: Vec<(PathBuf, (u64, u64))>,
    /// The workspace, a copy-on-write layer, was not walked before the
    /// run (ADR 0259): what only that walk finds is looked for when the
    /// layer is applied, if it changes anything ([`workspace_protections`]).
    pub(super) ws_walk_deferred: bool,
}

/// One protection to resolve: path, reserve when missing, is a mask.
type Op = (PathBuf, bool, bool);

/// Run the reservation step: the steps init mounts, and what to undo after
/// the run. With `git_layer` (the workspace's `.git`, a copy-on-write
/// layer of its own, ADR 0181) nothing inside it is reserved or bound.
/// With `layered` (the workspace is a copy-on-write layer, ADR
/// 0130) nothing is made on the host: no placeholder, empty file or stage
/// (what the run creates is vetted before it reaches the workspace); the
/// existing protected paths, other names of protected places and sockets
/// are resolved as always.
pub(super) fn reserve(
    plan: &Plan,
    r: &Reservation,
    notes: &mut ReserveNotes,
    layered: bool,
    git_layer: &[PathBuf],
) -> Reserved {
    let ws = r.workspace.clone();
    let lock_fd = open_dir(&ws).unwrap_or(-1);
    if lock_fd >= 0 && other_run_in(&ws) {
        // Another run in this workspace (each holds the workspace's lock
        // shared) can rename directories while this one walks and mounts:
        // a host server's socket could move out from under the hiding
        // (attack atk24e F1). This run then makes no unix socket.
        notes.walk_cut.get_or_insert_with(|| {
            format!(
                "another skarn run in {} is under way, and its command could move a host \
                 server's unix socket while this run hides them: unix sockets are unavailable \
                 in this run (run the two one after the other to keep them)",
                ws.display()
            )
        });
    }
    if lock_fd >= 0 {
        // SAFETY: lock_fd is open. Blocks only while another run removes
        // its placeholders.
        unsafe { libc::flock(lock_fd, libc::LOCK_SH) };
    }
    let git = &r.git;
    let git_md = std::fs::symlink_metadata(git).ok();
    let unborn = git_md.is_none() || crate::linux::staging::is_unborn(git);
    let stage = if unborn && !layered {
        match crate::linux::staging::prepare(&ws) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.degraded.push(format!(
                    "could not stage a new .git ({e}); .git is reserved instead"
                ));
                None
            }
        }
    } else {
        None
    };
    let git_is_dir = git_md.as_ref().is_some_and(|m| m.is_dir());
    // A `.git` that is a symbolic link to the git directory (atk24l F7):
    // its entries are protected where they are.
    let git_link = git_md
        .as_ref()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::canonicalize(git).ok())
        .filter(|r| r.is_dir());
    let (mut ops, mut out, at) = planned_ops(
        plan,
        git,
        stage.is_some(),
        git_is_dir,
        git_link.as_deref().map(|l| (l, r.nested_roots.as_slice())),
    );
    let mut empty_kind = r.empty_files.clone();
    // (Only when the workspace is the one writable grant walked: a nested
    // repository's configuration may name a file in another grant, which
    // the run writes directly, so it must be known before the run.)
    let defer =
        layered && layer_covers(&plan.fs, &ws) && r.nested_roots.iter().all(|p| *p == r.workspace);
    let mut pins = Vec::new();
    let nested = nested_repos(r, &mut ops, &mut empty_kind, notes, defer, &mut pins);
    // Host servers' sockets in every grant, read ones included, from the
    // kernel's list (no walk).
    host_sockets::hide(&plan.fs, &mut ops, notes);
    // Linked worktrees' own git directories (`.git/worktrees/<name>/`):
    // their `config.worktree` (read with extensions.worktreeConfig; an
    // empty one is harmless) and `commondir`, `gitdir` (where host git in
    // that worktree goes for hooks and configuration).
    if let Ok(rd) = std::fs::read_dir(r.git.join("worktrees")) {
        for e in rd.flatten().take(256) {
            let d = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            empty_kind.push(d.join("config.worktree"));
            ops.push((d.join("config.worktree"), true, false));
            for f in ["commondir", "gitdir"] {
                ops.push((d.join(f), false, false));
            }
        }
    }
    // A missing `objects/info/alternates` is reserved as an empty file:
    // git reads it on every object lookup, and an empty one is "no
    // alternates" where an unreadable placeholder makes git warn.
    for (p, _, _) in &ops {
        if p.ends_with("objects/info/alternates") {
            empty_kind.push(p.clone());
        }
    }
    if stage.is_none() {
        let guards =
            crate::protect::git::git_vet::guards(&ws, &r.nested_roots, r.git_home.as_deref());
        let mut extra = Vec::new();
        for g in guards {
            if g.empty_file {
                empty_kind.push(g.path.clone());
            }
            match ops.iter_mut().find(|(p, _, _)| *p == g.path) {
                Some(o) => o.1 |= g.reserve,
                None => {
                    extra.push(g.path.display().to_string());
                    ops.push((g.path, g.reserve, false));
                }
            }
        }
        if !extra.is_empty() {
            notes.info.push(format!(
                "read-only as named by the effective git configuration: {}",
                extra.join(", ")
            ));
        }
    }
    // The workspace's `.git` is a copy-on-write layer of its own (ADR
    // 0181): nothing is reserved or bound read-only in it, every change is
    // vetted before it reaches the repository.
    ops.retain(|(p, _, _)| !git_layer.iter().any(|g| p.starts_with(g)));
    through_links(&mut ops, &r.nested_roots);
    let mut done = Resolved {
        layered,
        ws: ws.clone(),
        // Listed here, right before the names are resolved: a name the
        // host removes after this is caught by init (see mounts), one it
        // creates is still protected by the bind of the existing path.
        entries: Some(WsEntries::read(&ws)),
        // The workspace is a directory when its lock could be opened:
        // searches for a missing component start there, not at `/`.
        known_dir: (lock_fd >= 0).then(|| ws.clone()),
        ..Resolved::default()
    };
    // (Pins first: a protection below a pinned directory is mounted on
    // the pin, not hidden by it.)
    done.steps
        .extend(pins.into_iter().map(|path| FsOp::Pin { path }));
    for op in ops {
        resolve(op, &empty_kind, &mut done, notes);
    }
    for step in done.steps.iter_mut() {
        if let FsOp::Mask { path, pin, .. } = step
            && let Some((_, id)) = notes.socket_pins.iter().find(|(p, _)| p == path)
        {
            *pin = Some(*id);
        }
    }
    if let Some(s) = &stage {
        done.steps.push(FsOp::Stage {
            path: git.clone(),
            from: s.clone(),
        });
        notes.info.push(
            "the workspace has no .git: a repository created by the command is staged and \
             moved into place after the run without hooks or code-running configuration"
                .into(),
        );
    }
    if !done.placeholders.is_empty() {
        notes.info.push(format!(
            "{} missing persistence paths are reserved during the run by placeholders \
             (unreadable socket inodes, removed afterwards)",
            done.placeholders.len()
        ));
    }
    let at = at.unwrap_or(out.len());
    out.splice(at..at, done.steps);
    Reserved {
        fs: out,
        lock_fd,
        paths: done.placeholders,
        sweep: done.sweep,
        git_was_missing: layered && git_md.is_none(),
        stage,
        ws,
        absent: done.absent,
        empties: done.empties,
        nested,
    }
}

/// The protected paths of the workspace that only its walk finds (nested
/// repositories' files, what their configuration and a nested `.envrc`
/// name, settings and files read in any directory), for vetting a layer
/// whose walk was deferred (ADR 0259): the existing ones and the missing
/// ones the direct mode reserves; and a line when the walk stopped at its
/// bound.
pub(super) fn workspace_protections(r: &Reservation) -> (Vec<PathBuf>, Option<String>) {
    let mut only_ws = r.clone();
    only_ws.nested_roots = vec![r.workspace.clone()];
    let (mut ops, mut empty_kind) = (Vec::new(), Vec::new());
    let mut notes = ReserveNotes::default();
    nested_repos(
        &only_ws,
        &mut ops,
        &mut empty_kind,
        &mut notes,
        false,
        &mut Vec::new(),
    );
    through_links(&mut ops, &only_ws.nested_roots);
    let paths = ops
        .into_iter()
        .filter(|(p, reserve, mask)| !mask && (*reserve || std::fs::symlink_metadata(p).is_ok()))
        .map(|(p, _, _)| p)
        .collect();
    let cut = notes.repos_cut.then(|| {
        "the walk of the workspace for the protections of its nested repositories and \
         settings stopped at its bound before the run's changes were applied: changes past \
         it were vetted by their names only; raise it with --walk-max-dirs or [run] \
         walk_max_dirs"
            .to_string()
    });
    (paths, cut)
}

/// Whether another run holds the workspace `ws`'s lock (every run holds it
/// shared for its whole life): an exclusive lock on a fresh descriptor is
/// refused then.
fn other_run_in(ws: &Path) -> bool {
    let Some(fd) = open_dir(ws) else {
        return false;
    };
    // SAFETY: fd is open and ours.
    let held = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK);
    // SAFETY: fd is open and ours; closing it releases a lock taken.
    unsafe { libc::close(fd) };
    held
}
