//! The run's cgroups (root only): a pids cgroup for `max_procs` and a
//! memory cgroup for `--memory`, created by the helper under the parents
//! the plan names.
//!
//! The helper itself never joins them: it moves init in right after forking
//! it, while init builds the new root, and init waits for that move to be
//! confirmed before it starts the target. Moving a process between
//! cgroups is slow (the kernel waits for an RCU grace period: 0.5 to 20 ms
//! on a loaded host), so overlapping it with the mount work takes it off
//! the critical path without letting any process of the sandbox escape it.

use std::path::{Path, PathBuf};

use skarn_confine::{Enforcement, Layer};

use crate::plan::Plan;
use crate::report::RestrictionReport;
use crate::sys;

/// The run's cgroup directories: one per hierarchy (v1: pids and memory
/// are separate; v2: one directory holds both).
pub(super) struct Cgroup {
    pub(super) dirs: Vec<PathBuf>,
}

/// The run's cgroup directory under `parent`.
pub(super) fn cgroup_dir(parent: &Path) -> PathBuf {
    parent.join(format!("skarn-{}", std::process::id()))
}

/// The distinct parents the plan names (pids first).
pub(super) fn parents(plan: &Plan) -> Vec<PathBuf> {
    let mut p: Vec<PathBuf> = plan
        .cgroup
        .iter()
        .map(|(d, _)| d.clone())
        .chain(plan.memory_cgroup.iter().map(|m| m.parent.clone()))
        .collect();
    p.dedup();
    p
}

/// Create (or reuse) the run's directory under `parent` and write `files`
/// (name, value, optional) in order. A directory this call created is
/// removed again on failure.
fn create(parent: &Path, files: &[(&str, String, bool)]) -> std::io::Result<PathBuf> {
    let dir = cgroup_dir(parent);
    let created = match std::fs::create_dir(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(e),
    };
    for (name, value, optional) in files {
        let f = dir.join(name);
        if *optional && !f.exists() {
            continue;
        }
        if let Err(e) = sys::write_file(&f, value.as_bytes())
            && !optional
        {
            if created {
                let _ = std::fs::remove_dir(&dir);
            }
            return Err(e);
        }
    }
    Ok(dir)
}

/// What [`set_up`] made.
pub(super) struct CgroupSetup {
    /// The run's cgroups, when any was made.
    pub(super) cgroup: Option<Cgroup>,
    /// The memory cgroup was planned but not made: the plan's
    /// `fallback_as` applies.
    pub(super) memory_fallback: bool,
    /// The pids cgroup was made.
    pub(super) pids: bool,
}

impl CgroupSetup {
    /// The cgroup layer of the report once init was moved in (`joined`),
    /// or could not be; `None` when the plan has no cgroup.
    pub(super) fn enforcement(&self, plan: &Plan, joined: bool) -> Option<Enforcement> {
        let mut made = Vec::new();
        let mut gaps = Vec::new();
        if let Some((_, max)) = &plan.cgroup {
            if self.pids {
                made.push(format!("pids.max {max}"));
            } else {
                gaps.push("pids cgroup not made");
            }
        }
        if let Some(m) = &plan.memory_cgroup {
            if self.memory_fallback {
                gaps.push("memory cgroup not made (RLIMIT_AS instead)");
            } else {
                made.push(format!("memory {} MiB for the whole tree", m.bytes >> 20));
            }
        }
        if made.is_empty() && gaps.is_empty() {
            return None;
        }
        Some(if made.is_empty() || !joined {
            let mut all = gaps;
            if !made.is_empty() {
                all.push("the sandbox could not be moved into the run's cgroup");
            }
            Enforcement::not_enforced(Layer::Cgroup, all.join("; "))
        } else if gaps.is_empty() {
            Enforcement::full(Layer::Cgroup, made.join(", "))
        } else {
            Enforcement::partial(
                Layer::Cgroup,
                format!("{}; {}", made.join(", "), gaps.join("; ")),
            )
        })
    }
}

/// Make the planned cgroups (`cleanup_ok`: a reaper will remove them even
/// if this process is killed; without one none is made). Every gap is a
/// degradation in the report.
pub(super) fn set_up(plan: &Plan, cleanup_ok: bool, report: &mut RestrictionReport) -> CgroupSetup {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some((dir, max)) = &plan.cgroup {
        match cleanup_ok
            .then(|| create(dir, &[("pids.max", max.to_string(), false)]).ok())
            .flatten()
        {
            Some(d) => dirs.push(d),
            None => report.degrade("pids cgroup could not be created: max_procs NOT enforced"),
        }
    }
    let pids = !dirs.is_empty();
    let mut memory_fallback = false;
    if let Some(m) = &plan.memory_cgroup {
        let files = crate::memory::limit_files(&m.parent, m.bytes);
        let made = if cleanup_ok {
            create(&m.parent, &files)
        } else {
            Err(std::io::Error::other("no clean-up process"))
        };
        match made {
            Ok(d) => {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
            Err(e) => {
                memory_fallback = true;
                for l in report.limits.iter_mut().filter(|l| l.name == "memory") {
                    l.mechanism = crate::memory::mech_rlimit_as(m.bytes);
                }
                report.degrade(format!(
                    "memory cgroup could not be created ({e}): memory limited per process by \
                     RLIMIT_AS instead"
                ));
            }
        }
    }
    CgroupSetup {
        cgroup: (!dirs.is_empty()).then_some(Cgroup { dirs }),
        memory_fallback,
        pids,
    }
}

impl Cgroup {
    /// Move process `pid` (init, not yet running anything else) in.
    pub(super) fn attach(&self, pid: libc::pid_t) -> std::io::Result<()> {
        for d in &self.dirs {
            sys::write_file(&d.join("cgroup.procs"), pid.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// SIGKILL every process in the run's cgroups but this one.
    pub(super) fn kill_all(&self) {
        let me = std::process::id() as i32;
        for d in &self.dirs {
            if let Ok(s) = std::fs::read_to_string(d.join("cgroup.procs")) {
                for pid in s.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    if pid != me {
                        sys::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
    }

    /// Kill what is left and remove the directories (retried while the
    /// kernel releases them).
    pub(super) fn remove(self) {
        for _ in 0..200 {
            self.kill_all();
            let left = self
                .dirs
                .iter()
                .filter(|d| std::fs::remove_dir(d).is_err() && d.exists())
                .count();
            if left == 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
