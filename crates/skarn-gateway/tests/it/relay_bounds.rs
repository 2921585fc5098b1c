//! What a hostile downstream can push towards the client is bounded:
//! sampling/elicitation/roots requests (in flight per server, with a
//! timeout that cancels them at the client), request floods and servers
//! that do not read (cut off, the others keep working), notifications to a client that stops
//! reading (a bounded queue, the rest dropped and counted), and tool names
//! and descriptions in `search` (escaped, one result per line). Checked from
//! outside: the hostile server's own view of the answers it got, and the
//! messages the client reads.

use serde_json::{Value, json};

use crate::common::{Upstream, gateway, hostile, rt};
use skarn_gateway::Gateway;

fn call_text(r: &Value) -> String {
    r.pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("not a tool result: {r}"))
        .to_owned()
}

/// The error messages the hostile server reports from `sample`.
fn errors_of(r: &Value, n: usize) -> Vec<String> {
    let got: Value = serde_json::from_str(&call_text(r)).unwrap();
    let messages: Vec<String> = got["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(messages.len(), n, "{got}");
    messages
}

fn method(v: &Value) -> &str {
    v.get("method").and_then(Value::as_str).unwrap_or("")
}

#[test]
fn sampling_requests_are_capped_in_flight_and_time_out_with_a_cancel() {
    rt().block_on(async {
        let gw = gateway(
            &hostile("h", &[], ""),
            "passthrough = true\nmax_client_requests_in_flight = 3\nclient_request_timeout = \"2s\"\ncall_timeout = \"30s\"",
        )
        .await;
        let mut up = Upstream::connect_with(gw, 1 << 20, json!({"sampling": {}, "elicitation": {}}))
            .await;
        // 10 requests at once, the client never answers: 7 are refused at
        // once (the server waits for exactly those 7 errors).
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 10, "wait_errors": 7}}),
            )
            .await;
        let mut messages = errors_of(&r, 7);
        // The 3 admitted time out: the server gets errors saying so...
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 0, "wait_errors": 3}}),
            )
            .await;
        messages.extend(errors_of(&r, 3));
        let refused = messages
            .iter()
            .filter(|m| m.contains("max_client_requests_in_flight = 3"))
            .count();
        let timed_out = messages
            .iter()
            .filter(|m| m.contains("client_request_timeout"))
            .count();
        assert_eq!((refused, timed_out), (7, 3), "{messages:?}");
        // ... and the client saw exactly 3 requests, each cancelled.
        while up
            .seen
            .iter()
            .filter(|v| method(v) == "notifications/cancelled")
            .count()
            < 3
        {
            let v = up.next_message().await;
            up.seen.push(v);
        }
        let asked: Vec<&Value> = up
            .seen
            .iter()
            .filter(|v| method(v) == "sampling/createMessage")
            .map(|v| &v["id"])
            .collect();
        assert_eq!(asked.len(), 3, "{:?}", up.seen);
        let mut cancelled: Vec<&Value> = up
            .seen
            .iter()
            .filter(|v| method(v) == "notifications/cancelled")
            .map(|v| &v["params"]["requestId"])
            .collect();
        let mut asked = asked;
        asked.sort_by_key(|v| v.to_string());
        cancelled.sort_by_key(|v| v.to_string());
        assert_eq!(asked, cancelled);
        // Freed: new elicitations are relayed again (3 of them, time out)
        // and the fourth is refused.
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 4, "kind": "elicitation", "wait_errors": 4}}),
            )
            .await;
        let messages = errors_of(&r, 4);
        let refused = messages
            .iter()
            .filter(|m| m.contains("refused this elicitation request"))
            .count();
        assert_eq!(refused, 1, "{messages:?}");
    });
}

