//! Planning part 6: the network. The namespace itself is decided with the
//! others ([`super::filesystem::namespaces`]), Landlock's TCP rules and
//! seccomp's socket filters by their parts; this part brings `lo` up,
//! plans the allow-list proxy and says in the report what each policy
//! means on this host.

use super::Namespaces;
use crate::policy::{NetPolicy, Policy};
use crate::report::RestrictionReport;

/// Policies that fall back to "no network" without a network namespace
/// (`AllowHosts` needs one for its proxy: without it nothing is reachable).
pub(super) fn closed_net(n: &NetPolicy) -> bool {
    matches!(n, NetPolicy::DenyAll | NetPolicy::AllowHosts(_))
}

/// Bring `lo` up in the new network namespace.
pub(super) fn loopback_up(policy: &Policy, ns: Namespaces) -> bool {
    ns.net
        && matches!(
            policy.net,
            NetPolicy::AllowLoopback | NetPolicy::AllowHosts(_)
        )
}

/// What the network policy means on this host, in the report.
pub(super) fn notes(
    policy: &Policy,
    ns: Namespaces,
    abi: u32,
    seccomp: bool,
    report: &mut RestrictionReport,
) {
    match policy.net {
        NetPolicy::DenyAll if ns.net => report
            .notes
            .push("net deny: empty network namespace (no interface, not even lo)".into()),
        NetPolicy::DenyAll => {
            if seccomp {
                report.degrade(
                    "net deny without a network namespace: IPv4/IPv6/packet sockets are refused \
                     by seccomp; abstract unix sockets are scoped by Landlock only if ABI >= 6",
                );
            } else if abi >= 4 {
                report.degrade(
                    "net deny without a network namespace or seccomp: only TCP is blocked \
                     (Landlock); UDP and raw sockets are NOT blocked",
                );
            } else {
                report.degrade("net deny could not be enforced: network is OPEN");
            }
        }
        NetPolicy::AllowLoopback if ns.net => report.notes.push(
            "net loopback: private network namespace with only lo up; 127.0.0.1 is the \
             sandbox's own loopback, never the host's"
                .into(),
        ),
        NetPolicy::AllowLoopback => report.degrade(
            "net loopback without a network namespace: degrades to the host network \
             (outbound allowed)",
        ),
        NetPolicy::AllowOutbound => {
            report.notes.push(
                "net outbound: host network; TCP bind denied by Landlock, listen(2) denied by \
                 seccomp"
                    .into(),
            );
            if abi < 4 {
                report.degrade("Landlock ABI < 4: TCP binds are not denied");
            }
            report.degrade(
                "net outbound: UDP sockets can still bind ports (Landlock has no UDP rules)",
            );
        }
        NetPolicy::AllowAll => report.notes.push(
            "net all: host network, unrestricted (abstract unix sockets outside the sandbox \
             stay unreachable)"
                .into(),
        ),
        // ---- egress (issue 11) ----
        NetPolicy::AllowHosts(_) => {
            crate::linux::plan::egress::plan_notes(&policy.net, ns.net, report)
        }
    }
}
