//! Every limit hit inside a worker ends with the same error as in-process,
//! and scripts that work in-process work identically in the worker (host
//! calls included).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skarn_codemode::{ErrorKind, ExecOutcome, Limits, bridge::NoServers};
use skarn_worker::{Executor, Isolation, IsolationUsed, PoolConfig, WorkerCommand};

use skarn_test_support::FakeBridge;

/// Echoes every call and read; lists one tool.
fn tools() -> FakeBridge {
    FakeBridge::echo().with_tools(json!([{"server": "s", "name": "t", "description": "d"}]))
}

fn executor() -> Executor {
    let mut cfg = PoolConfig::new(WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn")));
    cfg.warm = 2;
    let e = Executor::new(Isolation::Worker, cfg).expect("worker isolation available");
    assert_eq!(e.isolation(), IsolationUsed::Worker);
    e
}

fn engine_ready() -> bool {
    skarn_codemode::execute("return 1", Arc::new(NoServers), &Limits::default()).result
        == Ok(json!(1))
}

fn both(ex: &Executor, code: &str, limits: &Limits) -> (ExecOutcome, ExecOutcome) {
    let inproc = skarn_codemode::execute(code, Arc::new(tools()), limits);
    let worker = ex.execute(code, Arc::new(tools()), limits);
    assert_eq!(worker.isolation, IsolationUsed::Worker);
    (inproc, worker.outcome)
}

#[test]
fn limits_end_with_the_same_errors_as_in_process() {
    let ex = executor();
    let short = Limits {
        deadline: Duration::from_millis(1500),
        ..Limits::default()
    };
    let cases: Vec<(&str, &str, Limits, ErrorKind)> = vec![
        (
            "memory",
            "const a = []; for (let i = 0; ; i++) a.push('x'.repeat(1 << 20) + i);",
            Limits::default(),
            ErrorKind::Memory,
        ),
        (
            "memory-small",
            "const a = []; for (let i = 0; ; i++) a.push(new Array(100000).fill(i));",
            Limits {
                memory_bytes: 16 << 20,
                ..Limits::default()
            },
            ErrorKind::Memory,
        ),
        (
            "stack",
            "function f(n) { return f(n + 1) + 1; } return f(0);",
            Limits::default(),
            ErrorKind::Stack,
        ),
        (
            "deadline",
            "for (;;) { try { for (;;) {} } catch {} }",
            short.clone(),
            ErrorKind::Deadline,
        ),
        (
            "regex",
            "return /(a+)+$/.test('a'.repeat(40) + 'b');",
            short.clone(),
            ErrorKind::Deadline,
        ),
        (
            "never-settles",
            "await new Promise(() => {});",
            short.clone(),
            ErrorKind::Deadline,
        ),
        (
            "tool-calls",
            "for (let i = 0; i < 10; i++) await skarn.callTool('s', 't', {i});",
            Limits {
                max_tool_calls: 3,
                ..Limits::default()
            },
            ErrorKind::ToolCalls,
        ),
        (
            "output",
            "return 'x'.repeat(2 << 20);",
            Limits::default(),
            ErrorKind::Output,
        ),
        (
            "runtime",
            "const x = 1;\nthrow new Error('boom');",
            Limits::default(),
            ErrorKind::Runtime,
        ),
        ("syntax", "return (;", Limits::default(), ErrorKind::Syntax),
        (
            "rejected",
            "return eval('1');",
            Limits::default(),
            ErrorKind::Rejected,
        ),
    ];
    let ready = engine_ready();
    for (name, code, limits, kind) in cases {
        let (inproc, worker) = both(&ex, code, &limits);
        let (ie, we) = match (&inproc.result, &worker.result) {
            (Err(i), Err(w)) => (i, w),
            _ => panic!(
                "{name}: both must fail: in-process {:?}, worker {:?}",
                inproc.result, worker.result
            ),
        };
        assert_eq!(
            we.kind, ie.kind,
            "{name}: worker {we:?} vs in-process {ie:?}"
        );
        if ready {
            assert_eq!(we.kind, kind, "{name}: {we:?}");
        }
        if matches!(
            kind,
            ErrorKind::Runtime | ErrorKind::Syntax | ErrorKind::Rejected
        ) {
            assert_eq!(we, ie, "{name}: the same error, location included");
        }
    }
    // The pool still serves after all of that.
    let (i, w) = both(&ex, "return 1", &Limits::default());
    assert_eq!(w.result, i.result);
}

#[test]
fn host_calls_logs_and_values_match_in_process() {
    let ex = executor();
    let code = r#"
        skarn.log("start", 1);
        const [a, b] = await Promise.all([
            skarn.callTool("s", "t", {n: 1}),
            skarn.server("s").t({n: 2}),
        ]);
        const tools = await skarn.listTools();
        const r = await skarn.readResource("s", "mem://x");
        let caught = "";
        try { await skarn.callTool("nope", "t", {}); } catch (e) { caught = String(e); }
        return {a, b, tools, r, caught: caught.length > 0};
    "#;
    let limits = Limits::default();
    let inproc = skarn_codemode::execute(code, Arc::new(tools()), &limits);
    let bridge = Arc::new(tools());
    let w = ex.execute(code, bridge.clone(), &limits).outcome;
    assert_eq!(w.result, inproc.result);
    assert_eq!(w.logs, inproc.logs);
    assert_eq!(w.tool_calls, inproc.tool_calls);
    if engine_ready() {
        assert!(w.result.is_ok(), "{:?}", w.result);
        assert!(bridge.tool_calls() >= 3);
    }
}

#[test]
fn a_job_above_the_warm_memory_size_gets_its_own_worker() {
    let ex = executor();
    let limits = Limits {
        memory_bytes: 256 << 20,
        ..Limits::default()
    };
    let code = "const a = []; for (let i = 0; i < 100; i++) a.push('y'.repeat(1 << 20) + i); return a.length;";
    let (i, w) = both(&ex, code, &limits);
    assert_eq!(w.result, i.result);
    if engine_ready() {
        assert_eq!(w.result, Ok(json!(100)));
    }
}

/// Attack finding atk25c F6: a script awaiting 64 answers of 7 MB at once
/// (each under the per-answer cap of an eighth of the heap) killed the
/// worker with SIGABRT: the answers piled up, decoded, outside the
/// engine's accounting until the address space ran out. Now the worker
/// keeps at most one such answer in hand; the others fail with an error
/// the script can catch, and the run ends normally.
#[test]
fn many_large_answers_awaited_at_once_fail_calls_not_the_worker() {
    let ex = executor();
    let big = FakeBridge::echo().on_call(|_, _, _| Ok(json!("z".repeat(7_000_000))));
    let code = "const r = await Promise.all(Array.from({length: 64}, () => \
                skarn.callTool('s', 't', {}).then(x => 'ok', e => String(e)))); \
                return [r.filter(x => x === 'ok').length, r.find(x => x !== 'ok')];";
    let limits = Limits {
        deadline: Duration::from_secs(120),
        ..Limits::default()
    };
    let o = ex.execute(code, Arc::new(big), &limits);
    let v = o.outcome.result.expect("the run ends normally");
    let ok = v[0].as_u64().unwrap();
    assert!(ok >= 1, "{v}");
    if ok < 64 {
        assert!(
            v[1].as_str()
                .unwrap()
                .contains("await fewer or smaller calls"),
            "{v}"
        );
    }
}
