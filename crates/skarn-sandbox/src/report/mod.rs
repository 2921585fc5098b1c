//! [`RestrictionReport`]: what was and was not enforced for one run.

pub mod advice;
pub mod denials;
pub mod report_provenance;
pub mod report_text;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::report::report_provenance::{Origin, SettingSource};

/// How much of the requested policy the host enforced: the confinement
/// kit's status type, shared with the worker's `ConfinementReport`
/// (`FullyEnforced`: every mechanism of the policy is in force;
/// `PartiallyEnforced`: some are missing and `notes` names each gap;
/// `NotEnforced`: nothing confines the command).
pub use skarn_confine::Status;

/// One confinement layer's outcome (`landlock`, `seccomp`, `namespaces`,
/// ...): the confinement kit's type, shared with the worker's
/// `ConfinementReport`.
pub use skarn_confine::{Enforcement, Layer as ConfinementLayer};

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
    /// Which layer (default, preset, user config, workspace `skarn.toml`,
    /// flag) set each setting ([`crate::report::report_provenance`]); filled by
    /// the caller that assembled the policy, empty in a bare plan.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provenance: BTreeMap<String, SettingSource>,
    /// What each confinement layer achieved, as the sandbox reported it
    /// back at run time (empty until the run: never taken from the plan).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Enforcement>,
    /// The workspace's copy-on-write layer (ADR 0130): what the run
    /// changed and what of it was applied or refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_changes: Option<WorkspaceChanges>,
    /// What was denied during this run, as recorded (the network
    /// namespace's count of connections and lookups that found no route,
    /// the allow-list proxy's refusals, changes to protected paths refused
    /// by a layer): one entry each. The failure line is printed only when
    /// this is not empty ([`crate::report::denials`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied: Vec<Denial>,
}

/// One denial recorded during a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// `network`, `host` or `write`.
    pub kind: String,
    /// What: a count of attempts, a host, a path (relative to the
    /// workspace for a write).
    pub what: String,
    /// Why it was denied.
    pub why: String,
}

/// What a run changed in its workspace's copy-on-write layer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceChanges {
    /// Applied: `+ path` (made or changed), `- path` (removed).
    pub applied: Vec<String>,
    /// Refused (not applied): each with why.
    pub refused: Vec<RefusedChange>,
}

/// One change of the layer that was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedChange {
    /// Path relative to the workspace.
    pub path: String,
    /// Why it was refused.
    pub why: String,
}

impl RestrictionReport {
    /// Record a gap: adds a note and lowers `FullyEnforced` to `PartiallyEnforced`.
    pub fn degrade(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
        if self.status == Status::FullyEnforced {
            self.status = Status::PartiallyEnforced;
        }
    }
}
