//! The plan's steps split into the protections to resolve and the rest.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Op;
use crate::linux::plan::{Access, FsOp, Plan};
use crate::protect::placeholder::is_placeholder;

/// Split the plan's steps: the protections to resolve, the other steps,
/// and where the resolved ones go (the first protection's place).
pub(super) fn planned_ops(
    plan: &Plan,
    git: &Path,
    staged: bool,
    git_is_dir: bool,
    git_link: Option<(&Path, &[PathBuf])>,
) -> (Vec<Op>, Vec<FsOp>, Option<usize>) {
    let mut ops: Vec<Op> = Vec::new();
    let mut out = Vec::new();
    let mut at = None;
    // (Families of names share one answer: each path is looked at once.)
    let mut exists: HashMap<PathBuf, bool> = HashMap::new();
    for op in &plan.fs {
        let (path, reserve, reserve_if) = match op {
            FsOp::Protect {
                path,
                reserve,
                reserve_if,
            } => (path, reserve, reserve_if.as_slice()),
            FsOp::Mask {
                path,
                reserve: true,
                ..
            } => {
                // A secret under a writable grant: reserved when missing.
                at.get_or_insert(out.len());
                ops.push((path.clone(), true, true));
                continue;
            }
            // A pin through a `.git` link: the protection of where it
            // leads pins that place's own parents (see mounts).
            FsOp::Pin { path } if git_link.is_some() && path.starts_with(git) => continue,
            _ => {
                out.push(op.clone());
                continue;
            }
        };
        at.get_or_insert(out.len());
        let reserve = *reserve
            || reserve_if.iter().any(|p| {
                // Another run's placeholder is not the tool's file: it
                // must not make this run reserve (and leave) more names.
                *exists.entry(p.clone()).or_insert_with(|| {
                    std::fs::symlink_metadata(p).is_ok() && is_placeholder(p).is_none()
                })
            });
        if path.starts_with(git) && path != git {
            if staged {
                continue; // staged: vetted after the run
            }
            if !git_is_dir {
                // .git missing (no stage), a gitdir file or a link:
                // protect .git itself.
                if !ops.iter().any(|(p, _, _)| p == git) {
                    ops.push((git.to_path_buf(), true, false));
                }
                // A link: the same entries where it leads (a place outside
                // the writable grants is read-only already).
                if let (Some((real, writable)), Ok(rest)) = (git_link, path.strip_prefix(git)) {
                    let p = real.join(rest);
                    if writable.iter().any(|w| p.starts_with(w)) {
                        ops.push((p, reserve, false));
                    }
                }
                continue;
            }
        }
        ops.push((path.clone(), reserve, false));
    }
    (ops, out, at)
}

/// Whether the workspace `ws`, a copy-on-write layer, shows only what the
/// layer shows: no step puts a host directory or file strictly inside it
/// (a bind of another grant, a store, a stage), so a host server's unix
/// socket there is reachable through no name (overlayfs does not connect
/// to a lower layer's socket: ADR 0259). (A pin or a protection binds the
/// new root's own view of its path onto itself: the layer's.)
pub(in crate::linux::helper) fn layer_covers(fs: &[FsOp], ws: &Path) -> bool {
    !fs.iter().any(|op| {
        let p = match op {
            FsOp::Bind { path, .. }
            | FsOp::IdmapBind { path, .. }
            | FsOp::Home { path }
            | FsOp::Store { path, .. }
            | FsOp::Stage { path, .. } => path,
            _ => return false,
        };
        let absorbed = matches!(
            op,
            FsOp::Bind {
                access: Access::ReadWrite,
                ..
            }
        ) && super::super::absorb::absorbed(ws, p);
        p != ws && p.starts_with(ws) && !absorbed
    })
}
