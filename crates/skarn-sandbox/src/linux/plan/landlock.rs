//! Planning part 4: the Landlock allow-list (the same grants as the new
//! root, plus /proc, the devices and the private directories), its network
//! rules and scopes, and the notes for older ABIs.

use std::path::PathBuf;

use super::grants::Granted;
use super::network::closed_net;
use super::{Access, LandlockAccess, LandlockPlan, LandlockRule, Namespaces};
use crate::policy::{NetPolicy, Policy};
use crate::report::RestrictionReport;

/// Device nodes of the minimal /dev.
const DEVICES: [&str; 8] = [
    "null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts",
];

/// The Landlock part (None when the kernel offers no Landlock).
pub(super) fn plan(
    policy: &Policy,
    abi: u32,
    g: &Granted,
    ns: Namespaces,
    home: Option<&PathBuf>,
    report: &mut RestrictionReport,
) -> Option<LandlockPlan> {
    let landlock = if abi > 0 {
        Some(LandlockPlan {
            rules: rules(g, ns, home),
            secrets: if ns.mount {
                Vec::new()
            } else {
                g.secrets.iter().map(|(s, _)| s.clone()).collect()
            },
            deny_tcp_bind: abi >= 4
                && (policy.net == NetPolicy::AllowOutbound || (closed_net(&policy.net) && !ns.net)),
            deny_tcp_connect: abi >= 4 && closed_net(&policy.net) && !ns.net,
            scope_signal: abi >= 6,
            scope_abstract_unix: abi >= 6,
        })
    } else {
        report.degrade("Landlock unavailable: no filesystem allow-list beyond the mount namespace");
        None
    };
    if abi > 0 && abi < 6 {
        report.degrade(format!(
            "Landlock ABI {abi} < 6: no signal or abstract-unix-socket scoping \
             (the PID and network namespaces still isolate them)"
        ));
    }
    if abi > 0 && abi < 5 {
        report.degrade(format!(
            "Landlock ABI {abi} < 5: device ioctls are not restricted"
        ));
    }
    if abi > 0 && abi < 3 {
        report.degrade(format!(
            "Landlock ABI {abi} < 3: truncate is not restricted"
        ));
    }
    landlock
}

fn rule(path: impl Into<PathBuf>, access: LandlockAccess) -> LandlockRule {
    LandlockRule {
        path: path.into(),
        access,
    }
}

fn rules(g: &Granted, ns: Namespaces, home: Option<&PathBuf>) -> Vec<LandlockRule> {
    let mut rules = Vec::new();
    if ns.mount {
        // Only granted paths exist in the new root; listing / is harmless.
        rules.push(rule("/", LandlockAccess::ListOnly));
    }
    for (p, a, _) in &g.binds {
        rules.push(rule(
            p.clone(),
            match a {
                Access::Read => LandlockAccess::Read,
                Access::ReadExec => LandlockAccess::ReadExec,
                Access::ReadWrite | Access::Private => LandlockAccess::ReadWrite,
            },
        ));
    }
    rules.push(rule("/proc", LandlockAccess::Proc));
    rules.push(rule("/dev", LandlockAccess::ListOnly));
    for d in DEVICES {
        rules.push(rule(PathBuf::from("/dev").join(d), LandlockAccess::Device));
    }
    if ns.mount {
        for p in ["/dev/shm", "/tmp"] {
            rules.push(rule(p, LandlockAccess::ReadWrite));
        }
    }
    if let Some(h) = home {
        // The private home is a tmpfs of its own; read-only grants inside
        // it stay read-only mounts.
        rules.push(rule(h.clone(), LandlockAccess::ReadWrite));
    }
    rules
}
