//! Throughput benchmark: compress 1 MiB of real output per profile.
//!
//! Each input is a real fixture repeated until it reaches 1 MiB (a long
//! clippy run, a long test run, a huge find). Prints the best of 20 runs in
//! wall time and in CPU time of the thread (the latter is stable on a busy
//! shared machine).
//! Run: `cargo run --release -p skarn-compress --example bench`
//! (or bench/compress/run.sh).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;
use std::time::{Duration, Instant};

use skarn_compress::Compressor;

const CASES: &[(&str, &str, i32)] = &[
    ("cargo_clippy_pedantic", "cargo clippy", 0),
    ("cargo_test_pass", "cargo test", 0),
    ("cargo_test_fail", "cargo test", 101),
    ("pytest_fail_v", "pytest -v", 1),
    ("git_diff_range", "git diff HEAD~3", 0),
    ("git_log_stat", "git log --stat", 0),
    ("find_doc", "find /usr/share/doc", 0),
    ("ls_la", "ls -la", 0),
    ("grep_rn", "grep -rn def .", 0),
    ("python_traceback", "python3 etl.py", 1),
    ("make_gcc", "make -k", 2),
    ("npm_install_eresolve", "npm install", 1),
];

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let c = Compressor::builtin();
    let target = 1 << 20;
    println!("| input (1 MiB) | profile | best wall | median wall | best CPU | output bytes |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut worst = Duration::ZERO;
    for (name, cmd, exit) in CASES {
        let one = std::fs::read(dir.join(format!("{name}.out"))).expect("fixture");
        let mut input = Vec::with_capacity(target + one.len());
        while input.len() < target {
            input.extend_from_slice(&one);
        }
        input.truncate(target);
        let mut times = Vec::new();
        let mut cpu = Vec::new();
        let mut out_len = 0;
        for _ in 0..20 {
            let c0 = thread_cpu();
            let t = Instant::now();
            let out = c.compress(&input, cmd, Some(*exit));
            times.push(t.elapsed());
            cpu.push(thread_cpu().saturating_sub(c0));
            out_len = out.text.len();
        }
        times.sort();
        cpu.sort();
        worst = worst.max(cpu[0]);
        println!(
            "| {name} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {out_len} |",
            c.profile_for(cmd),
            times[0].as_secs_f64() * 1e3,
            times[times.len() / 2].as_secs_f64() * 1e3,
            cpu[0].as_secs_f64() * 1e3
        );
    }
    println!(
        "\nslowest best-of-20 (thread CPU time): {:.2} ms per MiB",
        worst.as_secs_f64() * 1e3
    );
}

#[cfg(unix)]
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// No thread CPU clock is read off unix: the CPU column shows 0 there.
#[cfg(not(unix))]
fn thread_cpu() -> Duration {
    Duration::ZERO
}
