//! The end of a run, once the command has stopped: the host terminal put
//! back, what the command left in its cgroup killed, the layers' changes
//! vetted and applied, the persistence checks, the proxy stopped, the
//! reservation released, and the exit status decided (a plant that could
//! not be set aside fails the run).

use std::path::PathBuf;

use super::cgroup::CgroupSetup;
use super::git_layer::{self, GitLayer};
use super::layer::{self, Cow};
use super::persistence::{self, Before};
use super::release::{self, Reserved};
use super::supervision::{self, Outcome};
use super::{EXIT_SETUP, egress, err_line, host_tmp};
use crate::linux::egress::ProxyProc;
use crate::linux::plan::AfterRun;
use crate::linux::terminal;
use crate::protect::run_record::Held;
use crate::report::RestrictionReport;

/// What the helper holds while the command runs and must settle after.
pub(super) struct Ending {
    pub(super) tty: terminal::Saved,
    pub(super) cgroup: CgroupSetup,
    pub(super) git_layer: Option<GitLayer>,
    pub(super) saved: Option<Before>,
    pub(super) cow: Option<Cow>,
    pub(super) others: Option<AfterRun>,
    pub(super) reserved: Reserved,
    pub(super) record: Option<Held>,
    pub(super) proxy: Option<ProxyProc>,
    pub(super) host_tmp: Option<PathBuf>,
    /// The helper's own gaps, said in the report.
    pub(super) degraded: Vec<String>,
}

impl Ending {
    /// Settle everything and return the run's exit status.
    pub(super) fn end(
        mut self,
        plan: &crate::linux::plan::Plan,
        mut report: RestrictionReport,
        out: Outcome,
    ) -> i32 {
        let restored = self.tty.any().then(|| self.tty.restore());
        // Without a PID namespace, what the command left running (a daemon in
        // its own session) is still in the run's cgroup: killed before the
        // check, so that nothing sandboxed outlives the run.
        if let Some(c) = &self.cgroup.cgroup {
            c.kill_all();
        }
        // The git layer first: the checks after the run see what it applied.
        if let Some(g) = self.git_layer.take() {
            git_layer::finish(g, &mut report);
        }
        match (self.saved, self.cow) {
            (Some(saved), Some(c)) => {
                layer::finish(c, &mut report);
                if let Some(o) = &self.others {
                    persistence::after_layered(o, saved, &self.reserved.nested, &mut report);
                }
            }
            (Some(saved), None) => {
                persistence::after(plan, saved, &self.reserved.nested, &mut report)
            }
            (None, Some(c)) => layer::finish(c, &mut report),
            (None, None) => {}
        }
        if let Some(h) = self.record.take() {
            h.finish();
        }
        if let Some(n) = restored {
            report.notes.push(if n > 0 {
                format!(
                    "host terminal settings changed by the command were restored on {n} descriptor(s)"
                )
            } else {
                "host terminal inherited: its settings are restored after the run; TIOCSWINSZ refused"
                    .into()
            });
        }
        if let Some(c) = &self.cgroup.cgroup {
            c.remove_once(); // the reaper removes what is still busy
        }
        drop(self.cgroup);
        egress::finish(self.proxy, &mut report);
        release::release(self.reserved);
        if let Some(t) = &self.host_tmp {
            host_tmp::remove(t);
        }
        let code = supervision::finish(plan, report, out, self.degraded);
        let left = crate::protect::set_aside::left_in_place();
        if left > 0 {
            // Never a plant kept with only a warning (attack 24 F14).
            err_line(&format!(
                "{left} entries the command made could be neither set aside nor removed after the \
                 run (named in the warnings above): review them before using that directory"
            ));
            return if code == 0 { EXIT_SETUP } else { code };
        }
        if crate::protect::git::nested_git::check_incomplete() {
            // Never a plant kept with only a warning (attack atk24c F2).
            err_line(
                "the check after the run could not finish (named in the warnings above): the run \
                 counts as failed; review the workspace before running git or other tools there",
            );
            return if code == 0 { EXIT_SETUP } else { code };
        }
        code
    }
}
