//! The workspace's side of a run's set-up: its copy-on-write layer (or
//! the git layer of its `.git`), the reservation of what must not appear
//! on the host, and the unix-socket cut when the walk for sockets to hide
//! was cut short or raced another run.

use super::git_layer::{self, GitLayer};
use super::layer::{self, Cow};
use super::release::{self, Reserved};
use super::reserve::{self, ReserveNotes};
use super::{err_line, records};
use crate::linux::plan::Plan;
use crate::linux::sys;
use crate::report::RestrictionReport;

/// What the workspace's set-up leaves to the run.
pub(super) struct Workspace {
    pub(super) cow: Option<Cow>,
    pub(super) gitl: Option<GitLayer>,
    pub(super) reserved: Reserved,
    pub(super) rnotes: ReserveNotes,
}

/// Set the workspace up; `Err` when the run is refused (said on stderr,
/// the reservation released).
pub(super) fn set_up(
    plan: &Plan,
    runs: &records::Runs,
    report: &mut RestrictionReport,
) -> Result<Workspace, ()> {
    let mut rnotes = reserve::ReserveNotes::default();
    // The workspace as a copy-on-write layer (ADR 0130): nothing to
    // reserve on the host; the changes are vetted after the run.
    let mut cow = layer::start(plan, report);
    // Else the workspace's `.git` alone may be one (ADR 0181).
    let mut gitl = if cow.is_none() && plan.reservation.is_some() {
        git_layer::start(plan, report)
    } else {
        None
    };
    let mut reserved = match &plan.reservation {
        Some(r) => reserve::reserve(
            plan,
            r,
            &mut rnotes,
            cow.is_some(),
            &gitl.as_ref().map(|g| g.left_to_layer()).unwrap_or_default(),
        ),
        None => Reserved::nothing(plan.fs.clone(), plan.workspace.clone()),
    };
    if let Some(c) = cow.as_mut() {
        reserved.fs = c.take_steps(std::mem::take(&mut reserved.fs));
        c.protect_missing(&reserved.sweep);
        if rnotes.ws_walk_deferred {
            c.deferred = plan.reservation.clone();
        }
    }
    if let Some(g) = gitl.as_mut() {
        reserved.fs = g.take_steps(std::mem::take(&mut reserved.fs));
    }
    report.notes.append(&mut rnotes.info);
    // A run that began in an overlapping workspace while this one looked
    // for unix sockets to hide (attack atk24e F1; one already under way
    // was caught before the walk).
    if rnotes.walk_cut.is_none() && runs.another_is_live() {
        rnotes.walk_cut = Some(format!(
            "another skarn run in {} began while this run looked for unix sockets to hide, \
             and its command could have moved a host server's socket out of the way: unix \
             sockets are unavailable in this run (run the two one after the other to keep \
             them)",
            plan.workspace.display()
        ));
    }
    if let Some(line) = &rnotes.walk_cut {
        if plan.seccomp.is_none() && plan.fail_closed {
            // Nothing to refuse unix sockets with: a host server's socket
            // past the bound would be reachable.
            err_line(&crate::report::advice::for_caller(
                &format!(
                    "{line}; but seccomp is unavailable here, so unix sockets cannot be \
                     refused: the run is refused (--fail-open runs it with the socket reachable)"
                ),
                plan.caller,
            ));
            release::release(reserved);
            return Err(());
        }
        // Said whatever the report format: the user must know why unix
        // sockets fail and how to get them back.
        sys::write_fd(2, format!("skarn: warning: {line}\n").as_bytes());
        rnotes.degraded.push(line.clone());
    }
    Ok(Workspace {
        cow,
        gitl,
        reserved,
        rnotes,
    })
}
