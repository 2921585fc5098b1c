//! The gateway against hostile downstream servers (issue 10): resource
//! capture across servers, endless listings, `list_changed` floods, a slow
//! server during refreshes, and answers over the line limit. Every check is
//! made from outside: through the upstream MCP surface, the script bridge,
//! or the fake server's own counters.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{Upstream, gateway, hostile, rt, text};
use serde_json::{Value, json};
use skarn_codemode::ToolBridge;
use skarn_gateway::Gateway;

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

async fn read(up: &mut Upstream, uri: &str) -> Value {
    up.request("resources/read", json!({"uri": uri})).await
}

fn served_by(v: &Value) -> String {
    v.pointer("/result/contents/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("not a result: {v}"))
        .to_owned()
}

#[test]
fn resource_reads_go_to_the_server_that_owns_the_uri() {
    rt().block_on(async {
        let servers = format!(
            "{}{}{}",
            hostile("alice", &["--template", "notes://alice/{path}"], ""),
            hostile(
                "bob",
                &[
                    "--template",
                    "notes://{user}/inbox/{id}",
                    "--resource",
                    "notes://alice/readme"
                ],
                ""
            ),
            hostile("carol", &["--template", "notes://{user}/{path}"], ""),
        );
        let gw = gateway(&servers, "").await;
        let mut up = Upstream::connect(gw.clone()).await;
        // Alice's template has the longest literal prefix but does not match.
        let r = read(&mut up, "notes://alice/inbox/7").await;
        assert_eq!(served_by(&r), "served by bob: notes://alice/inbox/7");
        // An exact URI one server lists does not win over another server's
        // template that matches it (attack F1 of round 3: a listing could
        // capture reads meant for the template's owner): refused, naming both.
        let r = read(&mut up, "notes://alice/readme").await;
        let msg = r
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        assert!(
            msg.contains("alice") && msg.contains("bob") && msg.contains("more than one"),
            "{r}"
        );
        let r = read(&mut up, "notes://bob/todo").await;
        assert_eq!(served_by(&r), "served by carol: notes://bob/todo");
        // Two servers' templates match: refused, naming both.
        let r = read(&mut up, "notes://alice/todo").await;
        let msg = r
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        assert!(
            msg.contains("alice") && msg.contains("carol") && msg.contains("more than one"),
            "{r}"
        );
        let r = read(&mut up, "other://x").await;
        assert!(r.get("error").is_some(), "{r}");
        gw.shutdown();
    });
}

#[test]
fn endless_listing_fails_the_server_with_a_clear_cause() {
    rt().block_on(async {
        let servers = format!(
            "{}{}",
            hostile("endless", &["--endless-pages"], ""),
            hostile("fine", &[], "")
        );
        let gw = gateway(&servers, "").await;
        let h = gw.health();
        let endless = h.iter().find(|s| s.name == "endless").unwrap();
        assert_eq!(endless.status, "failed", "{h:?}");
        let cause = endless.cause.clone().unwrap_or_default();
        assert!(
            cause.contains("tools/list went past 100 pages (gateway.max_list_pages)"),
            "{cause}"
        );
        assert_eq!(h.iter().find(|s| s.name == "fine").unwrap().status, "ready");
        // The cause is visible in search results.
        let mut up = Upstream::connect(gw.clone()).await;
        let r = up
            .request(
                "tools/call",
                json!({"name": "search", "arguments": {"query": "tool"}}),
            )
            .await;
        assert!(r.to_string().contains("max_list_pages"), "{r}");
        gw.shutdown();
    });
}

/// A listing page of more items than `max_list_items` is refused while
/// its line is read, before anything decodes it (atk25d F3: 240 000
/// minimal tools were decoded in full first, 667 MB); the server fails
/// with that cause and the other server is unaffected.
#[test]
fn a_listing_past_the_item_cap_is_refused_before_it_is_decoded() {
    rt().block_on(async {
        let dir = skarn_test_support::TempDir::new("item-cap");
        let file = dir.s("tools.json");
        let tools: Vec<Value> = (0..50)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        std::fs::write(&file, Value::Array(tools).to_string()).unwrap();
        let servers = format!(
            "{}{}",
            hostile(
                "many",
                &["--tools-file", &file],
                "[servers.many.sandbox]\nenabled = false"
            ),
            hostile("fine", &[], "")
        );
        let gw = gateway(&servers, "max_list_items = 40").await;
        let h = gw.health();
        let many = h.iter().find(|s| s.name == "many").unwrap();
        assert_eq!(many.status, "failed", "{h:?}");
        let cause = many.cause.clone().unwrap_or_default();
        assert!(
            cause.contains("more than 40 items") && cause.contains("before parsing"),
            "{cause}"
        );
        assert_eq!(h.iter().find(|s| s.name == "fine").unwrap().status, "ready");
        gw.shutdown();
    });
}

/// A Streamable HTTP server on loopback whose `tools/list` page holds 50
/// tools, as a JSON body or as one SSE event; its URL.
fn http_server_listing_50(sse: bool) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some((k, v)) = h.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len.min(1 << 20)];
            if r.read_exact(&mut body).is_err() {
                continue;
            }
            let m: Value = serde_json::from_slice(&body).unwrap_or_default();
            let id = m["id"].clone();
            let result = match m["method"].as_str().unwrap_or_default() {
                _ if id.is_null() => {
                    let _ = s.write_all(
                        b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                "initialize" => json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "h", "version": "0"}}),
                "tools/list" => json!({"tools": (0..50)
                    .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
                    .collect::<Vec<_>>()}),
                _ => Value::Null,
            };
            let answer = if result.is_null() {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "method not found"}})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "result": result})
            }
            .to_string();
            let (ctype, body) = if sse {
                (
                    "text/event-stream",
                    format!("event: message\ndata: {answer}\n\n"),
                )
            } else {
                ("application/json", answer)
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/mcp")
}

