//! The report's layers of an AppContainer run: the launcher pushes each
//! one right after the step that puts it in force succeeded (ACLs
//! applied, the job holding the suspended process, the process started
//! in the container); [`complete`] marks every layer it never reached.
//! Pure (compiled and tested on every OS).

use super::WindowsPlan;
use crate::report::{ConfinementLayer as Layer, Enforcement};

/// Report order.
const ORDER: [Layer; 3] = [Layer::AppContainer, Layer::Acls, Layer::JobObject];

/// The access-control entries were added (and placeholders made).
pub fn acls(plan: &WindowsPlan) -> Enforcement {
    Enforcement::full(
        Layer::Acls,
        format!(
            "{} change(s) on {} path(s) for the run, {} placeholder(s); reverted after it",
            plan.acl.len(),
            plan.revert.len(),
            plan.placeholders.len()
        ),
    )
}

/// The job holds the process (before it was resumed).
pub fn job(plan: &WindowsPlan) -> Enforcement {
    let j = &plan.job;
    let mut parts = vec!["tree killed on close".to_string()];
    if !j.breakaway_allowed {
        parts.push("no breakaway".into());
    }
    if let Some(m) = j.process_memory_mb {
        parts.push(format!("{m} MiB committed per process"));
    }
    if let Some(n) = j.active_processes {
        parts.push(format!("{n} processes at once"));
    }
    if !j.ui_restrictions.is_empty() {
        parts.push(format!("{} UI restrictions", j.ui_restrictions.len()));
    }
    Enforcement::full(Layer::JobObject, parts.join(", "))
}

/// The process was created in the container with the plan's capabilities.
pub fn appcontainer(plan: &WindowsPlan) -> Enforcement {
    let caps: Vec<&str> = plan.capabilities.iter().map(|c| c.name.as_str()).collect();
    Enforcement::full(
        Layer::AppContainer,
        format!(
            "profile {}; network capabilities: {}",
            plan.profile.name,
            if caps.is_empty() {
                "none".to_string()
            } else {
                caps.join(", ")
            }
        ),
    )
}

/// The reported layers in report order, plus a `NotEnforced` entry for
/// each one the launcher never reached (set-up failed before it).
pub fn complete(reported: Vec<Enforcement>) -> Vec<Enforcement> {
    ORDER
        .iter()
        .map(|l| {
            reported
                .iter()
                .find(|e| e.layer == *l)
                .cloned()
                .unwrap_or_else(|| {
                    Enforcement::not_enforced(*l, "not reached: set-up failed before it")
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ReportFormat, Status};
    use crate::windows::{WindowsHostFacts, plan};

    fn a_plan() -> WindowsPlan {
        let mut p = crate::Policy::new("C:\\Users\\u\\proj");
        p.net = crate::NetPolicy::AllowOutbound;
        p.limits.max_procs = Some(32);
        let facts = WindowsHostFacts {
            home: Some("C:\\Users\\u".into()),
            local_app_data: Some("C:\\Users\\u\\AppData\\Local".into()),
            system_drive: Some("C:".into()),
            ..Default::default()
        };
        plan(&p, &facts, &["git".into()], &[], ReportFormat::None).expect("plans")
    }

    #[test]
    fn each_step_names_what_it_put_in_force() {
        let p = a_plan();
        assert!(appcontainer(&p).detail.contains("internetClient"));
        assert!(job(&p).detail.contains("32 processes at once"));
        assert!(acls(&p).detail.contains("reverted after it"));
    }

    #[test]
    fn layers_never_reached_are_not_enforced() {
        let p = a_plan();
        let got = complete(vec![job(&p), acls(&p)]);
        let layers: Vec<Layer> = got.iter().map(|e| e.layer).collect();
        assert_eq!(layers, ORDER);
        assert_eq!(
            got[0].status,
            Status::NotEnforced,
            "the process never started"
        );
        assert_eq!(got[1].status, Status::FullyEnforced);
        assert_eq!(got[2].status, Status::FullyEnforced);
    }
}
