//! The [`RestrictionReport`] of a Seatbelt run: what macOS enforces for the
//! policy, and every way that differs from what the policy asks.

use super::facts::MacFacts;
use super::profile::{protected_paths, secret_paths};
use crate::policy::{NetPolicy, Policy};
use crate::report::{
    Backend, ConfinementLayer as Layer, Enforcement, GrantReport, LimitReport, RestrictionReport,
    Status,
};

/// The report for `policy` run under the Seatbelt profile made from
/// `facts`. Pure: the launcher adds what happens at run time.
pub fn report(policy: &Policy, facts: &MacFacts) -> RestrictionReport {
    let mut r = RestrictionReport {
        backend: Backend::Seatbelt,
        status: Status::FullyEnforced,
        notes: Vec::new(),
        net: policy.net.as_str().into(),
        grants: Vec::new(),
        limits: Vec::new(),
        removed_env: Vec::new(),
        landlock_abi: 0,
        egress: None,
        provenance: Default::default(),
        layers: Vec::new(),
        workspace_changes: None,
        denied: Vec::new(),
    };
    let mut grant = |path: &std::path::Path, access: &str, source: &str| {
        r.grants.push(GrantReport {
            path: path.display().to_string(),
            access: access.into(),
            source: source.into(),
        })
    };
    grant(&policy.workspace, "read-write", "workspace");
    grant(
        &facts.run_temp,
        "read-write",
        "per-run temporary directory ($TMPDIR)",
    );
    for g in &policy.write {
        grant(&g.path, "read-write", &g.source);
    }
    for g in policy.read.iter().chain(&policy.exec) {
        grant(&g.path, "read (all reads are allowed)", &g.source);
    }
    for g in &policy.overlay {
        grant(&g.path, "read-only (no overlay on macOS)", &g.source);
    }
    for p in protected_paths(policy, facts) {
        grant(&p, "read-only (persistence)", "default");
    }
    let explicit: Vec<_> = policy.deny_read.iter().map(|g| g.path.clone()).collect();
    for p in secret_paths(policy, facts.home.as_deref()) {
        if explicit.contains(&p) {
            let src = policy
                .deny_read
                .iter()
                .find(|g| g.path == p)
                .map_or("--deny-read", |g| g.source.as_str());
            grant(&p, "deny", src);
        } else {
            grant(&p, "deny", "default (secret)");
        }
    }
    for p in &facts.secret_link_targets {
        grant(p, "deny", "target of a link inside a secret path");
    }

    r.degrade(
        "reads: coarse on macOS: every file the user can read is readable except the secret \
         deny list (case-insensitive, under every name); the robust guarantees are no writes \
         outside the writable roots and the network policy",
    );
    if !policy.overlay.is_empty() {
        r.degrade("overlay grants: no copy-on-write layer on macOS; they are read-only");
    }
    if policy.private_home {
        r.notes.push(
            "home: no private home on macOS; the real home is readable (minus secrets) and \
             not writable"
                .into(),
        );
    }
    match &policy.net {
        NetPolicy::DenyAll => r
            .notes
            .push("net deny: no IP traffic; unix sockets only under the writable roots".into()),
        NetPolicy::AllowLoopback => r.notes.push(
            "net loopback: Seatbelt allows IP only to and from localhost; the loopback is the \
             host's, so services listening there are reachable"
                .into(),
        ),
        NetPolicy::AllowOutbound => r.notes.push(
            "net outbound: connections to any host (including the host's loopback); no \
             listening IP socket; unix sockets only under the writable roots and the DNS daemon's"
                .into(),
        ),
        NetPolicy::AllowAll => r
            .notes
            .push("net all: any IP traffic; unix sockets only under the writable roots".into()),
        NetPolicy::AllowHosts(_) => match facts.proxy_ports {
            Some(_) => r.notes.push(
                "net allow: IP only to the egress proxy on loopback, which connects to the \
                 allowed hosts; the system's certificate daemons are not reachable (tools that \
                 verify TLS through Security.framework fail; those with their own CA bundle work)"
                    .into(),
            ),
            None => r.degrade("net allow: no egress proxy could be started; treated as deny"),
        },
    }
    r.notes.push(
        "processes: a new session and process group; no process information or signals \
         outside the sandbox; set-id bits never written"
            .into(),
    );

    let l = &policy.limits;
    let src = |k: &str| {
        policy
            .sources
            .get(k)
            .cloned()
            .unwrap_or_else(|| "default".into())
    };
    let mut lim = |name: &str, value: String, mech: &str| {
        r.limits.push(LimitReport {
            name: name.into(),
            value,
            mechanism: mech.into(),
            source: src(name),
        })
    };
    let none = || "none".to_string();
    lim(
        "timeout",
        l.timeout_secs.map_or_else(none, |t| format!("{t} s")),
        "process group killed, exit 124",
    );
    lim(
        "memory",
        l.memory_mb.map_or_else(none, |m| format!("{m} MiB")),
        "RLIMIT_DATA + RLIMIT_AS (not enforced by macOS for mapped memory)",
    );
    lim(
        "max_procs",
        l.max_procs.map_or_else(none, |n| n.to_string()),
        "RLIMIT_NPROC (counts all of the user's processes)",
    );
    lim(
        "max_file_size",
        l.max_file_size_mb.map_or_else(none, |m| format!("{m} MiB")),
        "RLIMIT_FSIZE",
    );
    if l.memory_mb.is_some() {
        r.degrade("memory: macOS does not enforce RLIMIT_DATA/RLIMIT_AS for mapped memory");
    }
    if l.timeout_secs.is_some() {
        r.notes.push(
            "timeout: kills the command's process group; a process that starts its own \
             session escapes the kill (it stays confined)"
                .into(),
        );
    }
    r
}

