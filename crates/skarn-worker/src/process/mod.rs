//! The parent side of one worker process: spawn it, wait for `ready`, hand
//! it one job, answer its host calls through the caller's bridge, collect
//! the outcome, then kill and reap it. Every way a worker can misbehave
//! (garbage, oversized lines, early exit, silence past the deadline, more
//! host calls than the budget) ends in a kill, a reap and a clear
//! [`ExecError`]; nothing here panics on worker input.
//!
//! This module starts a worker and owns it; `job` runs one script on it,
//! `host_call` answers the script's calls, `exit_status` words how a worker
//! ended.

mod exit_status;
mod host_call;
mod job;

use std::ffi::OsString;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use skarn_codemode::Limits;

use crate::confine::ConfinementReport;
use crate::protocol::{Attempt, FromWorker, LineReader, SelftestSpec, ToWorker, encode};

pub use exit_status::describe_status;
pub use job::line_cap;

/// How long past `limits.deadline` the parent waits before killing a
/// worker: the engine itself gives up about a second after the deadline.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(2);
/// How long a new worker may take to confine itself and say `ready`.
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Smallest cap on one line from a worker.
pub const MIN_LINE_CAP: usize = 1 << 20;

/// How to start a worker: a program and its leading arguments. The pool
/// appends `--memory-bytes N --stack-bytes N --parent-pid P`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Let the worker's stderr through (debugging); default: discarded.
    pub inherit_stderr: bool,
    /// Have each worker run a constant `return 1` once, after confining
    /// itself and before saying `ready`, so the job finds the engine's code
    /// already paged in (default: on; measured in docs/worker.md).
    pub engine_warmup: bool,
}

impl WorkerCommand {
    /// Re-execute the running binary (`/proc/self/exe`, which stays correct
    /// even if the file on disk is replaced) as `__codemode-worker`. Only
    /// meaningful inside the `skarn` binary.
    pub fn current_exe() -> Self {
        WorkerCommand {
            program: PathBuf::from("/proc/self/exe"),
            args: vec!["__codemode-worker".into()],
            inherit_stderr: false,
            engine_warmup: true,
        }
    }

    /// The given binary (e.g. a path to `skarn`) as `__codemode-worker`.
    pub fn skarn_at(program: impl Into<PathBuf>) -> Self {
        WorkerCommand {
            program: program.into(),
            args: vec!["__codemode-worker".into()],
            inherit_stderr: false,
            engine_warmup: true,
        }
    }
}

/// Why a worker could not be started or used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot start the worker: {0}")]
    Spawn(String),
    #[error("the worker could not confine itself: {0}")]
    Confine(String),
    #[error("the worker did not become ready: {0}")]
    NotReady(String),
}

/// What a worker is sized for: its RLIMIT_AS follows from these, so a job
/// may run on it only when its own limits are not larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerSize {
    pub memory_bytes: u64,
    pub stack_bytes: u64,
}

impl WorkerSize {
    /// Sized exactly for `limits`.
    pub fn for_limits(limits: &Limits) -> Self {
        WorkerSize {
            memory_bytes: limits.memory_bytes as u64,
            stack_bytes: limits.stack_bytes as u64,
        }
    }

    /// Whether a job with `limits` may run on a worker of this size.
    pub fn fits(&self, limits: &Limits) -> bool {
        limits.memory_bytes as u64 <= self.memory_bytes
            && limits.stack_bytes as u64 <= self.stack_bytes
    }

    /// The larger of each dimension.
    pub fn max(self, other: WorkerSize) -> Self {
        WorkerSize {
            memory_bytes: self.memory_bytes.max(other.memory_bytes),
            stack_bytes: self.stack_bytes.max(other.stack_bytes),
        }
    }
}

impl Default for WorkerSize {
    fn default() -> Self {
        WorkerSize::for_limits(&Limits::default())
    }
}

/// The job could not be written to the worker (it had already exited).
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the job could not be delivered to the worker")]
pub struct NotDelivered;

/// A started, confined worker waiting for its one job.
pub struct WorkerProcess {
    /// `None` once handed over for deferred reaping.
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    reader: LineReader<ChildStdout>,
    pid: u32,
    size: WorkerSize,
    confinement: Option<ConfinementReport>,
}

