//! skarn-codemode: run a short LLM-written JS/TS script so that only its
//! returned value and its `skarn.log` lines ever leave it.
//!
//! Guarantees of [`execute`]:
//! - **Validated**: before anything runs, oxc parses the script (TypeScript
//!   accepted and stripped) and the validator ([`validate`]) rejects banned
//!   names and properties, listing every violation at the user's line:col.
//! - **Hermetic**: a fresh QuickJS-NG runtime per script, with no
//!   filesystem, network, timers or module loader, and no string-to-code
//!   path at all (the execution context lacks the eval intrinsic; the script
//!   arrives as bytecode). Its only way out is the [`ToolBridge`].
//! - **Bounded**: memory, native stack, wall-clock deadline (uncatchable
//!   interrupt), tool-call budget, output cap and log caps ([`Limits`]),
//!   each ending the run with its own [`ErrorKind`]. The call returns within
//!   the deadline plus about a second even when the isolate is stuck in
//!   native code: the isolate thread is then abandoned.
//! - **Total**: it never panics; every failure is an [`ExecOutcome`].
//!
//! The contract every other crate codes against lives in [`bridge`],
//! [`limits`] and [`outcome`].

mod alloc;
mod args;
mod bounds;
pub mod bridge;
mod convert;
mod depth;
mod engine;
mod errcap;
mod errtext;
mod host;
mod human;
mod isolate_thread;
pub mod limits;
mod logs;
pub mod outcome;
mod position;
mod prelude_bc;
mod prepare;
mod report;
mod shared;
pub mod validate;

pub use bridge::{BridgeError, BridgeFuture, ToolBridge};
pub use isolate_thread::IsolateThread;
pub use limits::Limits;
pub use outcome::{ErrorKind, ExecError, ExecOutcome};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use bounds::{
    MAX_ARGS_BYTES, MAX_ERROR_BYTES, MAX_ERROR_FRAMES, MAX_STACK_BYTES, MIN_ERROR_BYTES,
    MIN_MEMORY_BYTES, MIN_STACK_BYTES,
};
pub use depth::{MAX_RESULT_DEPTH, json_depth, result_too_deep};
pub use prepare::{MAX_NESTING_TOKENS, MAX_SCRIPT_BYTES};

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use shared::Shared;

/// How long past the deadline `execute` waits for a stuck isolate before
/// abandoning its thread.
pub const ABANDON_GRACE: Duration = Duration::from_millis(750);

/// Most isolate threads [`execute`] may have abandoned and still running in
/// this process. Past it, `execute` refuses new scripts with an `Internal`
/// error until one of them stops, so a process can never pile up spinning
/// threads (a worker process is killed instead and never gets here).
pub const MAX_ABANDONED_THREADS: usize = 4;

/// Isolate threads abandoned by [`execute`] that have not stopped yet.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// How many isolate threads `execute` abandoned at their deadline are still
/// running in this process (each ends at its next interrupt check).
pub fn abandoned_threads() -> usize {
    ABANDONED.load(Ordering::SeqCst)
}

/// Run states of an isolate thread (see `execute`).
const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const GIVEN_UP: u8 = 2;

/// Extra native stack given to the isolate thread beyond `limits.stack_bytes`
/// (host-side code, conversions and QuickJS's own frames).
const THREAD_STACK_SLACK: usize = 4 << 20;

/// Native stack reserved for the thread [`execute`] runs `code` on: the
/// larger of the isolate's needs (`limits.stack_bytes` plus 4 MiB) and the
/// front end's, which grows with the script's nesting bound (at most about
/// 42 MiB in release builds). Useful to a worker process that caps its
/// address space.
pub fn isolate_thread_stack(code: &str, limits: &Limits) -> usize {
    limits
        .stack_bytes
        .clamp(MIN_STACK_BYTES, MAX_STACK_BYTES)
        .saturating_add(THREAD_STACK_SLACK)
        .max(prepare::front_end_stack(prepare::nesting_bound(code)))
}

/// Nesting bound (counted as for [`isolate_thread_stack`]) that the stack
/// of [`premade_isolate_stack`] covers: a script of a page or so.
pub const PREMADE_NESTING: usize = 256;

/// Native stack for an [`IsolateThread`] made before its script is known:
/// what [`isolate_thread_stack`] gives a script of nesting bound
/// [`PREMADE_NESTING`] under `limits`. A script needing more runs on a
/// fresh thread instead.
pub fn premade_isolate_stack(limits: &Limits) -> usize {
    limits
        .stack_bytes
        .clamp(MIN_STACK_BYTES, MAX_STACK_BYTES)
        .saturating_add(THREAD_STACK_SLACK)
        .max(prepare::front_end_stack(PREMADE_NESTING))
}

/// Parse, validate and strip `code` without running it: `Ok` when it would
/// be accepted, else the `Syntax` or `Rejected` error `execute` would give.
pub fn check(code: &str) -> Result<(), ExecError> {
    prepare_on_own_thread(code).map(|_| ())
}

