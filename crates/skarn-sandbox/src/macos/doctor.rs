//! What `skarn doctor` reports on macOS: the backend, whether
//! `sandbox-exec` is there, and the restriction report of the default
//! policy under each network policy (pure; the caller says what it found).

use std::path::Path;

use serde::Serialize;

use super::facts::MacFacts;
use crate::policy::{HostList, NetPolicy, Policy};
use crate::report::Status;

/// The doctor's findings on macOS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacDoctor {
    /// Always `seatbelt`.
    pub backend: &'static str,
    /// `/usr/bin/sandbox-exec` exists.
    pub sandbox_exec: bool,
    /// Status of the default policy (never `FullyEnforced`: reads are coarse).
    pub status: Status,
    /// Notes of the default policy.
    pub notes: Vec<String>,
    /// Each network policy and what it means here.
    pub net_policies: Vec<(String, Vec<String>)>,
    /// Limits and their mechanisms.
    pub limits: Vec<String>,
}

/// Findings for a typical project under `temp` with `home`.
pub fn doctor(sandbox_exec: bool, home: Option<&Path>, temp: &Path) -> MacDoctor {
    let ws = temp.join("skarn-doctor-project");
    let facts = MacFacts::fixed(home, &temp.join("skarn-run"));
    let base = super::report(&Policy::new(&ws), &facts);
    let mut net_policies = Vec::new();
    for net in [
        NetPolicy::DenyAll,
        NetPolicy::AllowLoopback,
        NetPolicy::AllowOutbound,
        NetPolicy::AllowAll,
        NetPolicy::AllowHosts(HostList {
            allow: vec!["example.com".into()],
            ..Default::default()
        }),
    ] {
        let mut p = Policy::new(&ws);
        p.net = net.clone();
        let mut f = facts.clone();
        if matches!(net, NetPolicy::AllowHosts(_)) {
            f.proxy_ports = Some((0, 0));
        }
        let r = super::report(&p, &f);
        let notes = r
            .notes
            .into_iter()
            .filter(|n| n.starts_with("net "))
            .collect();
        net_policies.push((net.as_str().to_string(), notes));
    }
    MacDoctor {
        backend: "seatbelt",
        sandbox_exec,
        status: if sandbox_exec {
            base.status
        } else {
            Status::NotEnforced
        },
        notes: base
            .notes
            .into_iter()
            .filter(|n| !n.starts_with("net "))
            .collect(),
        net_policies,
        limits: base
            .limits
            .iter()
            .map(|l| format!("{} {} via {}", l.name, l.value, l.mechanism))
            .collect(),
    }
}

impl MacDoctor {
    /// The human-readable lines.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "backend: seatbelt (macOS)");
        let _ = writeln!(
            s,
            "sandbox-exec: {}",
            if self.sandbox_exec {
                "/usr/bin/sandbox-exec found"
            } else {
                "MISSING: skarn run cannot confine anything"
            }
        );
        let _ = writeln!(s, "status of the default policy: {:?}", self.status);
        for n in &self.notes {
            let _ = writeln!(s, "  {n}");
        }
        let _ = writeln!(s, "limits:");
        for l in &self.limits {
            let _ = writeln!(s, "  {l}");
        }
        let _ = writeln!(s, "net policies on this host:");
        for (n, notes) in &self.net_policies {
            let _ = writeln!(s, "  {n}: {}", notes.join("; "));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_is_truthful_about_reads_and_loopback() {
        let d = doctor(true, Some(Path::new("/Users/a")), Path::new("/private/tmp"));
        assert_eq!(d.status, Status::PartiallyEnforced);
        let t = d.to_text();
        assert!(t.contains("reads: coarse"), "{t}");
        assert!(t.contains("loopback: Seatbelt allows IP only to and from localhost"));
        assert!(t.contains("RLIMIT_FSIZE"));
        assert_eq!(d.net_policies.len(), 5);
        assert!(d.net_policies.iter().all(|(_, n)| !n.is_empty()));
        let d = doctor(false, None, Path::new("/private/tmp"));
        assert_eq!(d.status, Status::NotEnforced);
        assert!(d.to_text().contains("MISSING"));
    }
}
