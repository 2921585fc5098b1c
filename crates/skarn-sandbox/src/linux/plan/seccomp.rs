//! Planning part 5: which seccomp filters the target installs on top of
//! the base deny-list ([`crate::linux::seccomp::DENY_LIST`]).

use super::network::closed_net;
use super::{Namespaces, SeccompPlan};
use crate::linux::host::HostFacts;
use crate::policy::{NetPolicy, Policy};
use crate::report::RestrictionReport;

/// The seccomp part (None when the host cannot install filters).
pub(super) fn plan(
    policy: &Policy,
    host: &HostFacts,
    ns: Namespaces,
    report: &mut RestrictionReport,
) -> Option<SeccompPlan> {
    if !host.seccomp {
        report.degrade(
            "seccomp unavailable: dangerous syscalls (ptrace, bpf, io_uring, ...) are not filtered",
        );
        return None;
    }
    Some(SeccompPlan {
        deny_inet_sockets: closed_net(&policy.net) && !ns.net,
        deny_listen: policy.net == NetPolicy::AllowOutbound,
        deny_tiocswinsz_on_host_tty: true,
    })
}