/// `prepare` behind a panic guard: a parser or transformer bug on hostile
/// input becomes an `Internal` error, never a panic.
fn prepare_guarded(code: &str) -> Result<prepare::Prepared, ExecError> {
    catch_unwind(|| prepare::prepare(code)).unwrap_or_else(|_| {
        Err(ExecError::new(
            ErrorKind::Internal,
            "the TypeScript front end failed on this script",
        ))
    })
}

/// The front end alone (parse, validate, strip, on its own thread):
/// the JavaScript the engine would run, or why the script is refused.
/// For fuzz targets and property tests; not part of the API.
#[doc(hidden)]
pub fn front_end_for_testing(code: &str) -> Result<String, ExecError> {
    prepare_on_own_thread(code).map(|p| p.js)
}

/// [`prepare_guarded`] on a thread whose stack fits the script's nesting
/// bound: deeply nested input can never overflow the caller's stack.
fn prepare_on_own_thread(code: &str) -> Result<prepare::Prepared, ExecError> {
    let stack = prepare::front_end_stack(prepare::nesting_bound(code));
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("skarn-codemode-frontend".into())
            .stack_size(stack)
            .spawn_scoped(scope, || prepare_guarded(code));
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(ExecError::new(
                    ErrorKind::Internal,
                    "the TypeScript front end failed on this script",
                ))
            }),
            Err(e) => Err(ExecError::new(
                ErrorKind::Internal,
                format!("cannot start the front-end thread: {e}"),
            )),
        }
    })
}

/// Validate, strip and run `code` (the body of an async function) in a fresh
/// hermetic isolate, with every host call going through `bridge`.
///
/// Blocking: call it from a plain thread or `tokio::task::spawn_blocking`.
/// It never panics and always returns within `limits.deadline` plus about a
/// second, even when the isolate is stuck in native code.
pub fn execute(code: &str, bridge: Arc<dyn ToolBridge>, limits: &Limits) -> ExecOutcome {
    isolate_thread::execute_with(code, bridge, limits, None)
}

/// The outcome of a script refused before any thread is given to it: too
/// large for the front end, or too many abandoned isolates still running.
fn refuse_early(code: &str, limits: &Limits, start: Instant) -> Option<ExecOutcome> {
    if code.len() > MAX_SCRIPT_BYTES {
        // Refused by the front end without spawning anything big.
        return Some(finished(
            prepare_guarded(code).map(|_| serde_json::Value::Null),
            Vec::new(),
            0,
            start,
            limits,
        ));
    }
    let stuck = abandoned_threads();
    if stuck >= MAX_ABANDONED_THREADS {
        let err = ExecError::new(
            ErrorKind::Internal,
            format!(
                "refusing to run: {stuck} earlier scripts were abandoned at their deadline and \
                 their threads are still running in this process (at most \
                 {MAX_ABANDONED_THREADS}); use isolation = \"worker\" or restart the process"
            ),
        );
        return Some(finished(Err(err), Vec::new(), 0, start, limits));
    }
    None
}

/// Like [`execute`] but runs the isolate on the calling thread, with no
/// abandonment: for a worker process whose parent enforces the deadline by
/// killing it. The calling thread needs `limits.stack_bytes` plus a few MiB
/// of native stack (a process main thread has 8 MiB).
pub fn execute_on_current_thread(
    code: &str,
    bridge: &dyn ToolBridge,
    limits: &Limits,
) -> ExecOutcome {
    let start = Instant::now();
    let prep = match prepare_on_own_thread(code) {
        Ok(p) => p,
        Err(e) => return finished(Err(e), Vec::new(), 0, start, limits),
    };
    let shared = Arc::new(Shared::new(limits, start));
    let result = run_guarded(&prep, bridge, &shared);
    finish_run(result, &shared, start)
}

/// The outcome of a run: its result plus the logs and call count `shared`
/// recorded.
fn finish_run(
    result: Result<serde_json::Value, ExecError>,
    shared: &Shared,
    start: Instant,
) -> ExecOutcome {
    let logs = shared
        .logs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .snapshot();
    let calls = shared.tool_calls.load(std::sync::atomic::Ordering::Relaxed);
    finished(result, logs, calls, start, &shared.limits)
}

fn run_guarded(
    prep: &prepare::Prepared,
    bridge: &dyn ToolBridge,
    shared: &Arc<Shared>,
) -> Result<serde_json::Value, ExecError> {
    catch_unwind(AssertUnwindSafe(|| engine::run(prep, bridge, shared))).unwrap_or_else(|_| {
        Err(ExecError::new(
            ErrorKind::Internal,
            "the Code Mode engine panicked",
        ))
    })
}

/// The outcome, with any error cut to the error cap (the engine already
/// keeps the script's text under it; this also covers every other message).
fn finished(
    mut result: Result<serde_json::Value, ExecError>,
    logs: Vec<String>,
    tool_calls: u32,
    start: Instant,
    limits: &Limits,
) -> ExecOutcome {
    if let Err(e) = &mut result {
        e.bound(limits.error_bytes());
    }
    ExecOutcome {
        result,
        logs,
        tool_calls,
        elapsed_ms: start.elapsed().as_millis().min(u128::from(u64::MAX)) as u64,
    }
}
