//! The parent side of one worker process: spawn it, wait for `ready`, hand
//! it one job, answer its host calls through the caller's bridge, collect
//! the outcome, then kill and reap it. Every way a worker can misbehave
//! (garbage, oversized lines, early exit, silence past the deadline, more
//! host calls than the budget) ends in a kill, a reap and a clear
//! [`ExecError`]; nothing here panics on worker input.

use std::ffi::OsString;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use skarn_codemode::{BridgeError, ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge};

use crate::confine::ConfinementReport;
use crate::protocol::{
    Attempt, FromWorker, HostCall, LineReader, ReadError, SelftestSpec, ToWorker, encode, reply_cap,
};
use crate::worker::JOB_LINE_CAP;

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
        let mut child = self.kill()?;
        child.wait().ok()
    }

    /// SIGKILL the worker's process group; the caller must reap the child.
    fn kill(&mut self) -> Option<Child> {
        let mut child = self.child.take()?;
        self.stdin = None;
        #[cfg(unix)]
        if let Some(pgid) = rustix::process::Pid::from_raw(self.pid as i32) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        let _ = child.kill();
        Some(child)
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

    /// Run one job; the worker is consumed (killed and reaped) whatever
    /// happens. `Err(NotDelivered)` means the job never reached the worker
    /// (it died while idle), so the caller may retry on another.
    pub fn run(
        self,
        code: &str,
        bridge: Arc<dyn ToolBridge>,
        limits: &Limits,
    ) -> Result<ExecOutcome, NotDelivered> {
        self.run_then(code, bridge, limits, |mut c| {
            let _ = c.wait();
        })
    }

    /// [`run`](Self::run), but after a normal finish the worker is only
    /// SIGKILLed and handed to `reap`, which must `wait` for it (the pool
    /// does that on its own thread, off the caller's path). After a failure
    /// it is reaped here, since its exit status goes into the error.
    pub fn run_then(
        mut self,
        code: &str,
        bridge: Arc<dyn ToolBridge>,
        limits: &Limits,
        reap: impl FnOnce(Child),
    ) -> Result<ExecOutcome, NotDelivered> {
        let started = Instant::now();
        let job = encode(&ToWorker::Job {
            code: code.to_owned(),
            limits: limits.clone(),
            selftest: None,
        });
        if job.len() > JOB_LINE_CAP {
            self.kill_and_reap();
            return Ok(ExecOutcome::failed(ExecError::new(
                ErrorKind::Rejected,
                format!(
                    "the script is too large: {} bytes as JSON, at most {JOB_LINE_CAP} allowed",
                    job.len()
                ),
            )));
        }
        if !self.send_line(&job) {
            self.kill_and_reap();
            return Err(NotDelivered);
        }
        self.reader.set_cap(line_cap(limits));
        let stdin = Arc::new(Mutex::new(self.stdin.take()));
        // A huge configured deadline must not overflow `Instant`.
        let deadline = started
            .checked_add(limits.deadline.saturating_add(DEADLINE_GRACE))
            .unwrap_or_else(|| started + Duration::from_secs(365 * 24 * 3600));
        let mut calls: u64 = 0;
        let outcome = loop {
            let line = match self.reader.read_line(Some(deadline)) {
                Ok(l) => l,
                Err(e) => break Err(self.read_failure(e, limits)),
            };
            match crate::protocol::decode::<FromWorker>(&line) {
                Ok(FromWorker::Done { outcome }) => break Ok(outcome),
                Ok(FromWorker::Call { id, call }) => {
                    calls += 1;
                    if calls > u64::from(limits.max_tool_calls) {
                        break Err(ExecError::new(
                            ErrorKind::ToolCalls,
                            format!(
                                "the worker exceeded the tool-call budget of {}; it was killed",
                                limits.max_tool_calls
                            ),
                        ));
                    }
                    answer(call, id, reply_cap(limits), bridge.clone(), stdin.clone());
                }
                Ok(_) => {
                    break Err(protocol_error("a message that is not allowed during a job"));
                }
                Err(e) => break Err(protocol_error(&format!("malformed message ({e})"))),
            }
        };
        // Kill first: a host-call thread blocked writing to a full pipe then
        // gets EPIPE and releases the lock. Late answers find no pipe.
        if outcome.is_ok() {
            if let Some(child) = self.kill() {
                reap(child);
            }
        } else {
            self.kill_and_reap();
        }
        if let Ok(mut s) = stdin.lock() {
            *s = None;
        }
        Ok(match outcome {
            Ok(o) => o,
            Err(err) => {
                let mut o = ExecOutcome::failed(err);
                o.tool_calls = calls.min(u64::from(u32::MAX)) as u32;
                o.elapsed_ms = started.elapsed().as_millis().min(u128::from(u64::MAX)) as u64;
                o
            }
        })
    }

    fn read_failure(&mut self, e: ReadError, limits: &Limits) -> ExecError {
        match e {
            ReadError::Timeout => ExecError::new(
                ErrorKind::Deadline,
                format!(
                    "deadline of {} ms exceeded; the worker did not stop in time and was killed",
                    limits.deadline.as_millis()
                ),
            ),
            ReadError::Oversized { cap } => protocol_error(&format!(
                "oversized message (more than {cap} bytes in one line)"
            )),
            ReadError::Eof | ReadError::Io(_) => {
                let status = self.kill_and_reap();
                ExecError::new(
                    ErrorKind::Internal,
                    format!(
                        "the Code Mode worker exited before finishing ({})",
                        describe_status(status)
                    ),
                )
            }
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

fn protocol_error(what: &str) -> ExecError {
    ExecError::new(
        ErrorKind::Internal,
        format!("the Code Mode worker sent {what}; it was killed"),
    )
}

/// Largest line a worker may send for a job with these limits: the output
/// cap or the tool-argument cap (both measured as escaped JSON), logs (JSON escaping can make a byte six), and room for the rest.
pub fn line_cap(limits: &Limits) -> usize {
    limits
        .max_output_bytes
        .max(skarn_codemode::MAX_ARGS_BYTES)
        .saturating_add(limits.max_log_bytes.saturating_mul(6))
        .saturating_add(limits.max_log_lines.saturating_mul(16))
        .saturating_add(MIN_LINE_CAP)
}

/// "exit status 3", "killed by signal 9 (SIGKILL)"...
pub fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        None => "status unknown".into(),
        Some(s) => match (s.code(), signal_of(&s)) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
            _ => "status unknown".into(),
        },
    }
}

