//! The `skarn` API inside the isolate, against an in-test ToolBridge.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use crate::common::*;
use serde_json::{Value, json};
use skarn_codemode::bridge::{BridgeError, ToolBridge};
use skarn_codemode::{ErrorKind, Limits, execute};
use skarn_test_support::{FakeBridge, Reply};

/// Echo-like fake: `echo` answers with what it got, `fail` fails, `panic`
/// panics, `proto` returns a `__proto__` key, `big` a 100 kB string;
/// anything on server "gate" completes only once `gate` calls have all
/// started. The fake records every call.
fn bridge(gate: usize) -> (Arc<FakeBridge>, Arc<dyn ToolBridge>) {
    let barrier = Arc::new(Barrier {
        size: gate,
        state: Mutex::default(),
    });
    let b = Arc::new(
        FakeBridge::echo()
            .on_call_async(move |server, tool, args| {
                if server == "gate" {
                    return barrier.arrive();
                }
                let (server, tool) = (server.to_owned(), tool.to_owned());
                Box::pin(async move {
                    match tool.as_str() {
                        "echo" => Ok(json!({ "server": server, "tool": tool, "args": args })),
                        "fail" => Err(BridgeError::ToolFailed {
                            server,
                            tool,
                            message: "boom".into(),
                        }),
                        "panic" => panic!("bridge bug"),
                        "proto" => Ok(json!({ "__proto__": { "polluted": true }, "x": 1 })),
                        "big" => Ok(json!("z".repeat(100_000))),
                        _ => Err(BridgeError::NoSuchTool { server, tool }),
                    }
                })
            })
            .with_tools(json!([{ "server": "s", "name": "echo", "description": "echoes" }]))
            .on_read(|server, uri| Ok(json!({ "server": server, "uri": uri, "text": "hello" }))),
    );
    (b.clone(), b)
}

/// Calls that complete only once `size` of them have started.
struct Barrier {
    size: usize,
    state: Mutex<Arrivals>,
}

#[derive(Default)]
struct Arrivals {
    started: usize,
    wakers: Vec<Waker>,
}

impl Barrier {
    fn arrive(self: &Arc<Self>) -> Reply {
        let mut g = self.state.lock().unwrap();
        g.started += 1;
        if g.started >= self.size {
            for w in g.wakers.drain(..) {
                w.wake();
            }
        }
        Box::pin(Arrival(self.clone()))
    }
}

struct Arrival(Arc<Barrier>);

impl Future for Arrival {
    type Output = Result<Value, BridgeError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut g = self.0.state.lock().unwrap();
        if g.started >= self.0.size {
            Poll::Ready(Ok(json!(g.started)))
        } else {
            g.wakers.push(cx.waker().clone());
            Poll::Pending
        }
    }
}

fn ok(code: &str, br: Arc<dyn ToolBridge>) -> (Value, u32, Vec<String>) {
    let out = execute(code, br, &limits_ms(10_000));
    match out.result {
        Ok(v) => (v, out.tool_calls, out.logs),
        Err(e) => panic!("{code:?} failed: {e}"),
    }
}

#[test]
fn call_tool_and_server_proxy_reach_the_bridge() {
    let (tb, br) = bridge(0);
    let (v, calls, _) = ok(
        "const a = await skarn.callTool('s', 'echo', { n: 1 });
         const b = await skarn.server('t').echo({ n: 2 });
         const c = await skarn.server('u').echo();
         return [a, b, c]",
        br,
    );
    assert_eq!(
        v,
        json!([
            { "server": "s", "tool": "echo", "args": { "n": 1 } },
            { "server": "t", "tool": "echo", "args": { "n": 2 } },
            { "server": "u", "tool": "echo", "args": {} },
        ])
    );
    assert_eq!(calls, 3);
    assert_eq!(tb.called(), vec!["s.echo", "t.echo", "u.echo"]);
}

#[test]
fn list_tools_and_read_resource() {
    let (_, br) = bridge(0);
    let (v, calls, _) = ok(
        "const tools = await skarn.listTools();
         const r = await skarn.readResource('docs', 'file:///a.txt');
         return { n: tools.length, name: tools[0].name, text: r.text, uri: r.uri }",
        br,
    );
    assert_eq!(
        v,
        json!({ "n": 1, "name": "echo", "text": "hello", "uri": "file:///a.txt" })
    );
    assert_eq!(calls, 2);
}

