//! The thread a script runs on, and how [`crate::execute`] waits for it:
//! the result within the deadline plus [`crate::ABANDON_GRACE`], else the
//! thread is abandoned and counted until it stops.
//!
//! [`IsolateThread`] makes that thread ahead of time, so a process that runs
//! one script per life (the Code Mode worker) creates no thread on the
//! script's path; a script whose front end needs more stack than the
//! pre-made thread has, or one arriving while it is busy, gets a fresh
//! thread exactly as [`crate::execute`] would give it.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::shared::Shared;
use crate::{
    ABANDON_GRACE, ABANDONED, ErrorKind, ExecError, ExecOutcome, FINISHED, GIVEN_UP, Limits,
    RUNNING, ToolBridge, finish_run, isolate_thread_stack, prepare_guarded, run_guarded,
};

type RunResult = Result<serde_json::Value, ExecError>;

/// One script for an isolate thread, and where its result goes.
struct Job {
    code: String,
    bridge: Arc<dyn ToolBridge>,
    shared: Arc<Shared>,
    state: Arc<AtomicU8>,
    tx: SyncSender<RunResult>,
}

impl Job {
    /// Front end and engine on the current thread (whose stack must be
    /// `isolate_thread_stack(code, limits)` at least).
    fn run(self) {
        let r = prepare_guarded(&self.code)
            .and_then(|prep| run_guarded(&prep, &*self.bridge, &self.shared));
        drop(self.bridge);
        let _ = self.tx.send(r);
        if self
            .state
            .compare_exchange(RUNNING, FINISHED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // The caller gave up on this thread and counted it.
            ABANDONED.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A thread started ahead of time that runs scripts like
/// [`crate::execute`] (same limits, same deadline and abandonment), for
/// scripts whose front end fits its stack.
pub struct IsolateThread {
    jobs: Mutex<Sender<Job>>,
    stack: usize,
    busy: Arc<AtomicBool>,
}

impl IsolateThread {
    /// Start the thread with `stack` bytes of native stack. It waits for
    /// scripts until this value is dropped.
    pub fn spawn(stack: usize) -> std::io::Result<Self> {
        let (jobs, rx): (Sender<Job>, Receiver<Job>) = std::sync::mpsc::channel();
        let busy = Arc::new(AtomicBool::new(false));
        let thread_busy = busy.clone();
        std::thread::Builder::new()
            .name("skarn-codemode".into())
            .stack_size(stack)
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job.run();
                    thread_busy.store(false, Ordering::SeqCst);
                }
            })?;
        Ok(IsolateThread {
            jobs: Mutex::new(jobs),
            stack,
            busy,
        })
    }

    /// The native stack the thread was made with.
    pub fn stack(&self) -> usize {
        self.stack
    }

    /// [`crate::execute`], on this thread when `code`'s front end fits its
    /// stack and it is idle, else on a fresh thread.
    pub fn execute(&self, code: &str, bridge: Arc<dyn ToolBridge>, limits: &Limits) -> ExecOutcome {
        execute_with(code, bridge, limits, Some(self))
    }

    /// Hand `job` to the thread if it can take it; else give it back.
    fn offer(&self, job: Job, needs: usize) -> Result<(), Job> {
        if needs > self.stack
            || self
                .busy
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return Err(job);
        }
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        jobs.send(job).map_err(|e| {
            self.busy.store(false, Ordering::SeqCst);
            e.0
        })
    }
}

/// The body of [`crate::execute`] once the script passed the size and
/// abandonment checks: run it on `premade` if it can take it, else on a
/// new thread, and wait for the result within the deadline.
pub(crate) fn execute_with(
    code: &str,
    bridge: Arc<dyn ToolBridge>,
    limits: &Limits,
    premade: Option<&IsolateThread>,
) -> ExecOutcome {
    let start = Instant::now();
    if let Some(early) = crate::refuse_early(code, limits, start) {
        return early;
    }
    let stack = isolate_thread_stack(code, limits);
    let shared = Arc::new(Shared::new(limits, start));
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let state = Arc::new(AtomicU8::new(RUNNING));
    let mut job = Job {
        code: code.to_owned(),
        bridge,
        shared: shared.clone(),
        state: state.clone(),
        tx,
    };
    if let Some(t) = premade {
        match t.offer(job, stack) {
            Ok(()) => return wait(&rx, &shared, &state, limits, start),
            Err(back) => job = back,
        }
    }
    let spawned = std::thread::Builder::new()
        .name("skarn-codemode".into())
        .stack_size(stack)
        .spawn(move || job.run());
    if let Err(e) = spawned {
        let err = ExecError::new(
            ErrorKind::Internal,
            format!("cannot start the isolate thread: {e}"),
        );
        return finish_run(Err(err), &shared, start);
    }
    wait(&rx, &shared, &state, limits, start)
}

/// The isolate's result, or a deadline error once the deadline plus
/// [`ABANDON_GRACE`] has passed (the thread is then abandoned and counted).
fn wait(
    rx: &Receiver<RunResult>,
    shared: &Shared,
    state: &AtomicU8,
    limits: &Limits,
    start: Instant,
) -> ExecOutcome {
    // At the deadline the isolate's allocator starts refusing (see
    // `alloc.rs`): native work between two interrupt checks then fails at
    // its next allocation instead of running on.
    let first = match rx.recv_timeout(limits.deadline.saturating_sub(start.elapsed())) {
        Ok(r) => Ok(r),
        Err(_) => {
            shared.expired.store(true, Ordering::Relaxed);
            Err(())
        }
    };
    let wait = limits.deadline.saturating_add(ABANDON_GRACE);
    let result = match first.or_else(|()| rx.recv_timeout(wait.saturating_sub(start.elapsed()))) {
        Ok(r) => r,
        Err(_) => {
            // Stuck in native code that never polls for interrupts: abandon
            // the thread (it stops at its next interrupt check, or dies with
            // the process), and count it until it stops.
            shared.cancel.store(true, Ordering::Relaxed);
            ABANDONED.fetch_add(1, Ordering::SeqCst);
            match state.compare_exchange(RUNNING, GIVEN_UP, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => Err(shared
                    .deadline_error(" (the isolate was stuck in native code and was abandoned)")),
                Err(_) => {
                    // It finished in the meantime.
                    ABANDONED.fetch_sub(1, Ordering::SeqCst);
                    rx.recv().unwrap_or_else(|_| Err(shared.deadline_error("")))
                }
            }
        }
    };
    finish_run(result, shared, start)
}