#[test]
fn a_client_that_stops_reading_gets_a_bounded_backlog_and_a_count() {
    rt().block_on(async {
        let gw = gateway(
            &hostile("h", &[], ""),
            "passthrough = true\nmax_queued_notifications = 16",
        )
        .await;
        // A: 4 KiB of pipe, and it does not read while the server floods.
        let mut a = Upstream::connect_with(gw.clone(), 4096, json!({})).await;
        let mut b = Upstream::connect(gw.clone()).await;
        let total = 3000;
        let flood = a
            .start_request(
                "tools/call",
                json!({"name": "h__flood", "arguments": {"count": total, "bytes": 200}, "_meta": {"progressToken": "p"}}),
            )
            .await;
        // The server answers in order: once B has its answers, the
        // gateway has read the whole flood.
        for _ in 0..2 {
            let r = b
                .request("tools/call", json!({"name": "h__list_count", "arguments": {}}))
                .await;
            assert!(r.get("result").is_some(), "{r}");
        }
        // The gateway reads notifications in order but handles each in a
        // task of its own: wait (a hang guard, not a timing check) until it
        // has dropped all but what the queue and the pipes can hold, so
        // that A's reading cannot make room while the flood is handled.
        // Without the bound nothing is dropped and this never ends.
        let guard = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        let dropped_so_far = || (1..=2).map(|id| gw.shared.relay.queue_counts(id).1).max().unwrap_or(0);
        while dropped_so_far() < total - 500 {
            assert!(
                tokio::time::Instant::now() < guard,
                "the gateway never dropped the flood ({} dropped)",
                dropped_so_far()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // A asks something while blocked; it must get its answer.
        let ping = a.start_request("ping", json!({})).await;
        // Now A reads: the flood's answer, the ping's, and the reports of
        // what was dropped (one each time its queue drained, so possibly
        // several) until every notification of the flood is accounted for.
        let mut progress = 0u64;
        let mut answers = 0;
        let mut dropped = 0u64;
        let mut reports = 0;
        // A hang guard, not a timing check: without the bound no report comes.
        let guard = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
        while answers < 2 || progress + dropped < total {
            let v = tokio::time::timeout_at(guard, a.next_message())
                .await
                .unwrap_or_else(|_| {
                    panic!("not everything accounted for (read {progress} progress, {dropped} reported dropped)")
                });
            if v.get("id") == Some(&json!(flood)) || v.get("id") == Some(&json!(ping)) {
                assert!(v.get("result").is_some(), "{v}");
                answers += 1;
            } else if method(&v) == "notifications/progress" {
                progress += 1;
            } else if method(&v) == "notifications/message" {
                let text = v["params"]["data"].as_str().unwrap_or("").to_owned();
                // "... (L log messages, P progress, U resource updates; ..."
                let n = text
                    .split(" progress")
                    .next()
                    .and_then(|t| t.rsplit(", ").next())
                    .and_then(|p| p.parse::<u64>().ok());
                if let Some(n) = n {
                    assert!(text.contains("not reading"), "{text}");
                    dropped += n;
                    reports += 1;
                }
            }
        }
        eprintln!("the client read {progress} progress notifications; {dropped} dropped ({reports} reports)");
        // Most of the flood was dropped (the pipes hold a few hundred), and
        // nothing is counted twice.
        assert!(dropped >= total / 2, "dropped {dropped}, got {progress}");
        assert_eq!(progress + dropped, total, "dropped {dropped}, got {progress}");
    });
}

#[test]
fn search_text_cannot_be_forged_by_tool_names_or_descriptions() {
    rt().block_on(async {
        let gw = gateway(&hostile("h", &["--evil-tools"], ""), "").await;
        let mut up = Upstream::connect(gw).await;
        let r = up
            .request(
                "tools/call",
                json!({"name": "search", "arguments": {"query": "evil tool forged line", "limit": 50}}),
            )
            .await;
        let text = call_text(&r);
        let results = r["result"]["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .clone();
        let names: Vec<&str> = results.iter().map(|x| x["name"].as_str().unwrap()).collect();
        // Names with a newline or a bidi override are refused.
        assert!(names.contains(&"h__evil_desc"), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("evil\r") || n.contains('\u{202e}')));
        // One line per result, nothing hidden or forged.
        assert!(
            !text.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{text:?}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), results.len(), "{text}");
        assert!(!lines.iter().any(|l| l.starts_with("hostile__forged")), "{text}");
        let evil = lines.iter().find(|l| l.starts_with("h__evil_desc")).unwrap();
        assert!(evil.contains("\\u{1b}[31m") && evil.contains("\\u{1b}]0;pwned\\u{7}"), "{evil}");
        // The JSON form holds the escaped text too: clients show a
        // listing's descriptions and titles (attack atk25c F5).
        let desc = results.iter().find(|x| x["name"] == "h__evil_desc").unwrap()["description"]
            .as_str()
            .unwrap();
        assert!(!desc.contains('\u{1b}') && desc.contains("\\u{1b}"), "{desc:?}");
        // read_tool_docs too.
        let r = up
            .request(
                "tools/call",
                json!({"name": "read_tool_docs", "arguments": {"name": "h__evil_desc"}}),
            )
            .await;
        let docs = call_text(&r);
        assert!(
            !docs.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{docs:?}"
        );
    });
}

#[test]
fn roots_requests_are_capped_in_flight_and_time_out_with_a_cancel() {
    rt().block_on(async {
        let gw = gateway(
            &hostile("h", &[], ""),
            "passthrough = true\nmax_client_requests_in_flight = 3\nclient_request_timeout = \"2s\"\ncall_timeout = \"20s\"",
        )
        .await;
        // The client declares roots, reads, and never answers.
        let mut up = Upstream::connect_with(gw, 1 << 20, json!({"roots": {}})).await;
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 10, "kind": "roots", "wait_errors": 7}}),
            )
            .await;
        let mut messages = errors_of(&r, 7);
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 0, "wait_errors": 3}}),
            )
            .await;
        messages.extend(errors_of(&r, 3));
        let refused = messages
            .iter()
            .filter(|m| {
                m.contains("refused this roots request")
                    && m.contains("max_client_requests_in_flight = 3")
            })
            .count();
        let timed_out = messages
            .iter()
            .filter(|m| m.contains("roots request") && m.contains("client_request_timeout"))
            .count();
        assert_eq!((refused, timed_out), (7, 3), "{messages:?}");
        while up
            .seen
            .iter()
            .filter(|v| method(v) == "notifications/cancelled")
            .count()
            < 3
        {
            let v = up.next_message().await;
            up.seen.push(v);
        }
        let asked = up
            .seen
            .iter()
            .filter(|v| method(v) == "roots/list")
            .count();
        assert_eq!(asked, 3, "{:?}", up.seen);
    });
}

