//! Starting the allow-list proxy (`--net allow:...`) before the network
//! namespace exists (it stays in the host network), and its counters after
//! the run.

use crate::linux::egress::ProxyProc;
use crate::linux::plan::Plan;
use crate::report::RestrictionReport;

/// Start the planned proxy, if any; init picks its sockets up through the
/// hand-over descriptor.
/// The caller's audit pipe (atk27h F4) goes to the proxy only: the
/// helper closes its copy here, before init (and so the command) is
/// forked, whether or not the proxy started.
pub(super) fn start(plan: &mut Plan) -> std::io::Result<Option<ProxyProc>> {
    let Some(e) = &mut plan.egress else {
        return Ok(None);
    };
    let r = crate::linux::egress::spawn(e);
    if let Some(a) = e.audit_fd.take() {
        // SAFETY: the number was inherited for the proxy, which has its
        // own copy now; nothing in the helper owns it.
        unsafe { libc::close(a) };
    }
    let p = r?;
    crate::linux::egress::set_handover_fd(p.fd());
    Ok(Some(p))
}

/// Keep the caller's audit pipe from any program the helper executes
/// before the proxy has it (call first thing).
pub(super) fn keep_audit_from_exec(plan: &Plan) {
    if let Some(a) = plan.egress.as_ref().and_then(|e| e.audit_fd) {
        // SAFETY: fcntl on an integer descriptor; EBADF is harmless.
        unsafe { libc::fcntl(a, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Stop the proxy and put its counters in the report.
pub(super) fn finish(proxy: Option<ProxyProc>, report: &mut RestrictionReport) {
    let Some(p) = proxy else { return };
    report.egress = p.finish();
    if report.egress.is_none() {
        report.degrade(
            "the network proxy's counters could not be read after the run: the allowed and \
             denied hosts of this run are not listed",
        );
    }
}
