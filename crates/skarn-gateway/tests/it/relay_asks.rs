//! Which client a downstream server's question (elicitation, sampling)
//! reaches: only the client whose call to that server is in flight, never
//! another client's call (atk25d F4) nor a call to another server (atk25d
//! F1). Checked from outside: what each client receives and what the
//! server got back.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Upstream, gateway, hostile, rt};

/// Wait (bounded) until `path` exists; its text.
async fn wait_for(path: &str, lines: usize) -> String {
    for _ in 0..1200 {
        if let Ok(t) = std::fs::read_to_string(path)
            && t.lines().count() >= lines
        {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} never had {lines} lines");
}

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Two sessions call the same server; the question raised during the
/// first one's call is refused (the server's request names no call), and
/// never reaches the second session. Once only one client calls the
/// server, its question reaches that client.
#[test]
fn a_question_never_reaches_a_client_whose_call_did_not_raise_it() {
    rt().block_on(async {
        let dir = skarn_test_support::TempDir::new("relay-asks-two");
        let started = dir.s("started");
        let servers = hostile("h", &[], "[servers.h.sandbox]\nenabled = false");
        let gw = gateway(
            &servers,
            "passthrough = true\nclient_request_timeout = \"5s\"",
        )
        .await;
        let caps = json!({"elicitation": {}, "sampling": {}});
        let mut a = Upstream::connect_with(gw.clone(), 1 << 20, caps.clone()).await;
        let mut b = Upstream::connect_with(gw.clone(), 1 << 20, caps).await;
        // A's call reaches the server and waits there until B's call
        // arrives too; then the server asks.
        let ida = a
            .start_request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 1, "kind": "elicitation",
                    "touch": started, "wait_call": true, "wait_errors": 1}}),
            )
            .await;
        wait_for(&started, 0).await;
        let idb = b
            .start_request("tools/call", json!({"name": "h__list_count", "arguments": {}}))
            .await;
        let rb = b.response(idb).await;
        assert_eq!(text(&rb), "held", "{rb}");
        let asked = |u: &Upstream| {
            u.seen
                .iter()
                .filter(|m| m["method"] == "elicitation/create")
                .count()
        };
        assert_eq!(asked(&b), 0, "B got A's question: {:?}", b.seen);
        let ra = a.response(ida).await;
        assert!(text(&ra).contains("calls of several clients"), "{ra}");
        assert_eq!(asked(&a), 0, "{:?}", a.seen);

        // A alone: its question reaches A.
        let ida = a
            .start_request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 1, "kind": "elicitation", "wait_results": 1}}),
            )
            .await;
        let ra = loop {
            let m = a.next_message().await;
            if m["method"] == "elicitation/create" {
                a.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "decline"}}))
                    .await;
            } else if m.get("id") == Some(&json!(ida)) {
                break m;
            }
        };
        assert!(ra.get("result").is_some(), "{ra}");
        assert!(b.seen.iter().all(|m| m["method"] != "elicitation/create"));
        gw.shutdown();
    });
}

/// A 2026-07-28 client's call to server `a` is in flight when the idle
/// server `x` asks: the question is refused (idle-server rule), never put
/// in the rounds of the call to `a`, and that call returns its own result.
#[test]
fn an_idle_servers_question_never_rides_in_another_servers_call() {
    rt().block_on(async {
        let dir = skarn_test_support::TempDir::new("relay-asks-idle");
        let (go, answers, done) = (dir.s("go"), dir.s("answers"), dir.s("done"));
        let off = "[servers.a.sandbox]\nenabled = false";
        let servers = format!(
            "{}{}",
            hostile("a", &[], off),
            hostile(
                "x",
                &["--ask-when", &go, "--answers-file", &answers],
                "[servers.x.sandbox]\nenabled = false"
            ),
        );
        let gw = gateway(
            &servers,
            "passthrough = true\nclient_request_timeout = \"5s\"",
        )
        .await;
        let mut up = Upstream::connect_with(gw.clone(), 1 << 20, json!({})).await;
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}},
        });
        let id = up
            .start_request(
                "tools/call",
                json!({"name": "a__sample", "_meta": meta,
                    "arguments": {"count": 0, "touch": go, "wait_file": done}}),
            )
            .await;
        // x asked twice (elicitation, sampling) while the call to a was in
        // flight; both were refused as from an idle server.
        let got = wait_for(&answers, 2).await;
        assert!(
            got.lines().all(|l| l.contains("no call to it is in flight")),
            "{got}"
        );
        std::fs::write(&done, "").unwrap();
        let r = up.response(id).await;
        assert_ne!(r["result"]["resultType"], json!("input_required"), "{r}");
        assert!(text(&r).contains("\"errors\":0"), "{r}");
        gw.shutdown();
    });
}