#[test]
fn tool_errors_are_catchable_exceptions() {
    let (_, br) = bridge(0);
    let (v, _, _) = ok(
        "const out = [];
         for (const t of ['fail', 'nope', 'panic']) {
           try { await skarn.callTool('s', t, {}) } catch (e) { out.push([e instanceof Error, e.code, e.message]) }
         }
         return out",
        br,
    );
    assert_eq!(
        v,
        json!([
            [true, "tool_failed", "s.fail failed: boom"],
            [
                true,
                "no_such_tool",
                "server \"s\" has no tool named \"nope\""
            ],
            [true, "other", "the tool bridge panicked"],
        ])
    );
}

#[test]
fn uncaught_tool_error_is_a_runtime_error() {
    let (_, br) = bridge(0);
    let out = execute(
        "await skarn.callTool('s', 'fail', {})",
        br,
        &limits_ms(10_000),
    );
    let e = error(&out, ErrorKind::Runtime, "uncaught tool error");
    assert!(e.message.contains("s.fail failed: boom"), "{e}");
}

#[test]
fn parallel_calls_run_concurrently_on_the_bridge() {
    // Each gated call completes only after all 8 have started: sequential
    // dispatch would never finish.
    let (tb, br) = bridge(8);
    let (v, calls, _) = ok(
        "const ps = [];
         for (let i = 0; i < 8; i++) ps.push(skarn.callTool('gate', 't' + i, {}));
         return await Promise.all(ps)",
        br,
    );
    assert_eq!(v, json!([8, 8, 8, 8, 8, 8, 8, 8]));
    assert_eq!(calls, 8);
    assert_eq!(tb.called().len(), 8);

    let (_, br) = bridge(3);
    let (v, _, _) = ok(
        "const r = await Promise.allSettled([skarn.server('gate').a(), skarn.server('gate').b(), skarn.server('gate').c()]);
         return r.map(x => x.status)",
        br,
    );
    assert_eq!(v, json!(["fulfilled", "fulfilled", "fulfilled"]));
}

#[test]
fn budget_counts_every_host_call() {
    let (_, br) = bridge(0);
    let l = Limits {
        max_tool_calls: 3,
        ..limits_ms(10_000)
    };
    let out = execute(
        "await skarn.listTools(); await skarn.readResource('a', 'b'); await skarn.callTool('s', 'echo', {}); await skarn.callTool('s', 'echo', {})",
        br,
        &l,
    );
    error(&out, ErrorKind::ToolCalls, "budget");
    assert_eq!(out.tool_calls, 3);
}

#[test]
fn bad_arguments_are_catchable_and_not_counted() {
    let (tb, br) = bridge(0);
    let (v, calls, _) = ok(
        "const out = [];
         for (const f of [
           () => skarn.callTool(1, 'echo', {}),
           () => skarn.callTool('s', null, {}),
           () => skarn.callTool('s', 'echo', 5),
           () => skarn.callTool('s', 'echo', [1]),
           () => skarn.callTool('s', 'echo', { f: () => 1 }),
           () => skarn.callTool('s', 'echo', { b: 10n }),
           () => skarn.readResource('s', 3),
           () => skarn.server(5),
           () => skarn.callTool('s', 'x'.repeat(1 << 22), {}),
           () => skarn.readResource('u'.repeat(1 << 22), 'file:///x'),
         ]) { try { await f() } catch (e) { out.push(e.name + ':' + (e.code ?? '')) } }
         return out",
        br,
    );
    assert_eq!(
        v,
        json!([
            "TypeError:",
            "TypeError:",
            "Error:invalid_arguments",
            "Error:invalid_arguments",
            "Error:invalid_arguments",
            "Error:invalid_arguments",
            "TypeError:",
            "TypeError:",
            "Error:invalid_arguments",
            "Error:invalid_arguments",
        ])
    );
    assert_eq!(calls, 0);
    assert!(tb.called().is_empty());
}

#[test]
fn tool_results_cannot_pollute_prototypes() {
    let (_, br) = bridge(0);
    let (v, _, _) = ok(
        "const r = await skarn.callTool('s', 'proto', {});
         return [Object.keys(r).sort(), ({}).polluted === undefined, Object.getPrototypeOf(r) === Object.getPrototypeOf({})]",
        br,
    );
    assert_eq!(v, json!([["__proto__", "x"], true, true]));
}

#[test]
fn awaiting_a_server_proxy_does_not_hang() {
    let (_, br) = bridge(0);
    let (v, calls, _) = ok(
        "const s = await skarn.server('s'); return typeof s.then + ':' + typeof s.echo",
        br,
    );
    assert_eq!(v, json!("undefined:function"));
    assert_eq!(calls, 0);
}

