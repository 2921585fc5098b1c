//! The report's per-layer entries (the kit's [`Enforcement`]): each stage
//! sends one for every layer it applies, right after applying it (the
//! helper for namespaces and cgroups, init for mounts and the network
//! namespace, the target for the rest). A layer is never reported as in
//! force from the plan alone: [`complete`] only adds `NotEnforced` entries
//! for layers nobody reported, saying why.

use skarn_confine::{Enforcement, Layer, Status};

use crate::linux::plan::{Plan, Rlimit};

/// Report order.
const ORDER: [Layer; 11] = [
    Layer::Namespaces,
    Layer::Mounts,
    Layer::Network,
    Layer::Cgroup,
    Layer::Rlimits,
    Layer::Capabilities,
    Layer::NoNewPrivs,
    Layer::Landlock,
    Layer::Seccomp,
    Layer::Descriptors,
    Layer::ParentDeath,
];

/// A layer that was to be applied but was never reported.
const NOT_REPORTED: &str = "not reported: set-up stopped before this layer";

/// The namespaces the helper unshared (`unshared` = the plan's kinds, all
/// made: the helper falls back to the plan without namespaces otherwise).
pub(super) fn namespaces(plan: &Plan) -> Enforcement {
    let ns = plan.ns;
    let kinds: Vec<&str> = [
        (ns.user, "user"),
        (ns.pid, "pid"),
        (ns.net, "net"),
        (ns.ipc, "ipc"),
        (ns.uts, "uts"),
    ]
    .into_iter()
    .filter_map(|(on, k)| on.then_some(k))
    .collect();
    let missing: Vec<&str> = [(ns.pid, "pid"), (ns.ipc, "ipc"), (ns.uts, "uts")]
        .into_iter()
        .filter_map(|(on, k)| (!on).then_some(k))
        .collect();
    if kinds.is_empty() {
        Enforcement::not_enforced(
            Layer::Namespaces,
            "none: host processes are visible (see notes)",
        )
    } else if missing.is_empty() {
        Enforcement::full(Layer::Namespaces, format!("new {}", kinds.join(", ")))
    } else {
        Enforcement::partial(
            Layer::Namespaces,
            format!("new {}; missing {}", kinds.join(", "), missing.join(", ")),
        )
    }
}

/// The network as init sees it in the new network namespace.
pub(super) fn network_in_namespace(plan: &Plan) -> Enforcement {
    let detail = match (&plan.egress, plan.loopback_up) {
        (Some(e), _) => format!(
            "private network namespace, lo up; out only through the proxy ({} allowed \
             pattern(s))",
            e.allow.len()
        ),
        (None, true) => "private network namespace, only lo up".to_string(),
        (None, false) => "empty network namespace (no interface, not even lo)".to_string(),
    };
    Enforcement::full(Layer::Network, detail)
}

/// The network without a network namespace, as the target sees it once
/// its filters are in force (`landlock_net`: the Landlock network part's
/// outcome; `seccomp`: the filters were installed).
pub(super) fn network_on_host(
    plan: &Plan,
    landlock_net: Option<Status>,
    seccomp: bool,
) -> Enforcement {
    let filters = plan.seccomp.filter(|_| seccomp);
    let tcp_rules = landlock_net == Some(Status::FullyEnforced);
    // The policy's name starts the plan's `net` line (`all (--net)`).
    let asked_all = plan.report.net.split(' ').next() == Some("all");
    match filters {
        Some(f) if f.deny_listen => Enforcement::partial(
            Layer::Network,
            format!(
                "host network; listen(2) refused by seccomp{}; UDP sockets can still bind",
                if tcp_rules {
                    ", TCP binds by Landlock"
                } else {
                    ""
                }
            ),
        ),
        Some(f) if f.deny_inet_sockets => Enforcement::partial(
            Layer::Network,
            "no network namespace: IPv4, IPv6 and packet sockets refused by seccomp",
        ),
        _ if asked_all => {
            Enforcement::full(Layer::Network, "host network, unrestricted (as asked)")
        }
        _ if tcp_rules => Enforcement::partial(
            Layer::Network,
            "no network namespace: only TCP is refused (Landlock)",
        ),
        _ => Enforcement::not_enforced(
            Layer::Network,
            "no network namespace: the host network is reachable",
        ),
    }
}

/// The rlimits the target set (`failed`: those the kernel refused).
pub(super) fn rlimits(applied: &[(Rlimit, u64)], failed: &[Rlimit]) -> Enforcement {
    let show = |(r, v): &(Rlimit, u64)| match r {
        Rlimit::Nproc => format!("nproc {v}"),
        Rlimit::Core => format!("core {v}"),
        Rlimit::Data => format!("data {} MiB", v >> 20),
        Rlimit::As => format!("as {} MiB", v >> 20),
        Rlimit::Fsize => format!("fsize {} MiB", v >> 20),
    };
    let set: Vec<String> = applied
        .iter()
        .filter(|(r, _)| !failed.contains(r))
        .map(show)
        .collect();
    if failed.is_empty() {
        Enforcement::full(Layer::Rlimits, set.join(", "))
    } else {
        let names: Vec<String> = failed.iter().map(|r| format!("{r:?}")).collect();
        let detail = format!("{}; NOT set: {}", set.join(", "), names.join(", "));
        if set.is_empty() {
            Enforcement::not_enforced(Layer::Rlimits, detail)
        } else {
            Enforcement::partial(Layer::Rlimits, detail)
        }
    }
}

/// Why a layer nobody reported is not in force.
fn missing(plan: &Plan, layer: Layer) -> Option<Enforcement> {
    let why = match layer {
        Layer::Mounts if !plan.ns.mount => {
            "no mount namespace: the host's file tree, limited by Landlock only"
        }
        Layer::Landlock if plan.landlock.is_none() => "unavailable on this host",
        Layer::Seccomp if plan.seccomp.is_none() => "unavailable on this host",
        // Not planned: the limits are rlimits (the `limit` lines say so).
        Layer::Cgroup if plan.cgroup.is_none() && plan.memory_cgroup.is_none() => return None,
        _ => NOT_REPORTED,
    };
    Some(Enforcement::not_enforced(layer, why))
}

/// The report's layer list: what the stages reported (the last word per
/// layer), plus a `NotEnforced` entry for each layer nobody reported, in
/// report order.
pub(super) fn complete(plan: &Plan, reported: Vec<Enforcement>) -> Vec<Enforcement> {
    ORDER
        .iter()
        .filter_map(|l| {
            reported
                .iter()
                .rev()
                .find(|e| e.layer == *l)
                .cloned()
                .or_else(|| missing(plan, *l))
        })
        .collect()
}

#[cfg(test)]
#[path = "layer_report_tests.rs"]
mod tests;
