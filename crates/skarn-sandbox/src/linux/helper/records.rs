//! This run's record among the runs in progress (ADR 0145,
//! [`crate::protect::run_record`]): what runs killed before their check
//! after the run left is checked first, then this run's record is made,
//! and other live runs over the same places are looked for — before the
//! walk (their plants are never taken for the user's files, attack 24c
//! F4) and after it (one that began meanwhile could have moved a host
//! server's socket out of the walk's way, attack atk24e F1).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{dead_runs, persistence};
use crate::linux::plan::Plan;
use crate::protect::run_record::{Held, Info, live_since_except, new_paths};
use crate::report::RestrictionReport;

/// The run records this run looks at.
pub(super) struct Runs {
    dir: Option<PathBuf>,
    own: Option<PathBuf>,
    roots: Vec<PathBuf>,
    dead: HashSet<PathBuf>,
}

impl Runs {
    /// Catch up dead runs over this run's places, record this run (its
    /// record, held until the check after the run), and note when
    /// another live run's changes began.
    pub(super) fn start(plan: &Plan, report: &mut RestrictionReport) -> (Runs, Option<Held>) {
        let roots = record_roots(plan);
        let mut runs = Runs {
            dir: plan.runs_dir.clone(),
            own: None,
            roots,
            dead: HashSet::new(),
        };
        let Some(dir) = &plan.runs_dir else {
            return (runs, None);
        };
        let roots = &runs.roots;
        let mut keep = crate::protect::run_record::Retention::default();
        if let Some(age) = plan.state_keep {
            keep.age = age;
        }
        let (found, dead) = dead_runs::catch_up_noting_dead(dir, &|i| i.overlaps(roots), keep);
        for w in found {
            persistence::tell(&w, report);
        }
        let (run, vet) = new_paths(dir);
        let info = Info {
            workspace: plan.workspace.clone(),
            roots: runs.roots.clone(),
            pid: std::process::id(),
        };
        let held = match Held::start(&run, &vet, &info) {
            Ok(h) => Some(h),
            Err(e) => {
                report.notes.push(format!(
                    "could not record the run in {} ({e}): a check after the run cut short by \
                     a kill is not caught up later, and the file guard of `skarn hook` does \
                     not see this run",
                    dir.display()
                ));
                None
            }
        };
        runs.own = held.as_ref().map(|h| h.path().to_path_buf());
        runs.dead = dead;
        // Files changed since another live run here started may be its
        // plants: never snapshotted as the user's (attack 24c F4).
        crate::linux::lapse::other_runs_since(runs.live_since());
        (runs, held)
    }

    /// A path the agent's file tool was allowed to write after this run
    /// was planned (so the plan does not hold it) and before its record
    /// existed (so the guard did not see it): the run must not start
    /// (ADR 0244). The guard records its lease before it looks for live
    /// runs, and this is read after the record is made: one of the two
    /// sees the other.
    pub(super) fn edit_since_planned(&self, plan: &Plan) -> Option<PathBuf> {
        // `<home>/.local/state/skarn/runs` -> `.../skarn/edits`.
        let runs = self.dir.as_ref()?;
        self.own.as_ref()?;
        let edits = runs
            .parent()?
            .join(Path::new(crate::protect::edit_lease::DIR).file_name()?);
        let (now, _) = crate::protect::edit_lease::pending_in(&edits);
        now.into_iter().find(|p| {
            !plan.pending_edits.contains(p) && self.roots.iter().any(|r| p.starts_with(r))
        })
    }

    /// When the earliest other live run over this run's places began.
    fn live_since(&self) -> Option<std::time::SystemTime> {
        let dir = self.dir.as_ref()?;
        live_since_except(dir, self.own.as_deref(), &self.roots, &self.dead)
    }

    /// Whether another run over this run's places is live now.
    pub(super) fn another_is_live(&self) -> bool {
        self.live_since().is_some()
    }
}

/// Where the run's sandboxed commands can write, for its record: the
/// writable grants the check after the run vets (without a mount
/// namespace, the Landlock rules' writable host paths), and the workspace.
fn record_roots(plan: &Plan) -> Vec<PathBuf> {
    let mut roots: Vec<_> = plan
        .after_run
        .as_ref()
        .map(|a| a.vet_roots.clone())
        .unwrap_or_default();
    if !plan.ns.mount
        && let Some(l) = &plan.landlock
    {
        roots.extend(
            l.rules
                .iter()
                .filter(|r| r.access == crate::linux::plan::LandlockAccess::ReadWrite)
                .map(|r| r.path.clone()),
        );
    }
    if !roots.contains(&plan.workspace) {
        roots.push(plan.workspace.clone());
    }
    roots
}
