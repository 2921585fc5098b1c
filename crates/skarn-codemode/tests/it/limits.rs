//! Every limit, hit by a hostile script: each run ends with its own error
//! kind and the host process is unharmed (the next run works).

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use skarn_codemode::bridge::NoServers;
use skarn_codemode::{ErrorKind, Limits, execute};
use skarn_test_support::{FakeBridge, Gate};

fn hit(code: &str, limits: &Limits, kind: ErrorKind) -> skarn_codemode::ExecOutcome {
    let out = execute(code, Arc::new(NoServers), limits);
    error(&out, kind, code);
    // The host is unharmed: a normal script still runs.
    assert_eq!(value("return [1, 2].length"), json!(2));
    out
}

#[test]
fn memory_limit() {
    let l = limits_ms(20_000);
    for code in [
        "const a = []; for (;;) a.push(new Array(100000).fill(1.5))",
        "const a = []; for (let i = 0; ; i++) a.push('x'.repeat(1000) + i)",
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, { i })",
        "const a = []; for (;;) a.push(new Uint8Array(1 << 20))",
        "return JSON.parse('[' + '1,'.repeat(50000000) + '1]')",
    ] {
        let out = hit(code, &l, ErrorKind::Memory);
        let e = out.result.unwrap_err();
        assert!(e.message.contains("memory limit of 64 MiB"), "{e}");
    }
    // A smaller limit is honoured.
    let small = Limits {
        memory_bytes: 4 << 20,
        ..limits_ms(20_000)
    };
    hit(
        "return 'y'.repeat(8 << 20).length",
        &small,
        ErrorKind::Memory,
    );
    // A catchable OOM caught by the script still cannot allocate past the limit.
    let out = execute(
        "let n = 0; try { const a = []; for (;;) { a.push(new Array(100000).fill(1.5)); n++ } } catch (e) { return [String(e), n < 1000] }",
        Arc::new(NoServers),
        &l,
    );
    match out.result {
        Ok(v) => assert_eq!(v[1], json!(true), "{v}"),
        Err(e) => assert_eq!(e.kind, ErrorKind::Memory, "{e}"),
    }
}

#[test]
fn stack_limit() {
    let l = limits_ms(20_000);
    for code in [
        "function f() { return f() + 1 } return f()",
        "const f = (n) => [f(n + 1)]; return f(0)",
        "function f(o) { return JSON.stringify(o) } let o = {}; for (let i = 0; i < 1e5; i++) o = [o]; return f(o)",
        "class A { get x() { return this.x } } return new A().x",
    ] {
        let out = hit(code, &l, ErrorKind::Stack);
        let e = out.result.unwrap_err();
        assert!(e.message.contains("native stack limit of 1 MiB"), "{e}");
    }
    // A zero stack limit is not "unlimited": the minimum applies.
    let zero = Limits {
        stack_bytes: 0,
        ..limits_ms(20_000)
    };
    hit(
        "function f() { return f() + 1 } return f()",
        &zero,
        ErrorKind::Stack,
    );
    assert_eq!(
        execute(
            "return [1].map(x => x + 1)",
            std::sync::Arc::new(NoServers),
            &zero
        )
        .result
        .unwrap(),
        json!([2])
    );
}

#[test]
fn deadline_cannot_be_caught() {
    let l = limits_ms(300);
    for code in [
        "for (;;) {}",
        "for (;;) { try { for (;;) {} } catch {} }",
        "for (;;) { try { for (;;) {} } catch {} finally { for (;;) {} } }",
        "while (true) { try { while (true) {} } catch (e) { continue } }",
        "function f() { try { f() } catch { f() } } f()",
        "const loop = () => { try { for (;;) {} } catch { loop() } }; loop()",
        // Runaway microtask chains.
        "async function f() { for (;;) await null } return await f()",
        "const tick = () => Promise.resolve().then(tick); tick(); await new Promise(() => {})",
        "for (;;) { await Promise.resolve(1) }",
        // Catastrophic regular expression backtracking.
        "return /^(a+)+$/.test('a'.repeat(40) + 'b')",
        "return /(x+x+)+y/.test('x'.repeat(5000))",
        // Sorting with a slow comparator.
        "return new Array(1e6).fill(0).map((_, i) => i).sort((a, b) => { for (let i = 0; i < 1e3; i++); return a - b })",
    ] {
        let out = hit(code, &l, ErrorKind::Deadline);
        let e = out.result.unwrap_err();
        assert!(
            e.message.contains("deadline of 300 ms exceeded"),
            "{code}: {e}"
        );
    }
}

#[test]
fn never_settling_promise_waits_on_nothing() {
    let l = limits_ms(30_000);
    for code in [
        "await new Promise(() => {})",
        "return new Promise(() => {})",
        "const p = new Promise(() => {}); await Promise.all([p, 1])",
    ] {
        // Only the early path says "waits on nothing" (the deadline is 30 s).
        let out = hit(code, &l, ErrorKind::Deadline);
        assert!(out.result.unwrap_err().message.contains("waits on nothing"));
    }
}

