//! Hostile scripts that used to kill the worker (or end differently in it)
//! give the same catchable errors in the worker as in-process: tool
//! arguments over the cap measured as escaped JSON, returned values nested
//! deeper than serde's default limit, deeply nested downstream results, a
//! thrown object whose `toJSON` loops. After each, the worker answered (no
//! `internal` error) and the pool serves the next job.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skarn_codemode::{ErrorKind, ExecOutcome, Limits};
use skarn_worker::{Executor, Isolation, IsolationUsed, PoolConfig, WorkerCommand};

use skarn_test_support::FakeBridge;

fn nested(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = json!([v]);
    }
    v
}

/// `nest(d)` answers a value nested `d` levels deep; anything else echoes
/// the size of its arguments.
fn tools() -> FakeBridge {
    FakeBridge::answering(Value::Null)
        .with_tools(json!([]))
        .on_call(|_server, tool, args| {
            Ok(match tool {
                "nest" => nested(args["depth"].as_u64().unwrap_or(1) as usize),
                _ => json!(serde_json::to_vec(&args).map(|b| b.len()).unwrap_or(0)),
            })
        })
}

fn executor() -> Executor {
    let mut cfg = PoolConfig::new(WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn")));
    cfg.warm = 1;
    let e = Executor::new(Isolation::Worker, cfg).expect("worker isolation available");
    assert_eq!(e.isolation(), IsolationUsed::Worker);
    e
}

fn both(ex: &Executor, code: &str, limits: &Limits) -> (ExecOutcome, ExecOutcome) {
    let inproc = skarn_codemode::execute(code, Arc::new(tools()), limits);
    let worker = ex.execute(code, Arc::new(tools()), limits);
    assert_eq!(worker.isolation, IsolationUsed::Worker);
    (inproc, worker.outcome)
}

/// What a script's catch block saw: `[code, message]`.
fn caught(out: &ExecOutcome, code: &str) -> Value {
    match &out.result {
        Ok(v) => v.clone(),
        Err(e) => panic!("{code}: expected a caught error, got {e}"),
    }
}

#[test]
fn hostile_values_give_the_same_catchable_errors() {
    let ex = executor();
    let limits = Limits {
        deadline: Duration::from_secs(20),
        ..Limits::default()
    };
    let catch = |call: &str| {
        format!("try {{ return ['ok', {call}] }} catch (e) {{ return [e.code, e.message] }}")
    };
    // 1.5 M control characters: 1.5 MB as a string, 9 MB as JSON.
    let over = catch(r#"await skarn.callTool("s", "t", {x: "\u0001".repeat(1500000)})"#);
    // 700 K control characters: 4.2 MB as JSON, under the cap: it arrives.
    let under = catch(r#"await skarn.callTool("s", "t", {x: "\u0001".repeat(700000)})"#);
    let deep_ok = catch(r#"await skarn.callTool("s", "nest", {depth: 125})"#);
    let deep_over = catch(r#"await skarn.callTool("s", "nest", {depth: 600})"#);
    let long_name = catch(r#"await skarn.callTool("s".repeat(100000), "t")"#);
    for code in [&over, &under, &deep_ok, &deep_over, &long_name] {
        let (a, b) = both(&ex, code, &limits);
        let (a, b) = (caught(&a, code), caught(&b, code));
        assert_eq!(a, b, "{code}");
    }
    let (a, _) = both(&ex, &over, &limits);
    assert_eq!(caught(&a, &over)[0], json!("invalid_arguments"));
    let (a, _) = both(&ex, &under, &limits);
    assert_eq!(caught(&a, &under)[1], json!(4_200_008));
    let (a, _) = both(&ex, &deep_ok, &limits);
    assert_eq!(caught(&a, &deep_ok)[0], json!("ok"));
    let (a, _) = both(&ex, &deep_over, &limits);
    assert!(
        caught(&a, &deep_over)[1]
            .as_str()
            .unwrap()
            .contains("nested deeper than 512")
    );

    // Returned values nested up to the documented depth of 256.
    for depth in [127, 200, 255] {
        let code = format!("let v = 1; for (let i = 0; i < {depth}; i++) v = [v]; return v");
        let (a, b) = both(&ex, &code, &limits);
        assert_eq!(a.result, Ok(nested(depth)), "{depth}");
        assert_eq!(b.result, a.result, "{depth}");
    }
    let code = "let v = 1; for (let i = 0; i < 300; i++) v = [v]; return v";
    let (a, b) = both(&ex, code, &limits);
    assert_eq!(a.result.as_ref().unwrap_err().kind, ErrorKind::Runtime);
    assert_eq!(b.result, a.result);
}

#[test]
fn a_looping_to_json_in_a_thrown_value_is_a_deadline() {
    let ex = executor();
    let limits = Limits {
        deadline: Duration::from_millis(1500),
        ..Limits::default()
    };
    for code in [
        "throw { toJSON() { for (;;) {} } }",
        "throw { get a() { for (;;) {} } }",
    ] {
        let (a, b) = both(&ex, code, &limits);
        assert_eq!(a.result.unwrap_err().kind, ErrorKind::Deadline, "{code}");
        assert_eq!(b.result.unwrap_err().kind, ErrorKind::Deadline, "{code}");
    }
}
