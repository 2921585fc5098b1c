//! `skarn serve` against a hostile Streamable HTTP downstream (a small
//! raw HTTP/1.1 server on loopback in this test), at the default settings
//! except the hostile server's own call `timeout`: every hostile answer
//! gives the client one clear error, another server's tool still answers,
//! and the gateway's peak RSS (from /proc) stays bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve_hostile_down::{Gw, hostile_server, text};
use skarn_test_support::TempDir;

const TOOLS: [&str; 11] = [
    "values",
    "deep",
    "long_string",
    "error_bomb",
    "slow_body",
    "endless_sse",
    "wrong_type",
    "redirect",
    "big_header",
    "session_games",
    "ok",
];

/// One request: its first line and its body (headers up to 64 KiB).
fn read_request(r: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut first = String::new();
    r.read_line(&mut first).ok()?;
    let mut len = 0usize;
    let mut seen = 0usize;
    loop {
        let mut h = String::new();
        let n = r.read_line(&mut h).ok()?;
        seen += n;
        if n == 0 || seen > 64 << 10 {
            return None;
        }
        if h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; len.min(1 << 20)];
    r.read_exact(&mut body).ok()?;
    Some((first, body))
}

fn reply(s: &mut TcpStream, status: &str, headers: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body);
}

fn json_reply(s: &mut TcpStream, status: &str, headers: &str, v: &Value) {
    let h = format!("Content-Type: application/json\r\n{headers}");
    reply(s, status, &h, v.to_string().as_bytes());
}

/// An answer for `id` whose `structuredContent` is `inner` (raw JSON).
fn raw_answer(id: &Value, inner: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"x"}}],"structuredContent":{{"a":{inner}}}}}}}"#
    )
    .into_bytes()
}

struct Hostile {
    url: String,
    /// Connections the redirect target (another host) accepted.
    elsewhere: Arc<AtomicUsize>,
}

fn start_hostile() -> Hostile {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let other = TcpListener::bind("127.0.0.2:0")
        .or_else(|_| TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let other_addr = other.local_addr().unwrap();
    let elsewhere = Arc::new(AtomicUsize::new(0));
    let count = elsewhere.clone();
    std::thread::spawn(move || {
        for s in other.incoming() {
            if s.is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let target = format!("http://localhost:{}/mcp", other_addr.port());
            std::thread::spawn(move || serve_one(s, &target));
        }
    });
    Hostile {
        url: format!("http://127.0.0.1:{port}/mcp"),
        elsewhere,
    }
}

fn serve_one(s: TcpStream, redirect_to: &str) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut s = s;
    let Some((first, body)) = read_request(&mut r) else {
        return;
    };
    if !first.starts_with("POST") {
        return reply(&mut s, "405 Method Not Allowed", "", b"");
    }
    let Ok(m) = serde_json::from_slice::<Value>(&body) else {
        return reply(&mut s, "400 Bad Request", "", b"");
    };
    let id = m["id"].clone();
    let method = m["method"].as_str().unwrap_or_default();
    if id.is_null() {
        return reply(&mut s, "202 Accepted", "", b"");
    }
    let sid = "Mcp-Session-Id: s1\r\n";
    match method {
        "initialize" => json_reply(
            &mut s,
            "200 OK",
            sid,
            &json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile-http", "version": "0"}}}),
        ),
        "tools/list" => {
            let tools: Vec<Value> = TOOLS
                .iter()
                .map(|t| json!({"name": t, "inputSchema": {"type": "object"}}))
                .collect();
            json_reply(
                &mut s,
                "200 OK",
                sid,
                &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}}),
            )
        }
        "tools/call" => {
            let tool = m["params"]["name"].as_str().unwrap_or_default().to_owned();
            hostile_call(&mut s, &tool, &id, redirect_to)
        }
        _ => json_reply(
            &mut s,
            "200 OK",
            sid,
            &json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}}),
        ),
    }
}

fn hostile_call(s: &mut TcpStream, tool: &str, id: &Value, redirect_to: &str) {
    let json_h = "Content-Type: application/json\r\n";
    match tool {
        // 14 MB of `0,`: 7 million values, under the byte limit.
        "values" => {
            let inner = format!("[{}0]", "0,".repeat(7_000_000));
            reply(s, "200 OK", json_h, &raw_answer(id, &inner))
        }
        "deep" => {
            let inner = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
            reply(s, "200 OK", json_h, &raw_answer(id, &inner))
        }
        "long_string" => {
            let inner = format!("\"{}\"", "y".repeat(12 << 20));
            reply(s, "200 OK", json_h, &raw_answer(id, &inner))
        }
        // A JSON-RPC error with an error status whose data is 7 million values.
        "error_bomb" => {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-1,"message":"m","data":[{}0]}}}}"#,
                "0,".repeat(7_000_000)
            );
            reply(s, "500 Internal Server Error", json_h, body.as_bytes())
        }
        // Promises a body and sends a byte now and then (at most 30 s).
        "slow_body" => {
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
            );
            for _ in 0..300 {
                std::thread::sleep(Duration::from_millis(100));
                if s.write_all(b" ").is_err() {
                    return;
                }
            }
        }
        // One SSE event that never ends (24 MiB of data, no blank line).
        "endless_sse" => {
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\"a\":\"",
            );
            let chunk = vec![b'z'; 64 << 10];
            for _ in 0..384 {
                if s.write_all(&chunk).is_err() {
                    return;
                }
            }
            std::thread::sleep(Duration::from_secs(10));
        }
        "wrong_type" => reply(
            s,
            "200 OK",
            "Content-Type: text/html\r\n",
            b"<html>hi</html>",
        ),
        "redirect" => {
            let h = format!("Location: {redirect_to}\r\n");
            reply(s, "307 Temporary Redirect", &h, b"")
        }
        "big_header" => {
            let h = format!("{json_h}X-Junk: {}\r\n", "j".repeat(2 << 20));
            reply(s, "200 OK", &h, b"{}")
        }
        // A fresh 32 KiB session id on an answer, then the session "expired".
        "session_games" => {
            let h = format!("{json_h}Mcp-Session-Id: {}\r\n", "q".repeat(32 << 10));
            let _ = s.write_all(
                format!("HTTP/1.1 404 Not Found\r\n{h}Content-Length: 2\r\n\r\n{{}}").as_bytes(),
            );
        }
        _ => json_reply(
            s,
            "200 OK",
            "Mcp-Session-Id: s1\r\n",
            &json!({"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": "fine"}]}}),
        ),
    }
}

