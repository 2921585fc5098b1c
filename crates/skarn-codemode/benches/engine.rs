//! Engine micro-benchmarks (plain harness: `cargo bench -p skarn-codemode`).
//!
//! Prints the median and p90 of:
//! - validate + strip a 200-line TypeScript script (`check`);
//! - create an isolate and run `return 1` (`execute`, which includes the
//!   front end and the isolate thread, and `execute_on_current_thread`);
//! - one bridged tool-call round trip (a script making 1000 sequential
//!   calls, minus the `return 1` baseline, divided by 1000).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skarn_codemode::bridge::{BridgeFuture, ToolBridge};
use skarn_codemode::{Limits, check, execute, execute_on_current_thread};

struct Echo;
impl ToolBridge for Echo {
    fn call_tool(&self, _s: &str, _t: &str, args: Value) -> BridgeFuture<'_, Value> {
        Box::pin(async move { Ok(args) })
    }
    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        Box::pin(async { Ok(json!([])) })
    }
    fn read_resource(&self, _s: &str, _u: &str) -> BridgeFuture<'_, Value> {
        Box::pin(async { Ok(Value::Null) })
    }
}

fn ts_script_200_lines() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.lines().count() < 200 {
        s.push_str(&format!(
            "interface Item{i} {{\n  id: number;\n  name: string;\n  tags?: string[];\n}}\n\
             type Map{i}<T> = Record<string, T>;\n\
             function pick{i}<T extends Item{i}>(xs: T[], n: number): T[] {{\n  return xs.filter((x) => x.id % n === 0);\n}}\n\
             const data{i}: Item{i}[] = [{{ id: {i}, name: 'n{i}' }}] as Item{i}[];\n\
             const index{i}: Map{i}<Item{i}> = {{}};\n\
             for (const d of pick{i}(data{i}, 1)) {{\n  index{i}[d.name] = d;\n}}\n\
             enum Kind{i} {{ A, B = 'b' }}\n\
             const total{i} = data{i}.reduce((a: number, b: Item{i}) => a + b.id, 0) satisfies number;\n"
        ));
        i += 1;
    }
    s.push_str("return 1;\n");
    s
}

fn measure(name: &str, iters: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..iters.min(20) {
        f();
    }
    let mut samples: Vec<Duration> = (0..iters)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort();
    let median = samples[samples.len() / 2];
    let p90 = samples[samples.len() * 9 / 10];
    println!(
        "{name:<48} median {:>9.3} ms   p90 {:>9.3} ms   (n={iters})",
        ms(median),
        ms(p90)
    );
    median
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing
    // useful: run a single quick round then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = if quick { 3 } else { 300 };
    let limits = Limits::default();

    let ts = ts_script_200_lines();
    let lines = ts.lines().count();
    assert!((200..=220).contains(&lines), "{lines} lines");
    check(&ts).expect("the benchmark script is valid");
    measure(
        &format!("validate + strip {lines}-line TypeScript"),
        n,
        || {
            black_box(check(black_box(&ts)).is_ok());
        },
    );

    let base = measure("execute(`return 1`) (thread + isolate)", n, || {
        let out = execute("return 1", Arc::new(Echo), &limits);
        assert!(out.result.is_ok());
    });
    measure("execute_on_current_thread(`return 1`)", n, || {
        let out = execute_on_current_thread("return 1", &Echo, &limits);
        assert!(out.result.is_ok());
    });

    let calls = 1000;
    let call_limits = Limits {
        max_tool_calls: calls,
        ..Limits::default()
    };
    let code = format!(
        "let s = 0; for (let i = 0; i < {calls}; i++) {{ const r = await skarn.callTool('s', 't', {{ i }}); s += r.i }} return s"
    );
    let with_calls = measure("execute(1000 sequential tool calls)", n.min(50), || {
        let out = execute(&code, Arc::new(Echo), &call_limits);
        assert!(out.result.is_ok(), "{:?}", out.result);
    });
    let per_call = with_calls.saturating_sub(base) / calls;
    println!(
        "{:<48} median {:>9.3} ms",
        "=> one bridged tool-call round trip",
        ms(per_call)
    );
}
