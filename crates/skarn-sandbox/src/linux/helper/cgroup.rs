//! The run's cgroups (root only): a pids cgroup for `max_procs` and a
//! memory cgroup for `--memory`, created by the helper under the parents
//! the plan names.
//!
//! The helper itself never joins them; init enters them before it starts
//! the target, so no process of the sandbox runs outside. How it enters
//! decides the latency of a root run:
//! - v1 hierarchies (a `tasks` file): init writes `0` to `tasks` through a
//!   descriptor the helper opened, i.e. it moves its own (only) thread.
//!   The kernel takes no global lock for that (about 30 us), whereas moving
//!   a process by pid write-locks every thread group and waits for an RCU
//!   grace period first (7 to 22 ms measured on the development VM, more
//!   than the rest of a run).
//! - v2 (no per-thread file for domain cgroups): init is born inside the
//!   run's cgroup (clone3 with `CLONE_INTO_CGROUP`, Linux 5.7), which is no
//!   migration at all. Where that fails (older kernel, or pids and memory in
//!   two v2 directories) the helper moves init by pid right after forking
//!   it, overlapping the grace period with init's mount work, and init
//!   waits for that move to be confirmed.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use skarn_confine::{Enforcement, Layer};

use crate::linux::plan::Plan;
use crate::linux::sys;
use crate::report::RestrictionReport;

/// The run's cgroup directories: one per hierarchy (v1: pids and memory
/// are separate; v2: one directory holds both).
pub(super) struct Cgroup {
    pub(super) dirs: Vec<PathBuf>,
}

/// The run's cgroup directory under `parent`: `skarn-<pid>-<tag>`, the tag
/// taken once per process from the monotonic clock (the reaper, forked
/// later, inherits it). The tag keeps a recycled pid from meeting the
/// directory of an earlier run that is still being cleaned up.
pub(super) fn cgroup_dir(parent: &Path) -> PathBuf {
    static TAG: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let tag = TAG.get_or_init(|| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        (ts.tv_sec as u64).wrapping_mul(1_000_000_000) ^ ts.tv_nsec as u64
    });
    parent.join(format!("skarn-{}-{tag:x}", std::process::id()))
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

/// Create the run's directory under `parent` (v2: the pids and memory
/// parents may be one directory, made once) and write `files` (name,
/// value, optional) in order. A directory this call created is removed
/// again on failure.
fn create(
    parent: &Path,
    files: &[(&str, String, bool)],
    made: &[PathBuf],
) -> std::io::Result<PathBuf> {
    let dir = cgroup_dir(parent);
    let created = if made.contains(&dir) {
        false
    } else {
        std::fs::create_dir(&dir)?;
        true
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

/// Remove run directories left under `parent` by runs whose helper and
/// reaper were both killed (a service manager or CI runner stopping the
/// caller's whole cgroup): `skarn-<pid>[-<tag>]` directories whose pid no
/// longer exists. The kernel refuses to remove a cgroup that still holds a
/// process, and a run in progress has a live helper pid, so no running
/// sandbox loses its cgroup.
fn sweep(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("skarn-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|p| *p > 0);
        let Some(pid) = pid else { continue };
        if crate::linux::sys::pid_gone(pid) {
            let _ = std::fs::remove_dir(e.path());
        }
    }
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
                made.push(format!(
                    "pids.max {max} ({} for the command, one for init)",
                    max.saturating_sub(1)
                ));
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
    if cleanup_ok {
        for p in parents(plan) {
            sweep(&p);
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some((dir, max)) = &plan.cgroup {
        match cleanup_ok
            .then(|| create(dir, &[("pids.max", max.to_string(), false)], &[]).ok())
            .flatten()
        {
            Some(d) => dirs.push(d),
            None => report.degrade("pids cgroup could not be created: max_procs NOT enforced"),
        }
    }
    let pids = !dirs.is_empty();
    let mut memory_fallback = false;
    if let Some(m) = &plan.memory_cgroup {
        let files = crate::linux::memory::limit_files(&m.parent, m.bytes);
        let made = if cleanup_ok {
            create(&m.parent, &files, &dirs)
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
                    l.mechanism = crate::linux::memory::mech_rlimit_as(m.bytes);
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

/// How init enters the run's cgroups (see the module text).
#[derive(Default)]
pub(super) struct Entry {
    /// Open `tasks` files of v1 hierarchies: init writes `0` to each.
    pub(super) own: Vec<OwnedFd>,
    /// v2 directories: the helper writes init's pid to `cgroup.procs`
    /// (unless init was born inside `born_into`).
    pub(super) by_helper: Vec<PathBuf>,
    /// The one v2 directory, open, for `CLONE_INTO_CGROUP`.
    pub(super) born_into: Option<OwnedFd>,
    /// A `tasks` file could not be opened: init is not in the cgroups.
    pub(super) failed: bool,
}

impl Entry {
    /// In init (single-threaded, forked after [`Cgroup::entry`]): move the
    /// calling thread into every v1 cgroup of the run, then close init's
    /// copies of all the descriptors (the target never inherits them).
    /// Init leaves with `_exit` and never drops its copy of this value, so
    /// nothing is closed twice.
    pub(super) fn join_own(&self) -> std::io::Result<()> {
        if let Some(fd) = &self.born_into {
            // SAFETY: init's copy of a descriptor it owns (see above).
            unsafe { libc::close(fd.as_raw_fd()) };
        }
        let mut r = Ok(());
        for fd in &self.own {
            // SAFETY: writing one byte from a valid buffer to an open descriptor.
            if r.is_ok() && unsafe { libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) } != 1 {
                r = Err(std::io::Error::last_os_error());
            }
            // SAFETY: init's copy of a descriptor it owns (see above).
            unsafe { libc::close(fd.as_raw_fd()) };
        }
        r
    }

    /// Move process `pid` (init, not yet running anything else) into the
    /// v2 cgroups.
    pub(super) fn attach(&self, pid: libc::pid_t) -> std::io::Result<()> {
        for d in &self.by_helper {
            sys::write_file(&d.join("cgroup.procs"), pid.to_string().as_bytes())?;
        }
        Ok(())
    }
}

impl Cgroup {
    /// Open what init needs to enter the run's cgroups (before it is forked).
    pub(super) fn entry(&self) -> Entry {
        let mut e = Entry::default();
        for d in &self.dirs {
            match std::fs::OpenOptions::new()
                .write(true)
                .open(d.join("tasks"))
            {
                Ok(f) => e.own.push(f.into()),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    e.by_helper.push(d.clone())
                }
                Err(_) => e.failed = true,
            }
        }
        if let [one] = e.by_helper.as_slice() {
            e.born_into = std::fs::File::open(one).ok().map(OwnedFd::from);
        }
        e
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

    /// After the run (init reaped): kill what is left and try once to
    /// remove the directories, so that the host is clean when `skarn run`
    /// returns even if the reaper is killed with its caller's cgroup right
    /// after (a service manager or CI runner stopping the job). What is
    /// still busy is left to the reaper.
    pub(super) fn remove_once(&self) {
        self.kill_all();
        for d in &self.dirs {
            let _ = std::fs::remove_dir(d);
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
