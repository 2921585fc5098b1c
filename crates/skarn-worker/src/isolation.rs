//! `isolation = auto | worker | in_process`, what `auto` picks on this host,
//! and [`Executor`], the one object the gateway and `skarn exec` hold.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use skarn_codemode::{ExecOutcome, Limits, ToolBridge};

use crate::confine::{ConfinementReport, kernel_landlock_abi};
use crate::pool::{PoolConfig, WorkerPool};
use crate::process::{WorkerCommand, WorkerProcess, WorkerSize};
use crate::protocol::{Attempt, SelftestSpec};

/// The requested strategy (config key `gateway.isolation`, flag `--isolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// The worker where the OS sandbox is available, else in-process.
    #[default]
    Auto,
    /// Always the worker; an error where it is unavailable.
    Worker,
    /// In the calling process (the hermetic isolate only).
    InProcess,
}

impl Isolation {
    pub const VARIANTS: [&'static str; 3] = ["auto", "worker", "in_process"];

    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Auto => "auto",
            Isolation::Worker => "worker",
            Isolation::InProcess => "in_process",
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Isolation {
    type Err = WorkerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Isolation::Auto),
            "worker" => Ok(Isolation::Worker),
            "in_process" | "in-process" => Ok(Isolation::InProcess),
            other => Err(WorkerError::UnknownIsolation(other.to_string())),
        }
    }
}

/// What actually ran a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IsolationUsed {
    Worker,
    InProcess,
    /// In the calling process after it applied the worker's confinement
    /// ([`crate::confine::confine`]) to itself: `skarn exec` with no
    /// servers to bridge, which then has nothing left to do but print.
    SelfConfined,
}

impl IsolationUsed {
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationUsed::Worker => "worker",
            IsolationUsed::InProcess => "in_process",
            IsolationUsed::SelfConfined => "self_confined",
        }
    }
}

impl fmt::Display for IsolationUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors of this crate's API.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WorkerError {
    #[error("unknown isolation {0:?} (expected auto, worker or in_process)")]
    UnknownIsolation(String),
    #[error("isolation = \"worker\" is unavailable on this host: {0}")]
    WorkerUnavailable(String),
}

/// Whether this host can run confined workers, and why (not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    pub available: bool,
    /// One sentence: what was found.
    pub reason: String,
    /// What a probe worker applied to itself, when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<ConfinementReport>,
}

/// Start one real worker with `cmd` and see whether it confines itself.
pub fn probe(cmd: &WorkerCommand) -> Availability {
    if !cfg!(any(target_os = "linux", target_os = "macos")) {
        return Availability {
            available: false,
            reason: "the worker sandbox is implemented for Linux and macOS only".into(),
            confinement: None,
        };
    }
    match WorkerProcess::start(cmd, WorkerSize::default()) {
        Ok(mut w) => {
            let c = w.confinement().cloned();
            w.kill_and_reap();
            let reason = match &c {
                Some(c) if cfg!(target_os = "macos") => c.landlock.clone(),
                Some(c) => format!(
                    "namespaces {} , Landlock ABI {} ({}), seccomp allow-list of {} syscalls",
                    c.namespaces, c.landlock_abi, c.landlock, c.seccomp_allowed
                )
                .replace(" ,", ","),
                None => "worker started".into(),
            };
            Availability {
                available: true,
                reason,
                confinement: c,
            }
        }
        Err(e) => Availability {
            available: false,
            reason: e.to_string(),
            confinement: None,
        },
    }
}

/// [`probe`] of the running binary, done once per process. Only meaningful
/// inside the `skarn` binary (it re-executes itself).
pub fn availability() -> &'static Availability {
    static CELL: OnceLock<Availability> = OnceLock::new();
    CELL.get_or_init(|| probe(&WorkerCommand::current_exe()))
}

/// What `requested` becomes given `avail`.
pub fn resolve(requested: Isolation, avail: &Availability) -> Result<IsolationUsed, WorkerError> {
    match (requested, avail.available) {
        (Isolation::InProcess, _) => Ok(IsolationUsed::InProcess),
        (_, true) => Ok(IsolationUsed::Worker),
        (Isolation::Auto, false) => Ok(IsolationUsed::InProcess),
        (Isolation::Worker, false) => Err(WorkerError::WorkerUnavailable(avail.reason.clone())),
    }
}

/// A script's outcome plus where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IsolatedOutcome {
    #[serde(flatten)]
    pub outcome: ExecOutcome,
    pub isolation: IsolationUsed,
}

/// Runs scripts with the isolation chosen once at construction.
pub struct Executor {
    used: IsolationUsed,
    requested: Isolation,
    reason: String,
    pool: Option<WorkerPool>,
}

impl Executor {
    /// Resolve `requested` (probing `cfg.command` when it matters) and, for
    /// the worker, start the warm pool.
    pub fn new(requested: Isolation, cfg: PoolConfig) -> Result<Self, WorkerError> {
        let avail = match requested {
            Isolation::InProcess => Availability {
                available: false,
                reason: "in_process was requested".into(),
                confinement: None,
            },
            _ if cfg.command == WorkerCommand::current_exe() => availability().clone(),
            _ => probe(&cfg.command),
        };
        let used = resolve(requested, &avail)?;
        let pool = (used == IsolationUsed::Worker).then(|| WorkerPool::new(cfg));
        Ok(Executor {
            used,
            requested,
            reason: avail.reason,
            pool,
        })
    }