/// The same cap for a Streamable HTTP server, whether its page comes as a
/// JSON body or as an SSE event (a known gap after atk25d: HTTP pages were
/// counted only once decoded).
#[test]
fn an_http_listing_past_the_item_cap_is_refused_before_it_is_decoded() {
    rt().block_on(async {
        let servers = format!(
            "[servers.asjson]\nurl = {:?}\nallow_private = true\n\n\
             [servers.assse]\nurl = {:?}\nallow_private = true\n\n{}",
            http_server_listing_50(false),
            http_server_listing_50(true),
            hostile("fine", &[], "")
        );
        let gw = gateway(&servers, "max_list_items = 40").await;
        let h = gw.health();
        for name in ["asjson", "assse"] {
            let s = h.iter().find(|s| s.name == name).unwrap();
            assert_eq!(s.status, "failed", "{h:?}");
            let cause = s.cause.clone().unwrap_or_default();
            assert!(
                cause.contains("more than 40 items") && cause.contains("before parsing"),
                "{name}: {cause}"
            );
        }
        assert_eq!(h.iter().find(|s| s.name == "fine").unwrap().status, "ready");
        gw.shutdown();
    });
}

/// Poll `list_count` until it stops moving and the catalogue holds the
/// listing it counts; bounded.
async fn settled_list_count(gw: &Arc<Gateway>, alias: &str) -> u64 {
    let mut last = None;
    let mut same = 0;
    for _ in 0..1200 {
        let r = gw
            .call_tool(alias, "list_count", args(json!({})))
            .await
            .unwrap();
        let n: u64 = text(&r).parse().unwrap();
        let fresh = gw
            .catalog()
            .by_name
            .contains_key(&format!("{alias}__{alias}_t{n}"));
        if last == Some(n) && fresh {
            same += 1;
            if same >= 10 {
                return n;
            }
        } else {
            same = 0;
        }
        last = Some(n);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the re-list count of {alias} never settled (last {last:?})");
}

#[test]
fn list_changed_flood_is_coalesced() {
    rt().block_on(async {
        let gw = gateway(&hostile("flood", &[], ""), "").await;
        gw.call_tool("flood", "notify", args(json!({"count": 2000})))
            .await
            .unwrap();
        let lists = settled_list_count(&gw, "flood").await;
        eprintln!("tools/list requests after 2000 list_changed: {lists}");
        assert!((2..=20).contains(&lists), "{lists} tools/list requests");
        gw.shutdown();
    });
}

/// atk25d F6: a server that keeps announcing list changes, one after
/// another for seconds, is re-listed about once a second
/// (`RELIST_GAP`), not once per announcement. The bound is taken from the
/// time the announcements really took, so a slow machine only widens it;
/// enough are sent that one re-list each would be far above it.
#[test]
fn a_steady_stream_of_list_changed_is_relisted_about_once_a_second() {
    rt().block_on(async {
        let gw = gateway(&hostile("drip", &[], ""), "").await;
        let before = settled_list_count(&gw, "drip").await;
        let start = std::time::Instant::now();
        let mut sent = 0u64;
        while start.elapsed() < Duration::from_secs(3) || sent < 100 {
            gw.call_tool("drip", "notify", args(json!({"count": 1})))
                .await
                .unwrap();
            sent += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let took = start.elapsed().as_secs() + 1;
        let lists = settled_list_count(&gw, "drip").await - before;
        eprintln!("{sent} list_changed over {took} s: {lists} re-lists");
        assert!(
            lists <= took + 2,
            "{lists} re-lists for {sent} announcements in {took} s"
        );
        assert!(
            sent >= 3 * (took + 2),
            "too few announcements to tell: {sent}"
        );
        gw.shutdown();
    });
}

#[test]
fn a_slow_server_does_not_block_other_refreshes() {
    rt().block_on(async {
        let servers = format!(
            "{}{}",
            hostile("slow", &["--slow-relist"], "timeout = 600"),
            hostile("fast", &[], "")
        );
        let gw = gateway(&servers, "").await;
        gw.call_tool("slow", "notify", args(json!({"count": 1})))
            .await
            .unwrap();
        // Wait until the slow server's re-list is in flight (never answered).
        for i in 0.. {
            let r = gw
                .call_tool("slow", "list_count", args(json!({})))
                .await
                .unwrap();
            if text(&r) == "2" {
                break;
            }
            assert!(i < 600, "the slow server was never re-listed");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        gw.call_tool("fast", "notify", args(json!({"count": 1})))
            .await
            .unwrap();
        for i in 0.. {
            if gw.catalog().by_name.contains_key("fast__fast_t2") {
                break;
            }
            assert!(i < 600, "fast's refresh waited for the slow server");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        gw.shutdown();
    });
}

#[test]
fn an_oversized_answer_is_a_clear_error_at_once() {
    rt().block_on(async {
        let gw = gateway(
            &hostile("big", &["--huge-answer", "17000000"], "timeout = 600"),
            "",
        )
        .await;
        let bridge: Arc<dyn ToolBridge> = Arc::new(skarn_gateway::bridge::GatewayBridge::new(
            gw.clone(),
            tokio::runtime::Handle::current(),
        ));
        // The call timeout is 600 s: only the substituted error ends this.
        let e = tokio::time::timeout(
            Duration::from_secs(120),
            bridge.call_tool("big", "huge", json!({})),
        )
        .await
        .expect("the oversized answer was dropped: the call hung")
        .unwrap_err();
        // One 17 MB string: the 8 MiB string cap (json_budget) or the
        // 16 MiB line cap, whichever the stream reaches first.
        assert!(
            e.to_string().contains("larger than") || e.to_string().contains("string longer than"),
            "{e}"
        );
        // A Code Mode script can catch it (its deadline is 600 s: only the
        // substituted error ends the call).
        let limits = skarn_codemode::Limits {
            deadline: Duration::from_secs(600),
            ..Default::default()
        };
        let code = "try { await skarn.callTool('big', 'huge', {}); return 'no error'; } \
                    catch (e) { return 'caught: ' + e.message; }";
        let b = bridge.clone();
        let run = tokio::task::spawn_blocking(move || skarn_codemode::execute(code, b, &limits));
        let out = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .expect("the script hung on the oversized answer")
            .unwrap();
        let v = out.result.unwrap();
        let v = v.as_str().unwrap_or_default();
        assert!(
            v.starts_with("caught: ")
                && (v.contains("larger than") || v.contains("string longer than")),
            "{v}"
        );
        // The connection is still good.
        let r = gw
            .call_tool("big", "list_count", args(json!({})))
            .await
            .unwrap();
        assert_eq!(text(&r), "1");
        gw.shutdown();
    });
}
