//! Planning part 3b: the agent's pending edits (ADR 0244, attack atk24j
//! F7). Each path the hook's file guard allowed the agent's own file tool
//! to write, and whose lease is still pending
//! ([`crate::protect::edit_lease`]), is kept as it is when it lies in a
//! writable grant: read-only (a mount point, so it cannot be unlinked,
//! renamed or replaced by a link), reserved by a placeholder when missing
//! (nothing can be created at that name), and every directory on its way
//! from the grant's root pinned (a mount point cannot be renamed). The
//! tool then writes the file the guard judged.

use std::path::PathBuf;

use super::grants::Granted;
use super::{FsOp, Namespaces};
use crate::linux::host::HostFacts;
use crate::report::RestrictionReport;

/// The pending edits this run must hold: those inside its writable
/// grants. A grant's root itself is held too (read-only for the run): the
/// hook names a directory only as the place of a link the write passes
/// through, and a link cannot be bound over, so its directory is kept.
pub(super) fn paths(host: &HostFacts, g: &Granted) -> Vec<PathBuf> {
    host.pending_edits
        .iter()
        .filter(|p| g.writable(p).is_some())
        .cloned()
        .collect()
}

/// Add the holding steps to `protects` (an existing step for the same
/// path is made reserving); said in the report.
pub(super) fn hold(
    held: &[PathBuf],
    ns: Namespaces,
    protects: &mut Vec<FsOp>,
    report: &mut RestrictionReport,
) {
    if held.is_empty() {
        return;
    }
    let names = held
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if !ns.mount {
        report.degrade(format!(
            "the agent's file tool is about to write {names}: without a mount namespace this \
             run cannot keep it from being replaced by a link before that write"
        ));
        return;
    }
    report.notes.push(format!(
        "held as they are for a pending edit of the agent's file tools (read-only, reserved \
         when missing, the directories on the way pinned): {names}"
    ));
    for p in held {
        match protects
            .iter_mut()
            .find(|o| matches!(o, FsOp::Protect { path, .. } if path == p))
        {
            Some(FsOp::Protect { reserve, .. }) => *reserve = true,
            _ => protects.push(FsOp::Protect {
                path: p.clone(),
                reserve: true,
                reserve_if: Vec::new(),
            }),
        }
    }
}

/// The line printed when the command fails while edits are held.
pub fn failure_line(held: &[PathBuf]) -> Option<String> {
    held.first()?;
    let mut names: Vec<String> = held
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if held.len() > 3 {
        names.push(format!("{} more", held.len() - 3));
    }
    Some(format!(
        "skarn: sandbox: held read-only for this run: {}: a pending edit of the agent's file \
         tool holds each of these paths until the tool has written it or its lease expires \
         ([hook] edit_lease); run the command again after that",
        names.join(", ")
    ))
}