/// A bridge whose calls never answer.
#[test]
fn host_call_that_never_answers_hits_the_deadline() {
    let out = execute(
        "skarn.log('before'); await skarn.callTool('s', 't', {}); return 1",
        Arc::new(FakeBridge::never_answering()),
        &limits_ms(300),
    );
    let e = error(&out, ErrorKind::Deadline, "silent bridge");
    assert!(e.message.contains("waiting on 1 host call"), "{e}");
    assert_eq!(out.logs, vec!["before".to_owned()]);
    assert_eq!(out.tool_calls, 1);
}

#[test]
fn stuck_isolate_is_abandoned_within_the_grace() {
    // The bridge's poll blocks its thread until the gate opens: only
    // abandonment can return (and only it says "abandoned").
    let gate = Arc::new(Gate::new());
    let out = execute(
        "skarn.log('x'); await skarn.callTool('s', 't'); return 1",
        Arc::new(FakeBridge::blocking_until(gate.clone())),
        &limits_ms(300),
    );
    // Let the abandoned thread end (it stops at its next interrupt check)
    // so it does not count against the other tests of this binary.
    gate.open();
    let e = error(&out, ErrorKind::Deadline, "blocking bridge");
    assert!(e.message.contains("abandoned"), "{e}");
    assert_eq!(out.logs, vec!["x".to_owned()]);
}

#[test]
fn native_loops_that_never_poll_end_at_the_deadline() {
    // Built-in loops over a huge array-like: the engine either interrupts
    // them or the run is abandoned; either way a Deadline error comes back.
    for code in [
        "return [].indexOf.call({ length: 2 ** 52 }, 1)",
        "return [].lastIndexOf.call({ length: 2 ** 52 }, 1)",
        "return [].includes.call({ length: 2 ** 52 }, 1)",
    ] {
        let out = execute(code, Arc::new(NoServers), &limits_ms(300));
        error(&out, ErrorKind::Deadline, code);
    }
}

#[test]
fn tool_call_budget() {
    let l = Limits {
        max_tool_calls: 5,
        ..limits_ms(10_000)
    };
    let code = "for (let i = 0; i < 100; i++) { try { await skarn.callTool('s', 't', {}) } catch (e) {} } return 'done'";
    let out = hit(code, &l, ErrorKind::ToolCalls);
    assert_eq!(out.tool_calls, 5);
    assert!(
        out.result
            .unwrap_err()
            .message
            .contains("tool-call budget of 5")
    );
    // Catching the budget error does not help: it is uncatchable.
    let code = "const ps = []; for (let i = 0; i < 10; i++) { try { ps.push(skarn.listTools()) } catch (e) {} } return 'done'";
    let out = hit(code, &l, ErrorKind::ToolCalls);
    assert_eq!(out.tool_calls, 5);
    // Exactly the budget is fine.
    let out = execute(
        "for (let i = 0; i < 5; i++) await skarn.listTools(); return 'ok'",
        Arc::new(NoServers),
        &l,
    );
    assert_eq!(out.result.unwrap(), json!("ok"));
    assert_eq!(out.tool_calls, 5);
}

#[test]
fn output_cap() {
    let l = limits_ms(20_000);
    for code in [
        "return 'x'.repeat(2 << 20)",
        "return new Array(300000).fill('abcd')",
        "const a = []; a.length = 2 ** 32 - 1; return a",
        "return { a: 'x'.repeat(600000), b: 'y'.repeat(600000) }",
        "const o = {}; for (let i = 0; i < 200000; i++) o['k' + i] = i; return o",
    ] {
        let out = hit(code, &l, ErrorKind::Output);
        assert!(
            out.result
                .unwrap_err()
                .message
                .contains("output cap of 1 MiB"),
            "{code}"
        );
    }
    // Just under the cap is fine; escapes are counted exactly.
    let ok = execute("return 'x'.repeat((1 << 20) - 2)", Arc::new(NoServers), &l);
    assert_eq!(
        ok.result.unwrap().as_str().map(str::len),
        Some((1 << 20) - 2)
    );
    let small = Limits {
        max_output_bytes: 100,
        ..limits_ms(10_000)
    };
    hit("return '\\u0001'.repeat(30)", &small, ErrorKind::Output);
}

