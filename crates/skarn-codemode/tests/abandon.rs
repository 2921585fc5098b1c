//! In-process runs cannot pile up stuck threads: past
//! `MAX_ABANDONED_THREADS` abandoned isolate threads still running,
//! `execute` refuses new scripts with a clear error, and accepts them again
//! once those threads stop. (Its own test binary: the count is per process.)

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
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

#[test]
fn abandoned_threads_are_capped_and_counted_until_they_stop() {
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
    let until = Instant::now() + Duration::from_secs(30);
    while abandoned_threads() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(abandoned_threads(), 0);
    let out = execute("return 1", Arc::new(NoServers), &limits_ms(5_000));
    assert_eq!(out.result, Ok(json!(1)));
}
