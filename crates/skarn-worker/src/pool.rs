//! A warm pool of pre-started, already-confined workers.
//!
//! Each worker runs exactly one script and is then killed; a background
//! thread keeps `warm` fresh workers ready. A worker that finished normally
//! is handed, its job pipe closed, to the pool's reaper thread, which
//! SIGKILLs its process group and reaps it as soon as it is scheduled, so
//! the caller gets the outcome without waiting for the kill (the worker
//! has already sent its outcome and is exiting on its own; the kill is
//! the guarantee that it ends whatever it does). A job whose memory or stack
//! limit is above what the warm workers were started for (their RLIMIT_AS)
//! gets a cold worker of its own, as does a job arriving while the pool is empty.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that spawned a worker exits;
//! warm workers are spawned by the pool's own long-lived thread, and cold
//! ones by the caller's thread, which waits for them to finish.

use std::collections::VecDeque;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use skarn_codemode::{ErrorKind, ExecError, ExecOutcome, Limits, ToolBridge};

use crate::process::{SpawnError, UsedWorker, WorkerCommand, WorkerProcess, WorkerSize};

/// Default number of warm workers.
pub const DEFAULT_WARM: usize = 2;

/// Pool settings.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// How to start a worker.
    pub command: WorkerCommand,
    /// Workers kept ready (0 disables the warm pool: one cold start per run).
    pub warm: usize,
    /// QuickJS limits warm workers are sized for (their RLIMIT_AS follows
    /// from them). Jobs asking for more memory or stack get a cold worker.
    pub size: WorkerSize,
}

impl PoolConfig {
    /// `warm` workers of the running `skarn` binary, sized for the default
    /// memory limit.
    pub fn new(command: WorkerCommand) -> Self {
        PoolConfig {
            command,
            warm: DEFAULT_WARM,
            size: WorkerSize::default(),
        }
    }
}

struct State {
    warm: VecDeque<WorkerProcess>,
    stopping: bool,
    last_error: Option<String>,
}

struct Shared {
    cfg: PoolConfig,
    state: Mutex<State>,
    cond: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs Code Mode scripts in confined worker processes.
///
/// `execute` is blocking, like [`skarn_codemode::execute`]: call it from a
/// plain thread or `tokio::task::spawn_blocking`. It is safe to call from
/// many threads at once; each call gets its own worker.
pub struct WorkerPool {
    shared: Arc<Shared>,
    refill: Option<JoinHandle<()>>,
    /// To the reaper thread; `None` if it could not be started (used
    /// workers are then killed and reaped on the caller's thread).
    reaper: Option<(Mutex<Sender<UsedWorker>>, JoinHandle<()>)>,
}

impl WorkerPool {
    /// Create the pool and start filling it in the background.
    pub fn new(cfg: PoolConfig) -> Self {
        let shared = Arc::new(Shared {
            cfg,
            state: Mutex::new(State {
                warm: VecDeque::new(),
                stopping: false,
                last_error: None,
            }),
            cond: Condvar::new(),
        });
        let refill = if shared.cfg.warm > 0 {
            let s = shared.clone();
            std::thread::Builder::new()
                .name("skarn-worker-refill".into())
                .spawn(move || refill_loop(&s))
                .ok()
        } else {
            None
        };
        let (tx, rx) = channel::<UsedWorker>();
        let reaper = std::thread::Builder::new()
            .name("skarn-worker-reaper".into())
            .spawn(move || {
                // Ends when the pool drops the sender, after the last one.
                while let Ok(used) = rx.recv() {
                    used.end();
                }
            })
            .ok()
            .map(|h| (Mutex::new(tx), h));
        WorkerPool {
            shared,
            refill,
            reaper,
        }
    }

