//! `skarn serve` against a hostile downstream server, at the default
//! settings, judged from outside: what reaches the client and how much
//! memory the gateway process took (its peak RSS, from /proc).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

pub(crate) struct Gw {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
    /// Notifications and requests seen while waiting for responses.
    pub(crate) seen: Vec<Value>,
}

impl Gw {
    /// A gateway over the hostile server started with `args` as `[servers.<alias>]`
    /// entries: `(alias, args)`, plus `extra` lines for `[gateway]`.
    pub(crate) fn start(dir: &Path, gateway: &str, servers: &[(&str, &[&str])]) -> Gw {
        let hostile = sibling("skarn-hostile-server");
        let mut cfg = format!("[gateway]\n{gateway}\n");
        for (alias, args) in servers {
            cfg.push_str(&format!(
                "\n[servers.{alias}]\ncommand = {:?}\nargs = {:?}\n",
                hostile.display().to_string(),
                args
            ));
        }
        let path = dir.join("skarn.toml");
        std::fs::write(&path, cfg).unwrap();
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut child = Command::new(SKARN)
            .args(["serve", "--config"])
            .arg(&path)
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
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
        let mut gw = Gw {
            child,
            stdin,
            lines: rx,
            next_id: 1,
            seen: Vec::new(),
        };
        gw.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gw
    }

    pub(crate) fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .expect("no answer from skarn serve (did it die?)");
            let m: Value = serde_json::from_str(&line).unwrap();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.seen.push(m);
        }
    }

    pub(crate) fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Peak resident memory of the gateway process, in KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Gw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A 20 KB schema that expands to gigabytes of TypeScript (fan-out 60,
/// twice) used to abort the gateway (allocation failure), taking every
/// session and server with it; fan-out 40 made a 137 MB answer.
#[test]
fn a_schema_bomb_fails_its_own_docs_only_and_the_gateway_stays_small() {
    let dir = TempDir::new("serve_hostile_down");
    let mut gw = Gw::start(dir.path(), "", &[("bad", &["--schema-bomb", "60"])]);
    let r = gw.call("read_tool_docs", json!({"name": "bad__bomb"}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    assert!(
        text(&r).contains("TypeScript signature over"),
        "{}",
        text(&r)
    );
    // The gateway is alive and the server's other tools are documented.
    let r = gw.call("read_tool_docs", json!({"name": "bad__notify"}));
    assert!(
        text(&r).contains("skarn.callTool(\"bad\", \"notify\""),
        "{r}"
    );
    let r = gw.call("search", json!({"query": "schema bomb"}));
    assert!(text(&r).contains("bad__bomb"), "{r}");
    let peak = gw.peak_rss_kib();
    eprintln!("gateway peak RSS after the schema bomb: {peak} KiB");
    assert!(peak < 200 * 1024, "gateway peak RSS {peak} KiB");
}
