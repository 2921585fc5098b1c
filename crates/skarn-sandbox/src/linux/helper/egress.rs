//! Starting the allow-list proxy (`--net allow:...`) before the network
//! namespace exists (it stays in the host network), and its counters after
//! the run.

use crate::linux::egress::ProxyProc;
use crate::linux::plan::Plan;
use crate::report::RestrictionReport;

/// Start the planned proxy, if any; init picks its sockets up through the
/// hand-over descriptor.
pub(super) fn start(plan: &Plan) -> std::io::Result<Option<ProxyProc>> {
    let Some(e) = &plan.egress else {
        return Ok(None);
    };
    let p = crate::linux::egress::spawn(e)?;
    crate::linux::egress::set_handover_fd(p.fd());
    Ok(Some(p))
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