/// The report's layers once `sandbox-exec` was started with the profile
/// and the launcher's `pre_exec` succeeded (`clamped`: some limit was
/// lowered to the hard limit in force). Only what the launcher saw
/// happen: `sandbox-exec` runs the command only after applying the
/// profile, and a failing `setrlimit` or `fcntl` fails the spawn.
pub fn layers(policy: &Policy, clamped: bool) -> Vec<Enforcement> {
    let l = &policy.limits;
    let mut set = vec!["core 0".to_string()];
    if let Some(m) = l.memory_mb {
        set.push(format!(
            "data and as {m} MiB (not enforced by macOS for mapped memory)"
        ));
    }
    if let Some(n) = l.max_procs {
        set.push(format!("nproc {n} (all of the user's processes)"));
    }
    if let Some(f) = l.max_file_size_mb {
        set.push(format!("fsize {f} MiB"));
    }
    if clamped {
        set.push("some lowered to the hard limit in force".into());
    }
    let rlimits = if l.memory_mb.is_some() || clamped {
        Enforcement::partial(Layer::Rlimits, set.join(", "))
    } else {
        Enforcement::full(Layer::Rlimits, set.join(", "))
    };
    vec![
        Enforcement::partial(
            Layer::Seatbelt,
            format!(
                "profile applied by sandbox-exec before the command started; net {}; reads \
                 are coarse (everything the user can read but the secrets)",
                policy.net.as_str()
            ),
        ),
        rlimits,
        Enforcement::full(
            Layer::Descriptors,
            "every descriptor above 2 closed on exec",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_say_what_macos_leaves_out() {
        let mut p = Policy::new("/ws");
        p.limits.memory_mb = None;
        p.limits.max_procs = Some(64);
        let l = layers(&p, false);
        let names: Vec<Layer> = l.iter().map(|e| e.layer).collect();
        assert_eq!(names, [Layer::Seatbelt, Layer::Rlimits, Layer::Descriptors]);
        assert_eq!(l[0].status, Status::PartiallyEnforced, "reads are coarse");
        assert_eq!(l[1].status, Status::FullyEnforced);
        assert!(l[1].detail.contains("nproc 64"), "{}", l[1].detail);
        p.limits.memory_mb = Some(512);
        assert_eq!(layers(&p, false)[1].status, Status::PartiallyEnforced);
        p.limits.memory_mb = None;
        assert_eq!(layers(&p, true)[1].status, Status::PartiallyEnforced);
    }
}
