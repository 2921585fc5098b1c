//! 200 executes in a row through the warm pool leave no zombie and no
//! leaked descriptor in the parent. Alone in its test binary (outside
//! `tests/it`, which runs every other test in one process) so that no
//! other test opens descriptors or children meanwhile.
#![cfg(target_os = "linux")] // needs the Linux sandbox or worker
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use skarn_codemode::{Limits, bridge::NoServers};
use skarn_worker::{PoolConfig, WorkerCommand, WorkerPool};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// (pid, state) of every process whose parent is us.
fn children() -> Vec<(u32, char)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) S ppid ...": comm may contain spaces; split after ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid: u32 = f.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if ppid == me {
            out.push((pid, state));
        }
    }
    out
}

#[test]
fn two_hundred_executes_leave_no_zombies_and_no_leaked_fds() {
    let mut cfg = PoolConfig::new(WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn")));
    cfg.warm = 2;
    let pool = WorkerPool::new(cfg);
    assert_eq!(
        pool.wait_warm(2, Duration::from_secs(30)),
        2,
        "{:?}",
        pool.last_error()
    );
    let limits = Limits::default();
    let expected = skarn_codemode::execute("return 1", Arc::new(NoServers), &limits).result;
    // One run first so lazily created process-wide state exists.
    assert_eq!(
        pool.execute("return 1", Arc::new(NoServers), &limits)
            .result,
        expected
    );
    assert_eq!(pool.wait_warm(2, Duration::from_secs(30)), 2);
    let fds_before = open_fds();

    for i in 0..200 {
        let o = pool.execute("return 1", Arc::new(NoServers), &limits);
        assert_eq!(o.result, expected, "run {i}");
    }

    assert_eq!(pool.wait_warm(2, Duration::from_secs(30)), 2);
    // The pool's thread reaps finished workers just before it refills: wait
    // (bounded) until it has caught up, then require the exact state.
    let settled = |kids: &[(u32, char)]| {
        let mut warm = pool.warm_pids();
        warm.sort();
        let mut alive: Vec<u32> = kids.iter().map(|(p, _)| *p).collect();
        alive.sort();
        alive == warm && warm.len() == 2
    };
    let t = std::time::Instant::now();
    while !settled(&children()) && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let kids = children();
    let zombies: Vec<_> = kids.iter().filter(|(_, s)| *s == 'Z').collect();
    assert!(zombies.is_empty(), "zombies: {zombies:?}");
    assert!(
        settled(&kids),
        "only the warm workers may still exist: {kids:?} vs {:?}",
        pool.warm_pids()
    );
    assert_eq!(open_fds(), fds_before, "descriptors leaked");

    drop(pool);
    assert!(
        children().is_empty(),
        "workers left after the pool was dropped: {:?}",
        children()
    );
}