#[test]
fn log_caps_never_cost_the_returned_value() {
    let l = Limits {
        max_log_lines: 10,
        max_log_bytes: 1000,
        ..limits_ms(10_000)
    };
    let out = execute(
        "for (let i = 0; i < 100000; i++) skarn.log('line', i); skarn.log('z'.repeat(10 << 20)); return 'value'",
        Arc::new(NoServers),
        &l,
    );
    assert_eq!(out.result.unwrap(), json!("value"));
    assert_eq!(out.logs.len(), 11, "{:?}", out.logs);
    assert_eq!(out.logs[0], "line 0");
    let marker = out.logs.last().unwrap();
    assert!(marker.contains("99991 more line(s)"), "{marker}");

    let out = execute(
        "skarn.log('a'.repeat(600)); skarn.log('b'.repeat(600)); skarn.log('c'); return 1",
        Arc::new(NoServers),
        &l,
    );
    assert_eq!(out.result.unwrap(), json!(1));
    assert_eq!(out.logs[0].len(), 600);
    assert_eq!(out.logs[1].len(), 400);
    assert!(out.logs[2].contains("dropped"), "{:?}", out.logs);
}

#[test]
fn interrupting_mid_promise_chain_never_corrupts() {
    let l = limits_ms(30);
    let code = "
        const chain = async (n) => { let x = 0; for (let i = 0; i < n; i++) { x += await Promise.resolve(i).then(v => v * 2) } return x };
        const all = [];
        for (let i = 0; i < 50; i++) all.push(chain(1e9), skarn.listTools().catch(() => 0));
        return await Promise.all(all)";
    for _ in 0..40 {
        let out = execute(code, Arc::new(NoServers), &l);
        match out.result {
            Err(e) if e.kind == ErrorKind::Deadline || e.kind == ErrorKind::ToolCalls => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    for i in 1..40u64 {
        // Vary the cut point.
        let l = limits_ms(i);
        let out = execute(
            "let p = Promise.resolve(0); for (let i = 0; i < 1e6; i++) p = p.then(v => v + 1); return await p",
            Arc::new(NoServers),
            &l,
        );
        assert!(out.result.is_ok() || out.result.unwrap_err().kind == ErrorKind::Deadline);
    }
    assert_eq!(value("return await Promise.resolve(7)"), json!(7));
}

#[test]
fn tool_arguments_in_flight_are_bounded_by_the_memory_limit() {
    // 256 concurrent calls each carrying the same 4 MiB string would be
    // 1 GiB of host-side copies; the total in flight is capped instead.
    let out = execute(
        "const big = 'x'.repeat(4 << 20); const ps = []; let refused = 0;
         for (let i = 0; i < 100; i++) ps.push(skarn.callTool('s', 't', { big }).catch(e => { if (e.code === 'invalid_arguments') refused++ }));
         await Promise.all(ps); return refused",
        Arc::new(FakeBridge::answering(Value::Null)),
        &limits_ms(10_000),
    );
    let refused = out.result.unwrap();
    assert!(refused.as_u64().unwrap() >= 80, "{refused}");
}

#[test]
fn extreme_limit_values_do_not_panic() {
    for l in [
        Limits {
            deadline: Duration::from_millis(u64::MAX),
            ..Limits::default()
        },
        Limits {
            deadline: Duration::ZERO,
            ..Limits::default()
        },
        Limits {
            memory_bytes: 0,
            ..Limits::default()
        },
        Limits {
            memory_bytes: usize::MAX,
            ..Limits::default()
        },
        Limits {
            stack_bytes: usize::MAX,
            ..Limits::default()
        },
        Limits {
            max_output_bytes: 0,
            max_log_lines: 0,
            max_log_bytes: 0,
            max_tool_calls: 0,
            ..Limits::default()
        },
    ] {
        let out = execute("skarn.log('x'); return 1", Arc::new(NoServers), &l);
        if let Err(e) = &out.result {
            assert_ne!(e.kind, ErrorKind::Internal, "{l:?}: {e}");
        }
    }
}

#[test]
fn running_out_of_memory_anywhere_never_crashes() {
    // The same allocation-heavy script under limits stepping through the
    // point where it runs out: every kind of allocation fails somewhere.
    let code = "
        const keep = [];
        for (let round = 0; round < 50; round++) {
          const o = { a: [round, 'x'.repeat(round * 100)], m: new Map([[round, { round }]]) };
          keep.push(o, JSON.parse(JSON.stringify(o)), new Set([round]), /a+b/g.exec('aaab'.repeat(round)));
          keep.push(await Promise.all([1, 2, 3].map(async (x) => ({ x, s: String(x).padStart(round * 10) }))));
          keep.push(class { m() { return round } }, (() => round), new Uint8Array(round * 1000));
          try { await skarn.callTool('s', 't', { round, big: 'y'.repeat(round * 50) }) } catch (e) { keep.push(e) }
          skarn.log('round', round, o);
        }
        return keep.length";
    for step in 0..48 {
        let l = Limits {
            memory_bytes: (1 << 20) + step * (48 << 10),
            ..limits_ms(20_000)
        };
        let out = execute(code, Arc::new(NoServers), &l);
        match &out.result {
            Ok(_) => {}
            Err(e) => assert!(
                matches!(e.kind, ErrorKind::Memory | ErrorKind::Runtime),
                "step {step}: {e}"
            ),
        }
    }
    assert_eq!(value("return 1"), json!(1));
}