fn call_on(gw: &mut Gw, alias: &str, tool: &str) -> Value {
    gw.call(
        "execute",
        json!({"code": format!("return await skarn.callTool('{alias}', '{tool}', {{}})")}),
    )
}

fn call_hostile(gw: &mut Gw, tool: &str) -> Value {
    call_on(gw, "h", tool)
}

/// Call the hostile server's honest tool until it answers: a transport
/// error (wrong content type, a refused redirect) marks the server crashed
/// and a later call restarts it after its backoff.
fn until_ready(gw: &mut Gw) {
    for _ in 0..60 {
        if text(&call_hostile(gw, "ok")).contains("fine") {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("the hostile server's honest tool never answered again");
}

/// The other server (stdio) answers.
fn other_answers(gw: &mut Gw) {
    let r = gw.call(
        "execute",
        json!({"code": "await skarn.callTool('good', 'blocks', {count: 1}); return 'alive'"}),
    );
    assert!(text(&r).contains("alive"), "{r}");
}

/// Budget overruns fail the one call and leave the server ready; the
/// transport errors (each on a server entry of its own, since a crash
/// backs the entry's restarts off) fail the call and mark that entry
/// crashed, as for any transport error.
#[test]
fn a_hostile_http_server_gets_clear_errors_and_the_gateway_stays_small_and_responsive() {
    let dir = TempDir::new("serve_hostile_http");
    let h = start_hostile();
    let crashing = [
        ("error_bomb", "HTTP 500"),
        ("wrong_type", "text/html"),
        ("redirect", "307"),
        ("big_header", "error sending request"),
        ("endless_sse", "connection lost"),
        ("session_games", "Session expired"),
    ];
    let mut cfg = format!(
        "[gateway]\n\n[servers.h]\nurl = {:?}\nallow_private = true\ntimeout = 5\n",
        h.url
    );
    for (tool, _) in crashing {
        cfg.push_str(&format!(
            "\n[servers.{tool}]\nurl = {:?}\nallow_private = true\ntimeout = 5\n",
            h.url
        ));
    }
    cfg.push_str(&hostile_server("good", &["--tool-name", "blocks"]));
    // The test writes the file (with allow_private): its user trusts it.
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.path().join("skarn.toml"), &cfg).unwrap();
    crate::common::trust(&dir.path().join("skarn.toml"), &home);
    let mut gw = Gw::start_config(dir.path(), &home, &cfg, json!({}));
    until_ready(&mut gw);

    let budget = [
        ("values", "more than 1000000 JSON values"),
        ("deep", "levels of nesting"),
        ("long_string", "string longer than"),
    ];
    for (tool, cause) in budget {
        let r = call_hostile(&mut gw, tool);
        assert_eq!(r["result"]["isError"], json!(true), "{tool}: {r}");
        let t = text(&r);
        assert!(t.contains(cause) && t.contains("server h"), "{tool}: {t}");
        assert!(!t.contains("crashed"), "{tool}: {t}");
        other_answers(&mut gw);
    }
    for (tool, cause) in crashing {
        let r = call_on(&mut gw, tool, tool);
        assert_eq!(r["result"]["isError"], json!(true), "{tool}: {r}");
        let t = text(&r);
        eprintln!("{tool}: {}", t.lines().next().unwrap_or_default());
        assert!(t.contains(cause), "{tool}: {t}");
        other_answers(&mut gw);
    }
    // A slow body: the other server answers while it trickles in; the call
    // ends with the server's timeout.
    until_ready(&mut gw);
    gw.send(
        json!({"jsonrpc": "2.0", "id": 9000, "method": "tools/call", "params": {
        "name": "execute",
        "arguments": {"code": "return await skarn.callTool('h', 'slow_body', {})"}}}),
    );
    let mut slow = None;
    for _ in 0..120 {
        other_answers(&mut gw);
        slow = gw.seen.iter().find(|m| m["id"] == json!(9000)).cloned();
        if slow.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let slow = slow.expect("the slow call never ended");
    assert_eq!(slow["result"]["isError"], json!(true), "{slow}");
    eprintln!(
        "slow_body: {}",
        text(&slow).lines().next().unwrap_or_default()
    );

    // The hostile server's honest tool still works: no state was poisoned.
    until_ready(&mut gw);
    assert_eq!(
        h.elsewhere.load(Ordering::SeqCst),
        0,
        "the redirect to another host was followed"
    );
    let peak = gw.peak_rss_kib();
    eprintln!("gateway peak RSS under the hostile HTTP server: {peak} KiB");
    assert!(peak < 200 * 1024, "gateway peak RSS {peak} KiB");
    gw.finish();
}
