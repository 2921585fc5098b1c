//! `skarn serve` over stdio relaying `skarn-conformance-server`: listings
//! are complete at the first request and their growth is announced;
//! progress and log messages come back to the client; elicitation and
//! sampling go to the client (also during `execute`) and are never
//! answered on the user's behalf.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// Notifications and requests seen while waiting for responses.
    seen: Vec<Value>,
}

impl Session {
    fn start(dir: &Path, passthrough: bool) -> Session {
        let server = sibling("skarn-conformance-server");
        let cfg = dir.join("skarn.toml");
        std::fs::write(
            &cfg,
            format!(
                "[gateway]\npassthrough = {passthrough}\nisolation = \"in_process\"\n\n\
                 [servers.conformance]\ncommand = {:?}\n",
                server.display().to_string()
            ),
        )
        .unwrap();
        let mut child = Command::new(SKARN)
            .env("XDG_STATE_HOME", crate::common::state_home())
            .args(["serve", "--config"])
            .arg(&cfg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no message from skarn serve");
        serde_json::from_str(&line).unwrap()
    }

    /// The response with this id; `answer` answers the gateway's requests.
    fn response_with(&mut self, id: u64, answer: &dyn Fn(&Value) -> Value) -> Value {
        loop {
            let m = self.recv();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            if m.get("method").is_some() && m.get("id").is_some() {
                let reply = json!({"jsonrpc": "2.0", "id": m["id"], "result": answer(&m)});
                self.send(reply);
            }
            self.seen.push(m);
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response_with(id, &|m| panic!("unexpected request {m}"))
    }

    fn initialize(&mut self, capabilities: Value) {
        self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn saw(&self, method: &str) -> Vec<&Value> {
        self.seen.iter().filter(|m| m["method"] == method).collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn first_listings_are_complete_and_their_growth_is_announced() {
    let dir = TempDir::new("serve_relay");
    let mut s = Session::start(dir.path(), false);
    s.initialize(json!({}));
    // Right after initialize: the listings wait for the starting server.
    let r = s.request(2, "resources/list", json!({}));
    // Three, and the 2026-07-28 `input_required` one (issue 26).
    assert_eq!(r["result"]["resources"].as_array().unwrap().len(), 4, "{r}");
    let r = s.request(3, "prompts/list", json!({}));
    // Four prompts, and the 2026-07-28 `input_required` one (issue 26).
    assert_eq!(r["result"]["prompts"].as_array().unwrap().len(), 5, "{r}");
    let r = s.request(
        4,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "simple text response"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["results"][0]["name"], "conformance__test_simple_text",
        "{r}"
    );
    // The catalogue grew after initialize: both lists were announced.
    let mut id = 10;
    while s.saw("notifications/resources/list_changed").is_empty()
        || s.saw("notifications/prompts/list_changed").is_empty()
    {
        id += 1;
        s.request(id, "ping", json!({}));
        assert!(id < 500, "no list_changed announcements: {:?}", s.seen);
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn elicitation_and_sampling_without_the_capability_are_errors_not_answers() {
    let dir = TempDir::new("serve_relay");
    let mut s = Session::start(dir.path(), true);
    s.initialize(json!({}));
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "conformance__test_elicitation", "arguments": {"message": "who?"}}),
    );
    let t = text(&r);
    assert!(
        t.contains("did not declare the elicitation capability"),
        "{r}"
    );
    assert!(!t.contains("action="), "answered for the user: {r}");
    let r = s.request(
        3,
        "tools/call",
        json!({"name": "conformance__test_sampling", "arguments": {"prompt": "hi"}}),
    );
    assert!(
        text(&r).contains("did not declare the sampling capability"),
        "{r}"
    );
}

#[test]
fn progress_and_logs_are_relayed_and_execute_reaches_the_client() {
    let dir = TempDir::new("serve_relay");
    let mut s = Session::start(dir.path(), true);
    s.initialize(json!({"elicitation": {}}));
    // Progress under the client's own token.
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "conformance__test_tool_with_progress", "arguments": {},
               "_meta": {"progressToken": "mine"}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    let p = s.saw("notifications/progress");
    assert_eq!(p.len(), 3, "{:?}", s.seen);
    assert!(p.iter().all(|m| m["params"]["progressToken"] == "mine"));
    // Log messages, tagged with the server.
    s.request(3, "logging/setLevel", json!({"level": "debug"}));
    s.request(
        4,
        "tools/call",
        json!({"name": "conformance__test_tool_with_logging", "arguments": {}}),
    );
    let mut id = 10;
    while s.saw("notifications/message").len() < 3 {
        id += 1;
        s.request(id, "ping", json!({}));
        assert!(id < 500, "log messages missing: {:?}", s.seen);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        s.saw("notifications/message")[0]["params"]["logger"],
        "conformance"
    );
    // During execute: the elicitation reaches this client, which answers;
    // the script's progress comes under the execute call's token.
    s.seen.clear();
    let code = "const r = await skarn.callTool('conformance', 'test_elicitation', {message: 'name?'}); \
                await skarn.callTool('conformance', 'test_simple_text', {}); return r;";
    s.send(json!({"jsonrpc": "2.0", "id": 600, "method": "tools/call",
                  "params": {"name": "execute", "arguments": {"code": code},
                             "_meta": {"progressToken": 7}}}));
    let r = s.response_with(600, &|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        json!({"action": "accept", "content": {"username": "ada", "email": "a@b.c"}})
    });
    assert!(text(&r).contains("action=accept"), "{r}");
    assert!(text(&r).contains("ada"), "{r}");
    let p = s.saw("notifications/progress");
    assert_eq!(p.len(), 2, "{:?}", s.seen);
    assert!(p.iter().all(|m| m["params"]["progressToken"] == 7));
}