#[test]
fn logs_keep_order_and_format_values() {
    let (_, br) = bridge(0);
    let (_, _, logs) = ok(
        "skarn.log('a', 1, true, null, undefined, { k: [1, 'x'] }, 12n, () => 1);
         const o = {}; o.self = o; skarn.log(o);
         skarn.log(new Error('bad'));
         skarn.log();
         return null",
        br,
    );
    assert_eq!(
        logs[0],
        "a 1 true null undefined {\"k\":[1,\"x\"]} 12n [function]"
    );
    assert!(logs[1].starts_with("[unloggable:"), "{logs:?}");
    // Key order depends on serde_json's `preserve_order` feature, which
    // another crate of the workspace may switch on: compare as JSON.
    let v: serde_json::Value = serde_json::from_str(&logs[2]).unwrap();
    assert_eq!(v, serde_json::json!({"message": "bad", "name": "Error"}));
    assert_eq!(logs[3], "");
}

#[test]
fn no_servers_bridge_gives_a_catchable_error() {
    let v = value(
        "try { await skarn.server('github').search({ q: 'x' }) } catch (e) { return e.message }",
    );
    assert_eq!(v, json!("no server named \"github\""));
    assert_eq!(value("return await skarn.listTools()"), json!([]));
}

#[test]
fn returned_values_convert_as_documented() {
    for (code, want) in [
        ("return undefined", json!(null)),
        ("return", json!(null)),
        ("1 + 1", json!(null)),
        ("return { a: undefined, b: 1 }", json!({ "b": 1 })),
        (
            "return [undefined, NaN, Infinity, -0]",
            json!([null, null, null, 0]),
        ),
        ("return 1.5", json!(1.5)),
        ("return 2 ** 53", json!(9007199254740992.0_f64)),
        (
            "return new Date(86400000)",
            json!("1970-01-02T00:00:00.000Z"),
        ),
        ("return { toJSON() { return 'custom' } }", json!("custom")),
        ("return new Map([[1, 2]])", json!({})),
        (
            "return new TypeError('x')",
            json!({ "name": "TypeError", "message": "x" }),
        ),
        ("return 'h\\u00e9\\ud83d\\ude00'", json!("hé😀")),
        ("return '\\ud800'", json!("\u{fffd}")),
        ("return Promise.resolve({ p: 1 })", json!({ "p": 1 })),
        (
            "const a = { x: 1 }; return [a, a]",
            json!([{ "x": 1 }, { "x": 1 }]),
        ),
    ] {
        assert_eq!(value(code), want, "{code}");
    }
    for (code, needle) in [
        ("return 10n", "BigInt at $"),
        ("return { a: { b: 1n } }", "BigInt at $.a.b"),
        ("return () => 1", "function at $"),
        ("return { f() {} }", "function at $.f"),
        ("return Symbol('s')", "Symbol at $"),
        ("const o = {}; o.o = o; return o", "cycle"),
        ("const a = []; a.push(a); return a", "cycle"),
        (
            "let o = {}; for (let i = 0; i < 300; i++) o = { o }; return o",
            "deeper than 256",
        ),
    ] {
        let e = runtime_error(code);
        assert!(e.message.contains(needle), "{code}: {e}");
    }
    // A getter that throws while the value is converted is a runtime error.
    let e = runtime_error("return { get x() { throw new RangeError('no') } }");
    assert!(e.message.contains("RangeError: no"), "{e}");
}

#[test]
fn runtime_errors_point_at_the_users_lines() {
    let e = runtime_error("const a = 1;\nconst b = 2;\n\n  null.x;\n");
    assert_eq!((e.line, e.column), (Some(4), Some(3)), "{e}");
    let e = runtime_error(
        "function inner() {\n  throw new Error('deep');\n}\nfunction outer() { inner() }\nouter()",
    );
    assert_eq!(e.line, Some(2), "{e}");
    assert!(
        e.details.iter().any(|d| d.starts_with("at inner (2:")),
        "{e:?}"
    );
    assert!(
        e.details.iter().any(|d| d.starts_with("at outer (4:")),
        "{e:?}"
    );
    let e = runtime_error("throw 'plain string'");
    assert_eq!(e.message, "uncaught exception: \"plain string\"");
    let e = runtime_error("await Promise.reject(new TypeError('async'))");
    assert_eq!(e.message, "TypeError: async");
}

#[test]
fn many_runs_in_parallel_threads_stay_independent() {
    let handles: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..10 {
                    let (_, br) = bridge(0);
                    let code = format!(
                        "const r = await skarn.callTool('s', 'echo', {{ t: {t}, i: {i} }}); return r.args"
                    );
                    let out = execute(&code, br, &limits_ms(10_000));
                    assert_eq!(out.result.unwrap(), json!({ "t": t, "i": i }));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
