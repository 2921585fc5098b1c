//! Persistence checks around the run, on the host: snapshots of the
//! protected files taken before the target starts (a host rename could
//! detach a read-only bind), and after the run the plan's
//! [`crate::plan::AfterRun`] checks (HEAD, new repositories, new dot
//! entries of a home workspace) and the snapshot comparison
//! ([`crate::lapse`]). Each finding is a warning and a degradation.

use std::path::PathBuf;

use crate::nested_git::HeadGuard;
use crate::plan::{FsOp, Plan};
use crate::report::RestrictionReport;
use crate::sys;

/// What was saved before the run.
pub(super) struct Before {
    snapshots: Vec<crate::lapse::Snapshot>,
    head: Option<HeadGuard>,
}

/// Save the state the checks after the run compare with (`fs`: the
/// resolved new-root steps).
pub(super) fn before(plan: &Plan, fs: &[FsOp]) -> Before {
    let protected: Vec<PathBuf> = fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Protect { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    Before {
        snapshots: crate::lapse::snapshot(&protected),
        head: plan
            .after_run
            .as_ref()
            .map(|_| HeadGuard::save(&plan.workspace)),
    }
}

/// Run the checks after the run (`nested`: repositories found by the
/// reservation step).
pub(super) fn after(
    plan: &Plan,
    saved: Before,
    nested: &[PathBuf],
    report: &mut RestrictionReport,
) {
    let run_id = std::process::id();
    let mut found = Vec::new();
    if let (Some(a), Some(head)) = (&plan.after_run, &saved.head) {
        found.extend(head.check());
        if let Some(q) = &a.quarantine_home {
            found.extend(crate::nested_git::quarantine_new_dot_entries(
                &q.home,
                &q.existing,
                run_id,
            ));
        }
        found.extend(crate::nested_git::vet_new(&a.vet_roots, nested, run_id));
    }
    found.extend(crate::lapse::check(&saved.snapshots, run_id));
    for w in found {
        sys::write_fd(2, format!("skarn: warning: {w}\n").as_bytes());
        report.degrade(w);
    }
}