    /// Kill and reap a worker whose job is over: on the reaper thread, or
    /// here if there is none.
    fn retire(&self, used: UsedWorker) {
        match &self.reaper {
            Some((tx, _)) => {
                let tx = tx.lock().unwrap_or_else(|p| p.into_inner());
                // A closed channel gives the worker back: ended on drop.
                let _ = tx.send(used);
            }
            None => {
                used.end();
            }
        }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.shared.cfg
    }

    /// Pids of the workers currently waiting, ready and confined.
    pub fn warm_pids(&self) -> Vec<u32> {
        self.shared.lock().warm.iter().map(|w| w.pid()).collect()
    }

    /// Wait until `n` workers are warm (or `timeout` passes); returns how
    /// many are. For start-up and tests.
    pub fn wait_warm(&self, n: usize, timeout: Duration) -> usize {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let have = self.shared.lock().warm.len();
            if have >= n || std::time::Instant::now() >= deadline {
                return have;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The last error the background refill met, if any.
    pub fn last_error(&self) -> Option<String> {
        self.shared.lock().last_error.clone()
    }

    /// A worker able to run a job with `limits`: a warm one if possible,
    /// else a fresh one started on this thread.
    fn take(&self, limits: &Limits) -> Result<WorkerProcess, SpawnError> {
        if self.shared.cfg.size.fits(limits) {
            // The refill is triggered when this job ends, so a new worker's
            // start-up does not compete with the job for the CPU.
            if let Some(w) = self.shared.lock().warm.pop_front() {
                return Ok(w);
            }
        }
        let size = WorkerSize::for_limits(limits).max(self.shared.cfg.size);
        WorkerProcess::start(&self.shared.cfg.command, size)
    }

    /// Run `code` in a confined worker; host calls are answered by `bridge`
    /// on the calling process. Never panics; a worker failure becomes an
    /// `ExecOutcome` with an error (kind `internal`, or the limit that was
    /// overrun) and the pool keeps serving.
    pub fn execute(&self, code: &str, bridge: Arc<dyn ToolBridge>, limits: &Limits) -> ExecOutcome {
        // A warm worker may have died while idle (killed from outside);
        // the job then never reached it and another one is tried.
        for _ in 0..3 {
            let w = match self.take(limits) {
                Ok(w) => w,
                Err(e) => {
                    return ExecOutcome::failed(ExecError::new(ErrorKind::Internal, e.to_string()));
                }
            };
            let result = w.run_then(code, bridge.clone(), limits, |used| self.retire(used));
            self.shared.cond.notify_all();
            if let Ok(outcome) = result {
                return outcome;
            }
        }
        ExecOutcome::failed(ExecError::new(
            ErrorKind::Internal,
            "no Code Mode worker accepted the job",
        ))
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.cond.notify_all();
        if let Some(h) = self.refill.take() {
            let _ = h.join();
        }
        // Dropping each WorkerProcess kills and reaps it.
        self.shared.lock().warm.clear();
        if let Some((tx, h)) = self.reaper.take() {
            drop(tx);
            let _ = h.join();
        }
    }
}

fn refill_loop(s: &Shared) {
    let mut failures: u32 = 0;
    loop {
        {
            let mut st = s.lock();
            while !st.stopping && st.warm.len() >= s.cfg.warm {
                st = s.cond.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if st.stopping {
                return;
            }
        }
        match WorkerProcess::start(&s.cfg.command, s.cfg.size) {
            Ok(w) => {
                failures = 0;
                let mut st = s.lock();
                if st.stopping {
                    return; // `w` is killed on drop
                }
                st.warm.push_back(w);
            }
            Err(e) => {
                failures = failures.saturating_add(1);
                s.lock().last_error = Some(e.to_string());
                // Back off (up to 5 s) so a broken setup does not spin.
                let wait =
                    Duration::from_millis(50u64 << failures.min(7)).min(Duration::from_secs(5));
                let st = s.lock();
                if st.stopping {
                    return;
                }
                let _ = s.cond.wait_timeout(st, wait);
            }
        }
    }
}
