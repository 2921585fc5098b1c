//! [`RestrictionReport`]: what was and was not enforced for one run.

use serde::{Deserialize, Serialize};

/// How much of the requested policy the host enforced: the confinement
/// kit's status type, shared with the worker's `ConfinementReport`
/// (`FullyEnforced`: every mechanism of the policy is in force;
/// `PartiallyEnforced`: some are missing and `notes` names each gap;
/// `NotEnforced`: nothing confines the command).
pub use skarn_confine::Status;

/// How the report is printed after the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// Not printed.
    #[default]
    None,
    /// Human-readable text on stderr.
    Text,
    /// One JSON line on stderr.
    Json,
}

/// The confinement backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Linux: namespaces + Landlock + seccomp-bpf + rlimits/cgroups.
    Linux,
    /// macOS: a Seatbelt (SBPL) profile + rlimits + a process group.
    Seatbelt,
    /// Windows: AppContainer + ACLs for the run + job object.
    #[serde(rename = "appcontainer")]
    AppContainer,
    /// No confinement (`--no-sandbox`, or an unsupported platform).
    None,
}

/// One limit as applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitReport {
    /// `timeout`, `memory`, `max_procs` or `max_file_size`.
    pub name: String,
    /// Human-readable value (`30 s`, `8192 MiB`, `none`).
    pub value: String,
    /// Mechanism enforcing it.
    pub mechanism: String,
    /// Provenance.
    pub source: String,
}

/// One filesystem grant as applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantReport {
    /// Host path.
    pub path: String,
    /// `read`, `read+exec`, `read-write`, `deny`, `read-only (persistence)`.
    pub access: String,
    /// Provenance.
    pub source: String,
}

/// Says exactly what was and was not enforced for one run on this host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestrictionReport {
    /// Backend used.
    pub backend: Backend,
    /// Overall status.
    pub status: Status,
    /// One note per gap or noteworthy fact (never a secret value).
    pub notes: Vec<String>,
    /// Network policy in force.
    pub net: String,
    /// Filesystem grants with provenance.
    pub grants: Vec<GrantReport>,
    /// Limits with provenance.
    pub limits: Vec<LimitReport>,
    /// Environment variables removed (names only).
    pub removed_env: Vec<String>,
    /// Landlock ABI used (0 = none).
    pub landlock_abi: u32,
    /// `--net allow:...`: traffic per allowed host and refusals per host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<skarn_egress::EgressReport>,
}

impl RestrictionReport {
    /// Record a gap: adds a note and lowers `FullyEnforced` to `PartiallyEnforced`.
    pub fn degrade(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
        if self.status == Status::FullyEnforced {
            self.status = Status::PartiallyEnforced;
        }
    }

    /// Human-readable multi-line rendering (for `--report`).
    pub fn render_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "skarn: sandbox report: backend={} status={:?} landlock_abi={} net={}",
            match self.backend {
                Backend::Linux => "linux",
                Backend::Seatbelt => "seatbelt",
                Backend::AppContainer => "appcontainer",
                Backend::None => "none",
            },
            self.status,
            self.landlock_abi,
            self.net
        );
        let default_secret =
            |g: &&GrantReport| g.access == "deny" && g.source == "default (secret)";
        for g in self.grants.iter().filter(|g| !default_secret(g)) {
            let _ = writeln!(s, "  grant {:<26} {}  ({})", g.access, g.path, g.source);
        }
        let secrets: Vec<&str> = self
            .grants
            .iter()
            .filter(default_secret)
            .map(|g| g.path.as_str())
            .collect();
        if !secrets.is_empty() {
            let _ = writeln!(
                s,
                "  deny  {} default secret paths (never readable): {}",
                secrets.len(),
                secrets.join(" ")
            );
        }
        for l in &self.limits {
            let _ = writeln!(
                s,
                "  limit {:<14} {:<12} via {}  ({})",
                l.name, l.value, l.mechanism, l.source
            );
        }
        if !self.removed_env.is_empty() {
            let _ = writeln!(s, "  env removed: {}", self.removed_env.join(", "));
        }
        if let Some(e) = &self.egress {
            for a in &e.allowed {
                let _ = writeln!(
                    s,
                    "  net allowed {}: {} connection(s), {} bytes out, {} bytes in",
                    a.host, a.connections, a.bytes_out, a.bytes_in
                );
            }
            for d in &e.denied {
                let _ = writeln!(
                    s,
                    "  net denied  {}: {} time(s) ({})",
                    d.host, d.count, d.reason
                );
            }
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        s
    }
}
