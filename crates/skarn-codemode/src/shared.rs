//! State shared between the isolate thread and the caller of `execute`:
//! logs, counters, the cancel and abort flags the interrupt handler reads,
//! and the deadline.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::human::fmt_duration;
use crate::limits::Limits;
use crate::logs::LogSink;
use crate::outcome::{ErrorKind, ExecError};

/// State shared between the isolate thread and the caller of `execute`.
pub(crate) struct Shared {
    pub(crate) logs: Mutex<LogSink>,
    pub(crate) tool_calls: AtomicU32,
    /// Set by the caller when it gives up on the run.
    pub(crate) cancel: AtomicBool,
    /// Set by a host function that ends the run (e.g. the tool-call budget).
    pub(crate) abort: Mutex<Option<ExecError>>,
    pub(crate) aborted: AtomicBool,
    pub(crate) deadline: Instant,
    pub(crate) limits: Limits,
    /// Set by the allocator when the memory limit refused an allocation.
    pub(crate) oom: Arc<AtomicBool>,
    /// Set by the caller of `execute` once the deadline has passed: from
    /// then on the allocator refuses every request, so native work that
    /// allocates (a BigInt converted to text, each element a built-in
    /// joins or sorts) fails at once instead of running on between the
    /// engine's interrupt checks (attack F6).
    pub(crate) expired: Arc<AtomicBool>,
    /// JSON bytes of tool arguments handed to the bridge and not answered
    /// yet: capped at the memory limit, so host-side copies stay bounded.
    pub(crate) args_in_flight: AtomicUsize,
}

impl Shared {
    pub(crate) fn new(limits: &Limits, start: Instant) -> Self {
        Shared {
            logs: Mutex::new(LogSink::new(limits.max_log_lines, limits.max_log_bytes)),
            tool_calls: AtomicU32::new(0),
            cancel: AtomicBool::new(false),
            abort: Mutex::new(None),
            aborted: AtomicBool::new(false),
            // A deadline too far to represent is as good as ten years.
            deadline: start
                .checked_add(limits.deadline)
                .unwrap_or_else(|| start + Duration::from_secs(10 * 365 * 86_400)),
            limits: limits.clone(),
            oom: Arc::new(AtomicBool::new(false)),
            expired: Arc::new(AtomicBool::new(false)),
            args_in_flight: AtomicUsize::new(0),
        }
    }

    pub(crate) fn should_interrupt(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
            || self.cancel.load(Ordering::Relaxed)
            || Instant::now() >= self.deadline
    }

    pub(crate) fn set_abort(&self, err: ExecError) {
        let mut slot = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
        self.aborted.store(true, Ordering::Relaxed);
    }

    pub(crate) fn take_abort(&self) -> Option<ExecError> {
        if !self.aborted.load(Ordering::Relaxed) {
            return None;
        }
        self.abort.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn deadline_error(&self, what: &str) -> ExecError {
        ExecError::new(
            ErrorKind::Deadline,
            format!(
                "deadline of {} exceeded{what}",
                fmt_duration(self.limits.deadline)
            ),
        )
    }

    pub(crate) fn log_line(&self, line: String) {
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }
}
