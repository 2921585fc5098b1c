//! What `skarn doctor` checks on Windows: that an AppContainer profile can
//! be created or opened and a job object with the run's limits made.

use super::job::Job;
use super::sid::container_sid;
use crate::windows::plan::JobLimits;
use crate::windows::profile_name::ContainerProfile;

/// Name of the profile `skarn doctor` creates (or reuses).
pub(crate) const DOCTOR_PROFILE: &str = "skarn.doctor";

/// One check: what was tried, and the outcome (detail or error).
pub type Check = (String, Result<String, String>);

/// Run the checks.
pub fn checks() -> Vec<Check> {
    let profile = ContainerProfile {
        name: DOCTOR_PROFILE.into(),
        display_name: "Skarn doctor".into(),
        description: "Created by skarn doctor to check AppContainer support".into(),
    };
    let sid = container_sid(&profile)
        .and_then(|s| s.to_string_form())
        .map(|s| format!("profile {DOCTOR_PROFILE}: SID {s}"))
        .map_err(|e| e.to_string());
    let job = Job::create(&JobLimits {
        kill_on_job_close: true,
        die_on_unhandled_exception: true,
        breakaway_allowed: false,
        process_memory_mb: Some(crate::policy::DEFAULT_MEMORY_MB),
        active_processes: Some(crate::policy::DEFAULT_MAX_PROCS),
        ui_restrictions: Vec::new(),
    })
    .map(|_| "kill on close, memory per process, active processes, UI restrictions".to_string())
    .map_err(|e| e.to_string());
    vec![
        ("AppContainer profile".into(), sid),
        ("job object".into(), job),
    ]
}