impl WorkerProcess {
    /// Start a worker able to honour QuickJS limits up to `size` and wait
    /// until it reports itself confined.
    pub fn start(cmd: &WorkerCommand, size: WorkerSize) -> Result<Self, SpawnError> {
        if cfg!(not(unix)) {
            return Err(SpawnError::Spawn(
                "the Code Mode worker process is unix-only in this build".into(),
            ));
        }
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .arg("--memory-bytes")
            .arg(size.memory_bytes.to_string())
            .arg("--stack-bytes")
            .arg(size.stack_bytes.to_string())
            .arg("--parent-pid")
            .arg(std::process::id().to_string())
            .args(if cmd.engine_warmup {
                &[][..]
            } else {
                &["--no-engine-warmup"][..]
            })
            // No secrets from our environment reach the script's process.
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if cmd.inherit_stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        // Its own process group: terminal signals aimed at us do not
        // reach it, and we can kill the group as a whole.
        #[cfg(unix)]
        c.process_group(0);
        let mut child = c.spawn().map_err(|e| SpawnError::Spawn(e.to_string()))?;
        let pid = child.id();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SpawnError::Spawn("no pipes".into()));
        };
        let mut w = WorkerProcess {
            child: Some(child),
            stdin: Some(stdin),
            reader: LineReader::new(stdout, MIN_LINE_CAP),
            pid,
            size,
            confinement: None,
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        match w.reader.read_line(Some(deadline)) {
            Ok(line) => match crate::protocol::decode::<FromWorker>(&line) {
                Ok(FromWorker::Ready { confinement, .. }) => {
                    w.confinement = Some(confinement);
                    Ok(w)
                }
                Ok(FromWorker::Fatal { message }) => {
                    w.kill_and_reap();
                    Err(SpawnError::Confine(message))
                }
                _ => {
                    w.kill_and_reap();
                    Err(SpawnError::NotReady("unexpected first message".into()))
                }
            },
            Err(e) => {
                let status = w.kill_and_reap();
                Err(SpawnError::NotReady(format!(
                    "{e} ({})",
                    describe_status(status)
                )))
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn size(&self) -> WorkerSize {
        self.size
    }

    pub fn confinement(&self) -> Option<&ConfinementReport> {
        self.confinement.as_ref()
    }

    /// SIGKILL the worker's process group and reap it. Idempotent.
    pub fn kill_and_reap(&mut self) -> Option<ExitStatus> {
        self.retire()?.end()
    }

    /// Close our end of the job pipe and hand the still-unreaped process
    /// over, to be killed and reaped by whoever ends the [`UsedWorker`].
    fn retire(&mut self) -> Option<UsedWorker> {
        let child = self.child.take()?;
        self.stdin = None;
        Some(UsedWorker {
            child,
            pid: self.pid,
            reaped: false,
        })
    }

    fn send_line(&mut self, line: &[u8]) -> bool {
        match self.stdin.as_mut() {
            Some(s) => s.write_all(line).and_then(|_| s.flush()).is_ok(),
            None => false,
        }
    }

    /// Run the confinement self-test instead of a script.
    pub fn selftest(mut self, spec: SelftestSpec) -> Result<Vec<Attempt>, String> {
        let job = ToWorker::Job {
            code: String::new(),
            limits: Limits::default(),
            selftest: Some(spec),
        };
        if !self.send_line(&encode(&job)) {
            let st = self.kill_and_reap();
            return Err(format!("worker gone ({})", describe_status(st)));
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        let r = match self.reader.read_line(Some(deadline)) {
            Ok(line) => match crate::protocol::decode::<FromWorker>(&line) {
                Ok(FromWorker::Selftest { attempts }) => Ok(attempts),
                _ => Err("unexpected answer to the self-test".to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        let st = self.kill_and_reap();
        r.map_err(|e| format!("{e} ({})", describe_status(st)))
    }
}

/// A worker whose job is over: it is never given another one (our end of
/// the job pipe is closed and nothing keeps a way to write a job to it),
/// and it is SIGKILLed with its process group and reaped by
/// [`UsedWorker::end`], or on drop. Not reaped before that, so its pid (and
/// process group id) cannot be reused meanwhile and the kill cannot hit
/// another process.
pub struct UsedWorker {
    child: Child,
    pid: u32,
    reaped: bool,
}

impl UsedWorker {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    fn signal(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = rustix::process::Pid::from_raw(self.pid as i32) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
    }

    /// Kill the process group and reap the worker.
    pub fn end(mut self) -> Option<ExitStatus> {
        self.signal();
        self.reaped = true;
        self.child.wait().ok()
    }
}

impl Drop for UsedWorker {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal();
            let _ = self.child.wait();
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}