#[cfg(unix)]
fn signal_of(s: &ExitStatus) -> Option<i32> {
    s.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &ExitStatus) -> Option<i32> {
    None
}

#[cfg(unix)]
fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGSYS => " (SIGSYS)",
        libc::SIGBUS => " (SIGBUS)",
        _ => "",
    }
}

#[cfg(not(unix))]
fn signal_name(_: i32) -> &'static str {
    ""
}

/// Answer one host call on its own thread (bridge futures are
/// executor-agnostic; several calls may be outstanding at once).
fn answer(
    call: HostCall,
    id: u64,
    cap: usize,
    bridge: Arc<dyn ToolBridge>,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
) {
    let work = move || {
        let what = match &call {
            HostCall::CallTool { server, tool, .. } => format!("{server}.{tool}"),
            HostCall::ListTools => "listTools".to_string(),
            HostCall::ReadResource { server, uri } => format!("{server} resource {uri}"),
        };
        let result: Result<Value, BridgeError> = pollster::block_on(async {
            match call {
                HostCall::CallTool { server, tool, args } => {
                    bridge.call_tool(&server, &tool, args).await
                }
                HostCall::ListTools => bridge.list_tools().await,
                HostCall::ReadResource { server, uri } => bridge.read_resource(&server, &uri).await,
            }
        });
        let result = match result {
            Ok(v) if skarn_codemode::json_depth(&v) > skarn_codemode::MAX_RESULT_DEPTH => {
                Err(skarn_codemode::result_too_deep(&what))
            }
            r => r,
        };
        let mut line = encode(&ToWorker::Reply { id, result });
        if line.len() > cap {
            let result = Err(BridgeError::Other {
                message: format!(
                    "the result of {what} is {} bytes, more than the {cap} bytes a script with this memory limit may receive",
                    line.len()
                ),
            });
            line = encode(&ToWorker::Reply { id, result });
        }
        if let Ok(mut guard) = stdin.lock()
            && let Some(s) = guard.as_mut()
        {
            let _ = s.write_all(&line).and_then(|_| s.flush());
        }
    };
    if std::thread::Builder::new()
        .name("skarn-host-call".into())
        .spawn(work)
        .is_err()
    {
        // Could not get a thread: the script's call will see the deadline.
    }
}