/// Whether process `pid` is gone (or a zombie), polled for at most 10 s.
async fn gone(pid: &str) -> bool {
    for _ in 0..200 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    false
}

/// A server flooding `ping` (answered by the SDK itself): `cut` is the
/// gateway setting under test, `read` whether the server reads at all.
async fn ping_flood_is_cut_off(settings: &str, read: bool, key: &str) {
    let dir = skarn_test_support::TempDir::new("ping-flood");
    let pid_file = dir.s("pid");
    let servers = format!(
        "{}{}",
        hostile(
            "h",
            &["--pid-file", &pid_file],
            "[servers.h.sandbox]\nenabled = false"
        ),
        hostile("ok", &[], ""),
    );
    let gw = gateway(&servers, &format!("call_timeout = \"20s\"\n{settings}")).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let e = gw
        .call_tool(
            "h",
            "ping_flood",
            json!({"count": 200_000, "read": read}).as_object().cloned(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("was cut off by the gateway") && e.contains(key),
        "{e}"
    );
    // Marked failed with the cause, its process killed, its tools refused
    // with the cause; the other server still works.
    let h = gw.health();
    let me = h.iter().find(|s| s.name == "h").unwrap();
    assert_eq!(me.status, "failed", "{h:?}");
    assert!(me.cause.as_deref().unwrap_or("").contains(key), "{h:?}");
    assert!(gone(pid.trim()).await, "server process {pid} still running");
    let e = gw
        .call_tool("h", "list_count", json!({}).as_object().cloned())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("cut off by the gateway"), "{e}");
    let r = gw
        .call_tool("ok", "list_count", json!({}).as_object().cloned())
        .await
        .unwrap();
    assert_eq!(crate::common::text(&r), "1");
    gw.shutdown();
}

#[test]
fn a_server_that_floods_pings_and_never_reads_is_cut_off() {
    rt().block_on(ping_flood_is_cut_off(
        "server_requests_per_second = 4000000000\nmax_pending_server_writes = 64",
        false,
        "gateway.max_pending_server_writes = 64",
    ));
}

#[test]
fn a_server_that_floods_requests_is_cut_off() {
    rt().block_on(ping_flood_is_cut_off(
        "server_requests_per_second = 50",
        true,
        "gateway.server_requests_per_second = 50",
    ));
}

#[test]
fn a_server_cut_off_while_idle_is_failed_at_once_and_restarted_in_the_background() {
    rt().block_on(async {
        let dir = skarn_test_support::TempDir::new("ping-flood-idle");
        let pid_file = dir.s("pid");
        let servers = hostile(
            "h",
            &["--pid-file", &pid_file, "--flood-pings", "100000"],
            "[servers.h.sandbox]\nenabled = false",
        );
        let gw = Gateway::new(crate::common::config(&servers, ""));
        gw.start();
        // Nobody calls it or asks for its health: the background restart
        // (after the 1 s backoff of a failed server) shows it was marked
        // failed when it was cut off. Each run writes its own pid.
        let mut pids = Vec::new();
        for _ in 0..600 {
            if let Ok(p) = std::fs::read_to_string(&pid_file)
                && !p.is_empty()
                && pids.last() != Some(&p)
            {
                pids.push(p);
                if pids.len() == 2 {
                    break;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(pids.len(), 2, "not restarted: {pids:?}");
        assert!(
            gone(pids[0].trim()).await,
            "first run {} still running",
            pids[0]
        );
        gw.shutdown();
    });
}