    /// Where scripts run.
    pub fn isolation(&self) -> IsolationUsed {
        self.used
    }

    pub fn requested(&self) -> Isolation {
        self.requested
    }

    /// Why this isolation was chosen (the probe's finding).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    pub fn pool(&self) -> Option<&WorkerPool> {
        self.pool.as_ref()
    }

    /// Blocking, like [`skarn_codemode::execute`].
    pub fn execute(
        &self,
        code: &str,
        bridge: Arc<dyn ToolBridge>,
        limits: &Limits,
    ) -> IsolatedOutcome {
        let outcome = match &self.pool {
            Some(pool) => pool.execute(code, bridge, limits),
            None => skarn_codemode::execute(code, bridge, limits),
        };
        IsolatedOutcome {
            outcome,
            isolation: self.used,
        }
    }
}

/// Run the confinement self-test in a fresh worker.
pub fn selftest(cmd: &WorkerCommand, spec: SelftestSpec) -> Result<Vec<Attempt>, String> {
    WorkerProcess::start(cmd, WorkerSize::default())
        .map_err(|e| e.to_string())?
        .selftest(spec)
}

/// What `skarn doctor` shows about Code Mode isolation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DoctorSummary {
    /// What `isolation = "auto"` picks here.
    pub auto_picks: IsolationUsed,
    pub worker_available: bool,
    pub reason: String,
    pub landlock_abi: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<ConfinementReport>,
    /// Self-test attempts (each must be blocked), when the worker started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selftest: Vec<Attempt>,
}

impl DoctorSummary {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A few human-readable lines.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "code mode isolation: auto picks {} ({})\n",
            self.auto_picks, self.reason
        );
        if !self.selftest.is_empty() {
            let blocked = self.selftest.iter().filter(|a| a.blocked).count();
            s.push_str(&format!(
                "  worker self-test: {blocked}/{} escape attempts blocked\n",
                self.selftest.len()
            ));
            for a in self.selftest.iter().filter(|a| !a.blocked) {
                s.push_str(&format!("  NOT BLOCKED: {}: {}\n", a.what, a.detail));
            }
        }
        s
    }
}

/// The doctor's view, for the running `skarn` binary.
pub fn doctor_summary() -> DoctorSummary {
    doctor_summary_for(&WorkerCommand::current_exe())
}

/// The doctor's view for a given worker command.
pub fn doctor_summary_for(cmd: &WorkerCommand) -> DoctorSummary {
    let avail = if *cmd == WorkerCommand::current_exe() {
        availability().clone()
    } else {
        probe(cmd)
    };
    let auto_picks = resolve(Isolation::Auto, &avail).unwrap_or(IsolationUsed::InProcess);
    let selftest = if avail.available {
        let dir = std::env::temp_dir();
        let spec = SelftestSpec {
            read_path: "/etc/hostname".into(),
            write_path: dir
                .join(format!("skarn-doctor-{}", std::process::id()))
                .to_string_lossy()
                .into_owned(),
            connect_port: 9,
            spawn_program: "/bin/sh".into(),
            abstract_name: None,
        };
        let r = selftest(cmd, spec.clone()).unwrap_or_default();
        let _ = std::fs::remove_file(&spec.write_path);
        r
    } else {
        Vec::new()
    };
    DoctorSummary {
        auto_picks,
        worker_available: avail.available,
        reason: avail.reason,
        landlock_abi: kernel_landlock_abi(),
        confinement: avail.confinement,
        selftest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable() -> Availability {
        Availability {
            available: false,
            reason: "no sandbox here".into(),
            confinement: None,
        }
    }

    #[test]
    fn auto_falls_back_and_worker_is_refused_when_unavailable() {
        let a = unavailable();
        assert_eq!(
            resolve(Isolation::Auto, &a).unwrap(),
            IsolationUsed::InProcess
        );
        let e = resolve(Isolation::Worker, &a).unwrap_err();
        assert!(e.to_string().contains("no sandbox here"), "{e}");
        assert_eq!(
            resolve(Isolation::InProcess, &a).unwrap(),
            IsolationUsed::InProcess
        );
    }

    /// Off Linux and macOS the worker is never picked, and the reason says why.
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    #[test]
    fn off_linux_the_worker_is_unavailable_with_a_reason() {
        let a = probe(&WorkerCommand::current_exe());
        assert!(!a.available);
        assert!(a.reason.contains("Linux and macOS only"), "{}", a.reason);
        let ex = Executor::new(
            Isolation::Auto,
            PoolConfig::new(WorkerCommand::current_exe()),
        )
        .expect("auto never fails");
        assert_eq!(ex.isolation(), IsolationUsed::InProcess);
        assert!(
            ex.reason().contains("Linux and macOS only"),
            "{}",
            ex.reason()
        );
        assert!(
            Executor::new(
                Isolation::Worker,
                PoolConfig::new(WorkerCommand::current_exe())
            )
            .is_err()
        );
    }
}
