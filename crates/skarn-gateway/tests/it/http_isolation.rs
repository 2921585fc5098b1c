//! Two clients of the gateway's HTTP transport, in both eras (2025-11-25
//! sessions, 2026-07-28 stateless requests): one client's subscriptions,
//! progress tokens and log level never reach the other. Raw HTTP/1.0 clients on loopback (close-delimited bodies),
//! each with its own session and its own GET event stream; judged from
//! every message each client reads. Default settings (passthrough on, to
//! call the servers' tools by name).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use skarn_test_support::target_bin;
use tokio_util::sync::CancellationToken;

use crate::common::{config, hostile, rt};

pub(crate) const TOKEN: &str = "isolation-token";

/// One raw client: its session and everything it has read.
pub(crate) struct Client {
    addr: String,
    session: String,
    seen: Arc<Mutex<Vec<Value>>>,
    next: u64,
}

/// Send one request (`session`: a session id, or whole header lines when
/// it holds a colon) and read its head and the `data:` messages of its
/// body until `until` says stop (or the body ends).
pub(crate) fn exchange(
    addr: &str,
    method: &str,
    session: Option<&str>,
    body: &str,
    seen: &Mutex<Vec<Value>>,
    until: &dyn Fn(&Value) -> bool,
) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let sid = match session {
        Some(h) if h.contains(':') => h.to_owned(),
        Some(v) => format!("Mcp-Session-Id: {v}\r\nMCP-Protocol-Version: 2025-11-25\r\n"),
        None => String::new(),
    };
    write!(
        s,
        "{method} /mcp HTTP/1.0\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{sid}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let json_body = head.to_ascii_lowercase().contains("application/json");
    let mut line = String::new();
    while r.read_line(&mut line).unwrap_or(0) > 0 {
        let data = if json_body {
            Some(line.trim())
        } else {
            line.strip_prefix("data:").map(str::trim)
        };
        if let Some(v) = data.and_then(|d| serde_json::from_str::<Value>(d).ok()) {
            let stop = until(&v);
            seen.lock().unwrap().push(v);
            if stop {
                break;
            }
        }
        line.clear();
    }
    head
}

impl Client {
    pub(crate) fn connect(addr: &str) -> Client {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}});
        let head = exchange(addr, "POST", None, &init.to_string(), &seen, &|v| {
            v["id"] == json!(0)
        });
        let session = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no session id: {head}"));
        let c = Client {
            addr: addr.to_owned(),
            session,
            seen,
            next: 1,
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        exchange(
            addr,
            "POST",
            Some(&c.session),
            &note.to_string(),
            &c.seen,
            &|_| true,
        );
        // Its GET stream, read for as long as the gateway keeps it.
        let (addr, sid, seen) = (c.addr.clone(), c.session.clone(), c.seen.clone());
        std::thread::spawn(move || exchange(&addr, "GET", Some(&sid), "", &seen, &|_| false));
        c
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = json!(self.next);
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let is_answer = |v: &Value| v["id"] == id && v.get("method").is_none();
        exchange(
            &self.addr,
            "POST",
            Some(&self.session),
            &m.to_string(),
            &self.seen,
            &is_answer,
        );
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .rev()
            .find(|v| is_answer(v))
            .cloned()
            .expect("no answer")
    }

    /// Notifications read so far with method `m`.
    fn notes(&self, m: &str) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|v| v["method"] == m).cloned().collect()
    }
}

