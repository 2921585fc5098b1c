//! Planning part 7: resource limits (timeout, memory, processes, file
//! size) and the mechanism enforcing each on this host.

use std::path::PathBuf;

use super::{MemoryCgroup, Namespaces, Rlimit};
use crate::linux::host::HostFacts;
use crate::policy::Policy;
use crate::report::{LimitReport, RestrictionReport};

/// The limits part of a plan.
pub(super) struct Limits {
    /// setrlimit values for the target.
    pub rlimits: Vec<(Rlimit, u64)>,
    /// pids cgroup parent and pids.max.
    pub cgroup: Option<(PathBuf, u64)>,
    /// Memory cgroup.
    pub memory_cgroup: Option<MemoryCgroup>,
    /// Size of each private tmpfs.
    pub tmpfs_bytes: Option<u64>,
    /// Wall-clock limit in milliseconds.
    pub timeout_ms: Option<u64>,
}

fn mib(v: u64) -> u64 {
    v.saturating_mul(1024 * 1024)
}

/// Plan the limits; one report line per limit.
pub(super) fn plan(
    policy: &Policy,
    host: &HostFacts,
    ns: Namespaces,
    report: &mut RestrictionReport,
) -> Limits {
    let l = &policy.limits;
    let mut out = Limits {
        rlimits: vec![(Rlimit::Core, 0)],
        cgroup: None,
        memory_cgroup: None,
        tmpfs_bytes: l.memory_mb.map(mib),
        timeout_ms: l.timeout_secs.map(|t| t.saturating_mul(1000)),
    };
    let mut limits = Vec::new();
    let mut lim = |name: &str, value: String, mech: &str| {
        limits.push(LimitReport {
            name: name.into(),
            value,
            mechanism: mech.into(),
            source: policy
                .sources
                .get(name)
                .cloned()
                .unwrap_or_else(|| "default".into()),
        });
    };
    match l.timeout_secs {
        Some(t) => lim(
            "timeout",
            format!("{t} s"),
            "helper timer, whole tree killed, exit 124",
        ),
        None => lim("timeout", "none".into(), "-"),
    }
    match l.memory_mb {
        Some(m) => {
            let bytes = mib(m);
            out.rlimits.push((Rlimit::Data, bytes));
            let fallback_as = crate::linux::memory::address_space_limit(bytes);
            if let Some(dir) = &host.cgroup_memory {
                out.memory_cgroup = Some(MemoryCgroup {
                    parent: dir.clone(),
                    bytes,
                    fallback_as,
                });
                lim(
                    "memory",
                    format!("{m} MiB"),
                    crate::linux::memory::MECH_CGROUP,
                );
            } else {
                out.rlimits.push((Rlimit::As, fallback_as));
                lim(
                    "memory",
                    format!("{m} MiB"),
                    &crate::linux::memory::mech_rlimit_as(bytes),
                );
                report
                    .notes
                    .push(crate::linux::memory::NOTE_NO_CGROUP.into());
            }
        }
        None => lim("memory", "none".into(), "-"),
    }
    match l.max_procs {
        Some(n) => {
            // `n` is what the command's own tree may have: the sandbox's
            // init is in the pids cgroup too, and in the user namespace
            // (which the helper unshared, so it counts as well).
            if let Some(dir) = &host.cgroup_pids {
                out.cgroup = Some((dir.clone(), n.saturating_add(1)));
                lim(
                    "max_procs",
                    n.to_string(),
                    "pids cgroup (plus one for init)",
                );
            } else if ns.user {
                out.rlimits.push((Rlimit::Nproc, n.saturating_add(2)));
                lim(
                    "max_procs",
                    n.to_string(),
                    "RLIMIT_NPROC in the user namespace (plus two: the helper and init)",
                );
            } else if host.uid == 0 {
                lim("max_procs", n.to_string(), "NOT ENFORCED");
                report.degrade(
                    "max_procs not enforced: root is exempt from RLIMIT_NPROC and no pids \
                     cgroup is writable",
                );
            } else {
                out.rlimits.push((Rlimit::Nproc, n));
                lim(
                    "max_procs",
                    n.to_string(),
                    "RLIMIT_NPROC (counts all of this uid's processes)",
                );
                report.notes.push(
                    "max_procs: without a user namespace RLIMIT_NPROC counts every process of \
                     this uid on the host"
                        .into(),
                );
            }
        }
        None => lim("max_procs", "none".into(), "-"),
    }
    match l.max_file_size_mb {
        Some(m) => {
            out.rlimits.push((Rlimit::Fsize, mib(m)));
            lim("max_file_size", format!("{m} MiB"), "RLIMIT_FSIZE");
        }
        None => lim("max_file_size", "none".into(), "-"),
    }
    report.limits = limits;
    out
}
