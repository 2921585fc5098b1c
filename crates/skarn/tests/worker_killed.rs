//! A worker killed from outside in the middle of a run: the caller gets a
//! clear error, the child is reaped, and the pool keeps serving.
//!
//! A test binary of its own, outside `tests/it`: the bridge kills every
//! child of the test process and then requires that none is left, so any
//! other test running in the same process would lose its children and
//! break this check.
#![cfg(target_os = "linux")] // needs the Linux sandbox or worker
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use skarn_codemode::{ErrorKind, Limits, bridge::NoServers};
use skarn_test_support::FakeBridge;
use skarn_worker::{PoolConfig, WorkerCommand, WorkerPool};

static KILLED: AtomicBool = AtomicBool::new(false);

fn my_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(me.as_str()) {
            out.push(pid);
        }
    }
    out
}

/// Kills every child of this process (the one running worker: the pool
/// has no warm workers) when the script makes its first host call.
fn kill_on_call() -> FakeBridge {
    FakeBridge::echo().on_call_async(|_, _, _| {
        for pid in my_children() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        // The `kill` helper itself is a child until `status` has reaped it.
        KILLED.store(true, Ordering::SeqCst);
        Box::pin(async {
            std::thread::sleep(Duration::from_millis(200));
            Ok(json!(1))
        })
    })
}

fn engine_ready() -> bool {
    skarn_codemode::execute("return 1", Arc::new(NoServers), &Limits::default()).result
        == Ok(json!(1))
}

#[test]
fn worker_killed_mid_run() {
    assert!(
        engine_ready(),
        "the Code Mode engine answers a plain script"
    );
    let mut cfg = PoolConfig::new(WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn")));
    cfg.warm = 0;
    let pool = WorkerPool::new(cfg);
    let o = pool.execute(
        "await skarn.callTool('s', 't', {}); for (;;) {}",
        Arc::new(kill_on_call()),
        &Limits {
            deadline: Duration::from_secs(20),
            ..Limits::default()
        },
    );
    let e = o.result.expect_err("a killed worker cannot succeed");
    assert_eq!(e.kind, ErrorKind::Internal, "{}", e.message);
    assert!(e.message.contains("signal 9"), "{}", e.message);
    let t = std::time::Instant::now();
    while !KILLED.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(my_children().is_empty(), "the killed worker was not reaped");
    let o = pool.execute("return 1", Arc::new(NoServers), &Limits::default());
    assert_eq!(o.result, Ok(json!(1)), "the pool keeps serving");
}
