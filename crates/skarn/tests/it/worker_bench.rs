//! Benchmark (not a timed test: `#[ignore]`d, run by bench/worker/run.sh in
//! release mode). Round trip of `return 1`: in-process, through a warm
//! worker pool, and with the pool disabled (a cold worker per run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use skarn_codemode::{Limits, bridge::NoServers};
use skarn_worker::{Executor, Isolation, PoolConfig, WorkerCommand};

fn stats(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{name:<44} n={:<4} median {:>7.3} ms   p10 {:>7.3}   p90 {:>7.3}   max {:>7.3}",
        v.len(),
        q(0.5),
        q(0.1),
        q(0.9),
        q(1.0)
    );
}

fn runs() -> usize {
    std::env::var("SKARN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

#[test]
#[ignore = "benchmark; run bench/worker/run.sh"]
fn bench_return_1_round_trip() {
    let n = runs();
    let limits = Limits::default();
    let code = "return 1";
    let cmd = WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn"));

    let inproc = Executor::new(Isolation::InProcess, PoolConfig::new(cmd.clone())).unwrap();
    let expected = inproc
        .execute(code, Arc::new(NoServers), &limits)
        .outcome
        .result;
    println!("result of `return 1`: {expected:?}");
    let mut t = Vec::new();
    for _ in 0..n {
        let s = Instant::now();
        let o = inproc.execute(code, Arc::new(NoServers), &limits);
        t.push(s.elapsed());
        assert_eq!(o.outcome.result, expected);
    }
    stats("in_process", t);

    for warmup in [true, false] {
        let label = if warmup { "" } else { ", no engine warm-up" };
        let mut c = cmd.clone();
        c.engine_warmup = warmup;
        let mut cfg = PoolConfig::new(c.clone());
        cfg.warm = 2;
        let warm = Executor::new(Isolation::Worker, cfg).unwrap();
        let pool = warm.pool().unwrap();
        let mut t = Vec::new();
        for _ in 0..n {
            // A gateway sees executes spaced out by model turns: measure an
            // execute that finds the pool warm.
            pool.wait_warm(2, Duration::from_secs(10));
            let s = Instant::now();
            let o = warm.execute(code, Arc::new(NoServers), &limits);
            t.push(s.elapsed());
            assert_eq!(o.outcome.result, expected);
        }
        stats(&format!("worker, warm pool (2), pool refilled{label}"), t);

        if warmup {
            let mut t = Vec::new();
            pool.wait_warm(2, Duration::from_secs(10));
            for _ in 0..n.min(100) {
                let s = Instant::now();
                let o = warm.execute(code, Arc::new(NoServers), &limits);
                t.push(s.elapsed());
                assert_eq!(o.outcome.result, expected);
            }
            stats("worker, warm pool (2), back-to-back burst", t);
        }
        drop(warm);

        let mut cfg = PoolConfig::new(c);
        cfg.warm = 0;
        let cold = Executor::new(Isolation::Worker, cfg).unwrap();
        let mut t = Vec::new();
        for _ in 0..n {
            let s = Instant::now();
            let o = cold.execute(code, Arc::new(NoServers), &limits);
            t.push(s.elapsed());
            assert_eq!(o.outcome.result, expected);
        }
        stats(
            &format!("worker, pool disabled (cold spawn per run){label}"),
            t,
        );
    }
}
