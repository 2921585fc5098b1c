//! In-process runs cannot pile up stuck threads: past
//! `MAX_ABANDONED_THREADS` abandoned isolate threads still running,
//! `execute` refuses new scripts with a clear error, and accepts them again
//! once those threads stop; and native work that runs long between the
//! engine's interrupt checks no longer leaves such threads behind (attack
//! F6). (Its own test binary: the count is per process; the tests take a
//! lock so they do not count each other's threads.)

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use skarn_codemode::bridge::NoServers;
use skarn_codemode::{ErrorKind, Limits, MAX_ABANDONED_THREADS, abandoned_threads, execute};
use skarn_test_support::{FakeBridge, Gate};

fn limits_ms(deadline_ms: u64) -> Limits {
    Limits {
        deadline: Duration::from_millis(deadline_ms),
        ..Limits::default()
    }
}

static COUNTED: Mutex<()> = Mutex::new(());

/// Wait (at most `STUCK_AFTER`) until no abandoned thread is running.
fn until_none_abandoned() {
    let until = Instant::now() + STUCK_AFTER;
    while abandoned_threads() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Far above any machine's scheduling delay, far below the hours the
/// scripts below ran past their deadline before the fix.
const STUCK_AFTER: Duration = Duration::from_secs(120);

#[test]
fn abandoned_threads_are_capped_and_counted_until_they_stop() {
    let _counted = COUNTED.lock().unwrap_or_else(|p| p.into_inner());
    let gate = Arc::new(Gate::new());
    let limits = limits_ms(200);
    for i in 0..MAX_ABANDONED_THREADS {
        let out = execute(
            "return await skarn.callTool('s', 't')",
            Arc::new(FakeBridge::blocking_until(gate.clone())),
            &limits,
        );
        let e = out.result.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Deadline, "{e}");
        assert!(e.message.contains("abandoned"), "{e}");
        assert_eq!(abandoned_threads(), i + 1);
    }
    let refused = execute("return 1", Arc::new(NoServers), &limits_ms(5_000));
    let e = refused.result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Internal, "{e}");
    assert!(e.message.contains("abandoned"), "{e}");
    assert!(e.message.contains("worker"), "{e}");

    // The stuck threads get unstuck: they stop at their next interrupt
    // check and the count goes back to zero.
    gate.open();
    until_none_abandoned();
    assert_eq!(abandoned_threads(), 0);
    let out = execute("return 1", Arc::new(NoServers), &limits_ms(5_000));
    assert_eq!(out.result, Ok(json!(1)));
}

/// Each step of these is seconds of native work between two of the
/// engine's interrupt checks (one every ten thousand calls or jumps):
/// a 1 Mbit BigInt converted to text (quadratic), two 16 MiB strings
/// compared. Before the fix each ran for many minutes to hours past its
/// deadline in an abandoned thread, and five of them locked `execute` out.
const LONG_STEPS: &[&str] = &[
    "const b = 2n ** 1048000n; const a = Array(64).fill(b); a.sort(); return 1",
    "const b = 2n ** 1048000n; return Array(64).fill(b).toSorted().length",
    "const b = 2n ** 1048000n; let n = 0; for (;;) n += String(b).length",
    "const b = 2n ** 1048000n; return Array(1000).fill(b).join().length",
    "const s = 'a'.repeat(2 ** 24); const a = Array(65536).fill(s); a.sort(); return 1",
];

/// At the default settings (in process), every script of native work that
/// runs long between interrupt checks ends at its deadline, its thread
/// stops, and `execute` keeps working afterwards.
#[test]
fn long_native_steps_end_at_the_deadline_and_execute_keeps_working() {
    let _counted = COUNTED.lock().unwrap_or_else(|p| p.into_inner());
    assert!(LONG_STEPS.len() > MAX_ABANDONED_THREADS);
    let runs: Vec<_> = LONG_STEPS
        .iter()
        .map(|code| {
            std::thread::spawn(move || {
                (
                    *code,
                    execute(code, Arc::new(NoServers), &Limits::default()),
                )
            })
        })
        .collect();
    for run in runs {
        let (code, out) = run.join().unwrap();
        match &out.result {
            Err(e) if matches!(e.kind, ErrorKind::Deadline | ErrorKind::Memory) => {}
            other => panic!("{code:?}: expected the deadline or the memory limit, got {other:?}"),
        }
    }
    // A thread abandoned at deadline + 750 ms (mid-step) stops within a
    // step; before the fix they ran on for hours.
    until_none_abandoned();
    assert_eq!(abandoned_threads(), 0, "isolate threads still stuck");
    let out = execute(
        "return [3, 1, 2].sort()",
        Arc::new(NoServers),
        &Limits::default(),
    );
    assert_eq!(out.result, Ok(json!([1, 2, 3])));
}