#[test]
fn two_http_clients_never_see_each_others_subscriptions_progress_or_logs() {
    let rt = rt();
    let servers = format!(
        "{}[servers.conf]\ncommand = {:?}\n",
        hostile("h", &["--resource", "test://h/r"], ""),
        target_bin("skarn-conformance-server").display().to_string()
    );
    let gw = skarn_gateway::Gateway::new(config(&servers, "passthrough = true"));
    let stop = CancellationToken::new();
    let addr = rt.block_on(async {
        gw.start();
        gw.settle(Duration::from_secs(30)).await;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        tokio::spawn(skarn_gateway::http::serve_http(
            gw.clone(),
            l,
            TOKEN.into(),
            stop.clone(),
        ));
        addr
    });
    let mut a = Client::connect(&addr);
    let mut b = Client::connect(&addr);
    let uri = "test://h/r";

    // A: a log level, a subscription, calls with its progress token.
    a.request("logging/setLevel", json!({"level": "debug"}));
    let r = a.request("resources/subscribe", json!({"uri": uri}));
    assert!(r.get("result").is_some(), "{r}");
    let r = a.request(
        "tools/call",
        json!({"name": "h__flood", "arguments": {"count": 3, "bytes": 50},
               "_meta": {"progressToken": "a-token"}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    let r = a.request(
        "tools/call",
        json!({"name": "conf__test_tool_with_logging", "arguments": {}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    // B's call makes the server announce an update of A's resource.
    let r = b.request(
        "tools/call",
        json!({"name": "h__updated", "arguments": {"uri": uri}}),
    );
    assert!(r.get("result").is_some(), "{r}");

    // A gets its own: progress, logs, the update of its subscription (up
    // to 30 s: on a loaded machine the relay of the notes lags).
    for _ in 0..600 {
        if !a.notes("notifications/resources/updated").is_empty()
            && a.notes("notifications/message").len() >= 3
            && !a.notes("notifications/progress").is_empty()
        {
            break;
        }
        a.request("ping", json!({}));
        std::thread::sleep(Duration::from_millis(50));
    }
    let progress = a.notes("notifications/progress");
    assert!(
        !progress.is_empty()
            && progress
                .iter()
                .all(|p| p["params"]["progressToken"] == "a-token"),
        "{progress:?}"
    );
    assert!(
        !a.notes("notifications/resources/updated").is_empty(),
        "A: {:?}",
        a.seen
    );
    assert!(
        a.notes("notifications/message").len() >= 3,
        "A: {:?}",
        a.seen
    );

    // B (never subscribed, no log level, no token) got none of it.
    for _ in 0..10 {
        b.request("ping", json!({}));
        std::thread::sleep(Duration::from_millis(50));
    }
    for m in [
        "notifications/progress",
        "notifications/message",
        "notifications/resources/updated",
    ] {
        assert!(b.notes(m).is_empty(), "B got A's {m}: {:?}", b.seen);
    }

    // B's own progress token reaches B only.
    let before = a.notes("notifications/progress").len();
    let r = b.request(
        "tools/call",
        json!({"name": "h__flood", "arguments": {"count": 3, "bytes": 50},
               "_meta": {"progressToken": "b-token"}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    a.request("ping", json!({}));
    assert_eq!(
        a.notes("notifications/progress").len(),
        before,
        "{:?}",
        a.seen
    );
    assert!(
        b.notes("notifications/progress")
            .iter()
            .all(|p| p["params"]["progressToken"] == "b-token"),
        "{:?}",
        b.seen
    );
    stop.cancel();
    drop(rt);
}

/// A 2026-07-28 request (no session): its headers and its message.
pub(crate) fn modern(id: u64, method: &str, name: &str, mut params: Value) -> (String, String) {
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    params["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"name": "t", "version": "0"});
    let mut h = format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n");
    if !name.is_empty() {
        h.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    (h, m.to_string())
}

/// A modern client's `subscriptions/listen` stream, read in a thread.
fn listen(addr: &str, filter: Value) -> Arc<Mutex<Vec<Value>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (h, m) = modern(
        1,
        "subscriptions/listen",
        "",
        json!({"notifications": filter}),
    );
    let (addr, s) = (addr.to_owned(), seen.clone());
    std::thread::spawn(move || exchange(&addr, "POST", Some(&h), &m, &s, &|_| false));
    seen
}

/// A modern tools/call; everything its stream carried, the answer last.
fn modern_call(addr: &str, id: u64, name: &str, args: Value, meta: Value) -> Vec<Value> {
    let seen = Mutex::new(Vec::new());
    let (h, m) = modern(
        id,
        "tools/call",
        name,
        json!({"name": name, "arguments": args, "_meta": meta}),
    );
    exchange(addr, "POST", Some(&h), &m, &seen, &|v| {
        v["id"] == json!(id) && v.get("method").is_none()
    });
    seen.into_inner().unwrap()
}

fn methods(seen: &Mutex<Vec<Value>>, m: &str) -> Vec<Value> {
    let seen = seen.lock().unwrap();
    seen.iter().filter(|v| v["method"] == m).cloned().collect()
}

#[test]
fn two_stateless_http_clients_never_see_each_others_subscriptions_or_progress() {
    let rt = rt();
    let servers = hostile("h", &["--resource", "test://h/r"], "");
    let gw = skarn_gateway::Gateway::new(config(&servers, "passthrough = true"));
    let stop = CancellationToken::new();
    let addr = rt.block_on(async {
        gw.start();
        gw.settle(Duration::from_secs(30)).await;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        tokio::spawn(skarn_gateway::http::serve_http(
            gw.clone(),
            l,
            TOKEN.into(),
            stop.clone(),
        ));
        addr
    });
    let uri = "test://h/r";
    // A listens for updates of the resource; B only for list changes.
    let a_listen = listen(&addr, json!({"resourceSubscriptions": [uri]}));
    let b_listen = listen(&addr, json!({"toolsListChanged": true}));
    std::thread::sleep(Duration::from_millis(300));

    // A's call with its progress token: the progress is on A's stream.
    let a_call = modern_call(
        &addr,
        10,
        "h__flood",
        json!({"count": 3, "bytes": 50}),
        json!({"progressToken": "a-token"}),
    );
    let last = a_call.last().unwrap();
    assert!(last.get("result").is_some(), "{a_call:?}");
    let progress: Vec<&Value> = a_call
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .collect();
    assert!(
        !progress.is_empty()
            && progress
                .iter()
                .all(|p| p["params"]["progressToken"] == "a-token"),
        "{a_call:?}"
    );
    // B's call makes the server announce an update of A's resource.
    let b_call = modern_call(&addr, 11, "h__updated", json!({"uri": uri}), json!({}));
    assert!(b_call.last().unwrap().get("result").is_some(), "{b_call:?}");
    assert!(
        b_call
            .iter()
            .all(|v| v["method"] != "notifications/progress"),
        "{b_call:?}"
    );
    for _ in 0..100 {
        if !methods(&a_listen, "notifications/resources/updated").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !methods(&a_listen, "notifications/resources/updated").is_empty(),
        "A's listen stream: {:?}",
        a_listen.lock().unwrap()
    );
    std::thread::sleep(Duration::from_millis(300));
    for m in [
        "notifications/progress",
        "notifications/resources/updated",
        "notifications/message",
    ] {
        assert!(
            methods(&b_listen, m).is_empty(),
            "B's listen stream got {m}: {:?}",
            b_listen.lock().unwrap()
        );
    }
    assert!(methods(&a_listen, "notifications/progress").is_empty());
    stop.cancel();
    drop(rt);
}
