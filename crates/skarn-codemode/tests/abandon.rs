//! In-process runs cannot pile up stuck threads: past
//! `MAX_ABANDONED_THREADS` abandoned isolate threads still running,
//! `execute` refuses new scripts with a clear error, and accepts them again
//! once those threads stop. (Its own test binary: the count is per process.)

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::limits_ms;
use serde_json::{Value, json};
use skarn_codemode::bridge::NoServers;
use skarn_codemode::{
    BridgeFuture, ErrorKind, MAX_ABANDONED_THREADS, ToolBridge, abandoned_threads, execute,
};

/// A broken bridge whose `poll` blocks its thread until the gate opens.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

struct Blocking(Arc<Gate>);

impl ToolBridge for Blocking {
    fn call_tool(&self, _: &str, _: &str, _: Value) -> BridgeFuture<'_, Value> {
        let gate = self.0.clone();
        Box::pin(async move {
            let mut open = gate.open.lock().unwrap();
            while !*open {
                open = gate.cv.wait(open).unwrap();
            }
            Ok(json!(1))
        })
    }
    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        Box::pin(async { Ok(json!([])) })
    }
    fn read_resource(&self, _: &str, _: &str) -> BridgeFuture<'_, Value> {
        Box::pin(async { Ok(json!(null)) })
    }
}

#[test]
fn abandoned_threads_are_capped_and_counted_until_they_stop() {
    let gate = Arc::new(Gate::default());
    let limits = limits_ms(200);
    for i in 0..MAX_ABANDONED_THREADS {
        let out = execute(
            "return await skarn.callTool('s', 't')",
            Arc::new(Blocking(gate.clone())),
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
    *gate.open.lock().unwrap() = true;
    gate.cv.notify_all();
    let until = Instant::now() + Duration::from_secs(30);
    while abandoned_threads() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(abandoned_threads(), 0);
    let out = execute("return 1", Arc::new(NoServers), &limits_ms(5_000));
    assert_eq!(out.result, Ok(json!(1)));
}
