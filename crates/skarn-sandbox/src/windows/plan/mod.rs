//! [`WindowsPlan`]: everything one AppContainer run does, computed from a
//! [`Policy`], [`WindowsHostFacts`], the command and the environment by the
//! pure function [`plan`] (same output on every OS; golden-tested on Linux).
//!
//! `roots` turns the grants into ACL roots, `secrets` keeps the profile's
//! secrets out of them, `environment` and `limits` set up the process and
//! its job; this module puts the plan together.

mod environment;
mod limits;
mod roots;
mod secrets;

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

use super::acl_plan::{AclBuilder, AclChange, Placeholder};
use super::capabilities::{self, Capability};
use super::host_facts::WindowsHostFacts;
use super::profile_name::{self, ContainerProfile};
use super::{cmdline, winpath};
use crate::policy::Policy;
use crate::report::ReportFormat;
use crate::report::{Backend, RestrictionReport, Status};

pub use super::plan_error::WindowsPlanError;
pub use super::secret_places::{WINDOWS_HOME_SECRET_PATHS, candidates, secret_paths};
pub use environment::container_temp;
pub use roots::SYSTEM_DIRS;
use roots::{check_paths, s};

/// Job object settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLimits {
    /// Every process of the job dies when skarn's handle closes (skarn
    /// exits, crashes or is killed).
    pub kill_on_job_close: bool,
    /// A process that crashes ends instead of waiting on an error dialog.
    pub die_on_unhandled_exception: bool,
    /// Whether a process may leave the job (never).
    pub breakaway_allowed: bool,
    /// Committed memory per process (MiB).
    pub process_memory_mb: Option<u64>,
    /// Processes alive at once in the job.
    pub active_processes: Option<u64>,
    /// User-interface restrictions of the job.
    pub ui_restrictions: Vec<String>,
}

/// The process started in the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// Arguments as asked.
    pub argv: Vec<String>,
    /// The command line passed to `CreateProcessW`.
    pub command_line: String,
    /// Working directory.
    pub cwd: String,
    /// Environment (scrubbed; `TEMP`/`TMP` point into the container's folder).
    pub env: Vec<(String, String)>,
    /// Created suspended, assigned to the job, then resumed.
    pub suspended_until_in_job: bool,
    /// Handles the child inherits: only its three stdio pipe ends.
    pub inherited_handles: Vec<String>,
}

/// Everything one AppContainer run does, in order: create or open the
/// profile, apply `acl` and create `placeholders` (recording them first in
/// the journal), create the job, start the process, wait (timeout), kill
/// the job, revert `revert`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowsPlan {
    /// The container profile (one per workspace).
    pub profile: ContainerProfile,
    /// Capability SIDs in the process token.
    pub capabilities: Vec<Capability>,
    /// ACEs added for the container SID during the run.
    pub acl: Vec<AclChange>,
    /// Placeholders reserving missing persistence paths.
    pub placeholders: Vec<Placeholder>,
    /// Paths whose container ACEs are removed after the run.
    pub revert: Vec<String>,
    /// Missing paths that no ACE can keep from being created (git reads
    /// them when present, and an empty placeholder would stop git): removed
    /// after the run if the command created them, as on Linux.
    pub remove_after: Vec<Placeholder>,
    /// Job object limits.
    pub job: JobLimits,
    /// The process.
    pub process: ProcessSpec,
    /// Wall-clock limit; the job is terminated and the run exits 124.
    pub timeout_secs: Option<u64>,
    /// What is and is not enforced.
    pub report: RestrictionReport,
    /// How the report is printed after the run.
    pub report_format: ReportFormat,
}

/// Plan one run. Pure: the same inputs give the same plan on every OS.
pub fn plan(
    policy: &Policy,
    facts: &WindowsHostFacts,
    argv: &[OsString],
    env: &[(OsString, OsString)],
    report_format: ReportFormat,
) -> Result<WindowsPlan, WindowsPlanError> {
    let argv: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command_line = cmdline::command_line(&argv)?;
    let mut notes = Vec::new();
    let mut gaps = Vec::new();
    let mut rs = roots::from_policy(policy, &mut notes);
    check_paths(policy, facts, &rs)?;
    let ws = rs[0].path.clone();
    let cwd = policy.cwd.as_deref().map(s).unwrap_or_else(|| ws.clone());
    if !winpath::is_under(&cwd, &ws) {
        return Err(WindowsPlanError::CwdOutside(cwd));
    }
    let profile = profile_name::for_workspace(&ws);
    let (caps, net_notes) = capabilities::for_net(&policy.net);
    notes.extend(net_notes);

    let mut b = AclBuilder::default();
    let mut grants = Vec::new();
    let secrets = secrets::with_sources(policy, facts);
    secrets::drop_grants_inside(&mut rs, &secrets, &mut notes);
    roots::grant(&rs, &mut b, &mut grants);

    // Persistence paths.
    if policy.protect_persistence {
        super::protect::persistence(facts, &ws, &rs, &mut b, &mut grants, &mut notes, &mut gaps);
    } else {
        notes.push("persistence paths are writable (--no-protect-persistence)".into());
    }

    secrets::deny_where_granted(&secrets, facts, &rs, &mut b, &mut grants, &mut notes);
    notes.push(
        "reads outside the grants: whatever grants ALL APPLICATION PACKAGES (by default system \
         directories such as Windows and Program Files; user profile folders do not, unless an \
         ACE added there says otherwise)"
            .into(),
    );
    if policy.private_home {
        notes.push(
            "no private home on Windows: the profile directory is unreadable rather than replaced"
                .into(),
        );
    }
    let (env, removed) = environment::container_env(policy, env, facts, &profile.name, &mut notes);
    let limits = limits::reports(policy, &mut notes, &mut gaps);
    let l = &policy.limits;

    let mut report = RestrictionReport {
        backend: Backend::AppContainer,
        status: Status::FullyEnforced,
        notes,
        net: policy.net.as_str().into(),
        grants,
        limits,
        removed_env: removed,
        landlock_abi: 0,
        egress: None,
        provenance: Default::default(),
        layers: Vec::new(),
        workspace_changes: None,
        denied: Vec::new(),
    };
    for g in gaps {
        report.degrade(g);
    }
    let revert = b.touched_paths();
    Ok(WindowsPlan {
        profile,
        capabilities: caps,
        acl: b.changes,
        placeholders: b.placeholders,
        remove_after: b.remove_after,
        revert,
        job: JobLimits {
            kill_on_job_close: true,
            die_on_unhandled_exception: true,
            breakaway_allowed: false,
            process_memory_mb: l.memory_mb,
            active_processes: l.max_procs,
            ui_restrictions: UI_RESTRICTIONS.iter().map(|x| x.to_string()).collect(),
        },
        process: ProcessSpec {
            argv,
            command_line,
            cwd,
            env,
            suspended_until_in_job: true,
            inherited_handles: vec![
                "stdin pipe".into(),
                "stdout pipe".into(),
                "stderr pipe".into(),
            ],
        },
        timeout_secs: l.timeout_secs,
        report,
        report_format,
    })
}

/// User-interface restrictions of the job (names of the
/// `JOB_OBJECT_UILIMIT_*` flags the launcher sets).
pub(crate) const UI_RESTRICTIONS: &[&str] = &[
    "desktop",
    "display_settings",
    "exit_windows",
    "global_atoms",
    "handles",
    "read_clipboard",
    "system_parameters",
    "write_clipboard",
];
