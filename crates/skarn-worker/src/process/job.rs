//! One job on a started worker: the script sent, the worker's lines read
//! until its outcome (host calls answered on the way, the tool-call budget
//! and the deadline kept), then the worker killed and reaped (after a
//! normal finish, by whoever the caller hands it to).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skarn_codemode::{ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge};

use super::host_call::answer;
use super::{
    DEADLINE_GRACE, MIN_LINE_CAP, NotDelivered, UsedWorker, WorkerProcess, describe_status,
};
use crate::protocol::{FromWorker, ReadError, ToWorker, encode, reply_cap};
use crate::worker::JOB_LINE_CAP;

impl WorkerProcess {
    /// Run one job; the worker is consumed (killed and reaped) whatever
    /// happens. `Err(NotDelivered)` means the job never reached the worker
    /// (it died while idle), so the caller may retry on another.
    pub fn run(
        self,
        code: &str,
        bridge: Arc<dyn ToolBridge>,
        limits: &Limits,
    ) -> Result<ExecOutcome, NotDelivered> {
        self.run_then(code, bridge, limits, |used| {
            used.end();
        })
    }

    /// [`run`](Self::run), but after a normal finish (`done` read: the
    /// worker is exiting on its own) the worker is handed to `retire`
    /// un-killed, its job pipe closed, for it to kill and reap (the pool
    /// does that on its reaper thread, so the caller gets the outcome
    /// without waiting for the kill). After a failure it is killed and
    /// reaped here, since its exit status goes into the error.
    pub fn run_then(
        mut self,
        code: &str,
        bridge: Arc<dyn ToolBridge>,
        limits: &Limits,
        retire: impl FnOnce(UsedWorker),
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
                Ok(FromWorker::Done { mut outcome }) => {
                    // The worker is not trusted to have kept the error cap.
                    if let Err(e) = &mut outcome.result {
                        e.bound(limits.error_bytes());
                    }
                    break Ok(outcome);
                }
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
        if outcome.is_ok() {
            // Close the job pipe unless a host-call thread is writing a
            // late answer to it (it may be blocked on a full pipe until
            // `retire` kills the worker; its copy closes when it ends).
            // Late answers otherwise find no pipe.
            if let Ok(mut s) = stdin.try_lock() {
                *s = None;
            }
            if let Some(used) = self.retire() {
                retire(used);
            }
        } else {
            // Kill first: a host-call thread blocked writing to a full pipe
            // then gets EPIPE and releases the lock.
            self.kill_and_reap();
            if let Ok(mut s) = stdin.lock() {
                *s = None;
            }
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
