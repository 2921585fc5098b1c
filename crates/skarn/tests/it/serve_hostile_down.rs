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
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
    /// Notifications and requests seen while waiting for responses.
    pub(crate) seen: Vec<Value>,
}

impl Gw {
    /// A gateway over the hostile server started with `args` as `[servers.<alias>]`
    /// entries: `(alias, args)`, plus `extra` lines for `[gateway]`.
    pub(crate) fn start(dir: &Path, gateway: &str, servers: &[(&str, &[&str])]) -> Gw {
        Gw::start_with_home(dir, &dir.join("home"), gateway, servers, json!({}))
    }

    /// Like [`Gw::start`], with the configuration in `dir` and HOME `home`.
    pub(crate) fn start_with_home(
        dir: &Path,
        home: &Path,
        gateway: &str,
        servers: &[(&str, &[&str])],
        capabilities: Value,
    ) -> Gw {
        let mut cfg = format!("[gateway]\n{gateway}\n");
        for (alias, args) in servers {
            cfg.push_str(&hostile_server(alias, args));
        }
        Gw::start_config(dir, home, &cfg, capabilities)
    }

    /// A gateway with configuration `cfg` (in `dir`) and HOME `home`.
    pub(crate) fn start_config(dir: &Path, home: &Path, cfg: &str, capabilities: Value) -> Gw {
        let path = dir.join("skarn.toml");
        std::fs::write(&path, cfg).unwrap();
        std::fs::create_dir_all(home).unwrap();
        let mut child = Command::new(SKARN)
            .args(["serve", "--config"])
            .arg(&path)
            .env("HOME", home)
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
            stdin: Some(stdin),
            lines: rx,
            next_id: 1,
            seen: Vec::new(),
        };
        gw.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gw
    }

    pub(crate) fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// End the session the way a client does (close stdin) and wait for
    /// the gateway to exit.
    pub(crate) fn finish(mut self) {
        self.stdin = None;
        for _ in 0..600 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("skarn serve did not exit after its stdin closed");
    }

    /// Send SIGTERM and wait for the gateway to exit (a gateway that
    /// ignores it fails the test after a minute).
    pub(crate) fn terminate(mut self) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(ok.success());
        for _ in 0..600 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("skarn serve did not exit on SIGTERM");
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
            // The gateway's requests: answered as a client that declines
            // elicitations and samples "ok".
            if let (Some(method), Some(rid)) =
                (m.get("method").and_then(Value::as_str), m.get("id"))
            {
                let result = match method {
                    "elicitation/create" => json!({"action": "decline"}),
                    "sampling/createMessage" => json!({"role": "assistant", "model": "m",
                        "content": {"type": "text", "text": "ok"}}),
                    "roots/list" => json!({"roots": []}),
                    _ => json!({}),
                };
                let reply = json!({"jsonrpc": "2.0", "id": rid, "result": result});
                self.send(reply);
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

/// A `[servers.<alias>]` table running the hostile server with `args`.
pub(crate) fn hostile_server(alias: &str, args: &[&str]) -> String {
    format!(
        "\n[servers.{alias}]\ncommand = {:?}\nargs = {:?}\n",
        sibling("skarn-hostile-server").display().to_string(),
        args
    )
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

/// attack F1: a tool whose schemas and description are megabytes of junk
/// (within the 16 MiB listing cap) made `read_tool_docs` echo them in
/// full, twice (text and structuredContent): a 28 MB answer and 175 MiB
/// of gateway RSS. What is echoed is budgeted.
#[test]
fn read_tool_docs_echoes_downstream_text_within_a_budget() {
    let dir = TempDir::new("serve_hostile_down");
    let mut gw = Gw::start(dir.path(), "", &[("evil", &["--fat-schema", "4000000"])]);
    let r = gw.call("read_tool_docs", json!({"name": "evil__fat"}));
    let size = r.to_string().len();
    assert!(size < 256 << 10, "read_tool_docs answered {size} bytes");
    assert!(text(&r).contains("x?: string"), "{}", &text(&r)[..200]);
    assert!(
        text(&r).contains("(not shown: the input schema is"),
        "{}",
        &text(&r)[..200]
    );
    let peak = gw.peak_rss_kib();
    eprintln!("gateway peak RSS after a 12 MB listing: {peak} KiB");
    assert!(peak < 200 * 1024, "gateway peak RSS {peak} KiB");
}

/// Leftovers of runs in `dir`: placeholders (mode-000 sockets) and stages.
fn leftovers(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if (md.file_type().is_socket() && md.permissions().mode() & 0o7777 == 0)
                || name.starts_with(".skarn-stage-")
            {
                out.push(e.path().display().to_string());
            } else if md.is_dir() {
                todo.push(e.path());
            }
        }
    }
    out
}

/// Two projects declaring the same `[servers.notes]`: each server gets a
/// state directory of its own (project B's server cannot read what project
/// A's stored), and a gateway leaves no placeholders or stages behind.
#[test]
fn servers_of_different_projects_do_not_share_state() {
    let dir = TempDir::new("serve_hostile_down");
    let home = dir.path().join("home");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();

    let mut gw = Gw::start_with_home(
        &a,
        &home,
        "passthrough = true",
        &[("notes", &[])],
        json!({}),
    );
    // Its working directory is its state directory.
    let r = gw.call("notes__attack", json!({"write": "token"}));
    assert!(text(&r).contains("write token: OK"), "{r}");
    gw.finish();

    let mut gw = Gw::start_with_home(
        &b,
        &home,
        "passthrough = true",
        &[("notes", &[])],
        json!({}),
    );
    let r = gw.call("notes__attack", json!({"read": "token"}));
    assert!(
        text(&r).contains("read token: failed"),
        "project B's server read project A's state: {r}"
    );
    gw.finish();

    let states = home.join(".local/state/skarn-servers");
    let dirs: Vec<_> = std::fs::read_dir(&states)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    for d in &dirs {
        let left = leftovers(d);
        assert!(
            left.is_empty(),
            "left behind after the gateway exited: {left:?}"
        );
    }
}

fn saw<'a>(gw: &'a Gw, method: &str) -> Vec<&'a Value> {
    gw.seen.iter().filter(|m| m["method"] == method).collect()
}

/// What a downstream server asks of the client and the user is attributed
/// and bounded: an idle server (no call in flight) cannot ask at all, a
/// URL-mode elicitation is refused to a client that declared form mode
/// only, every request that passes names its server, and sampling never
/// asks for other servers' context.
#[test]
fn requests_of_servers_to_the_user_are_attributed_and_bounded() {
    let dir = TempDir::new("serve_hostile_down");
    let mut gw = Gw::start_with_home(
        dir.path(),
        &dir.path().join("home"),
        "passthrough = true",
        &[("h", &["--idle-ask"])],
        json!({"elicitation": {}, "sampling": {}}),
    );
    // The idle server's elicitation ("paste your token") was refused; the
    // server got the error, the client never saw the request.
    let r = gw.call("h__sample", json!({"count": 0, "wait_errors": 1}));
    assert!(text(&r).contains("no call to it is in flight"), "{r}");
    assert!(saw(&gw, "elicitation/create").is_empty(), "{:?}", gw.seen);

    // URL mode to a client that declared form mode only.
    let r = gw.call(
        "h__sample",
        json!({"count": 1, "kind": "url", "wait_errors": 1}),
    );
    assert!(
        text(&r).contains("URL-mode elicitation") && text(&r).contains("did not declare"),
        "{r}"
    );
    assert!(saw(&gw, "elicitation/create").is_empty(), "{:?}", gw.seen);

    // During a call: forwarded, naming the server.
    gw.call(
        "h__sample",
        json!({"count": 1, "kind": "elicitation", "wait_results": 1}),
    );
    let e = saw(&gw, "elicitation/create");
    assert_eq!(e.len(), 1, "{:?}", gw.seen);
    let message = e[0]["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("[MCP server \"h\" asks"), "{message}");
    assert_eq!(e[0]["params"]["_meta"]["io.skarn/server"], json!("h"));

    gw.call(
        "h__sample",
        json!({"count": 1, "kind": "context", "wait_results": 1}),
    );
    let s = saw(&gw, "sampling/createMessage");
    assert_eq!(s.len(), 1, "{:?}", gw.seen);
    let p = &s[0]["params"];
    assert_eq!(p["includeContext"], json!("none"), "{p}");
    assert!(p["systemPrompt"].as_str().unwrap().contains("\"h\""), "{p}");
    assert_eq!(p["_meta"]["io.skarn/server"], json!("h"));
}

/// One server cannot speak for another: an update of a resource another
/// server owns never reaches the subscribed client, and no downstream tool
/// is offered under a name the gateway offers itself (`run` with the shell
/// tool on, a server with `prefix = false`).
#[test]
fn servers_cannot_spoof_each_other_or_the_gateway() {
    let dir = TempDir::new("serve_hostile_down");
    let cfg = format!(
        "[gateway]\npassthrough = true\nshell = true\n{}{}prefix = false\n",
        hostile_server("a", &["--name", "a", "--resource", "notes://a/secret"]),
        hostile_server("b", &["--name", "b", "--tool-name", "run"]),
    );
    let mut gw = Gw::start_config(dir.path(), &dir.path().join("home"), &cfg, json!({}));
    let r = gw.request("resources/subscribe", json!({"uri": "notes://a/secret"}));
    assert!(r.get("result").is_some(), "{r}");
    // b announces a's resource: dropped. a announces it: delivered.
    gw.call("b__updated", json!({"uri": "notes://a/secret"}));
    gw.call("a__updated", json!({"uri": "notes://a/secret"}));
    // Until a's update (sent after b's) has come through.
    for _ in 0..100 {
        if !saw(&gw, "notifications/resources/updated").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        gw.request("ping", json!({}));
    }
    gw.request("ping", json!({}));
    let updates = saw(&gw, "notifications/resources/updated");
    assert_eq!(updates.len(), 1, "{:?}", gw.seen);

    let r = gw.request("tools/list", json!({}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "run").count(),
        1,
        "{names:?}"
    );
    assert!(names.contains(&"b__run"), "{names:?}");
}

/// attack F13: a result of 600 000 empty text blocks (16 MiB of JSON, just
/// under the line cap) took the gateway to 418-746 MiB while rmcp decoded
/// it. Blocks are counted as the answer streams in: the caller gets a
/// clear error, the gateway stays small and keeps working. Default
/// settings (the call goes through `execute`).
#[test]
fn a_result_with_very_many_blocks_fails_clearly_and_the_gateway_stays_small() {
    let dir = TempDir::new("serve_hostile_down");
    let mut gw = Gw::start(dir.path(), "", &[("h", &["--tool-name", "blocks"])]);
    let r = gw.call(
        "execute",
        json!({"code": "return await skarn.callTool('h', 'blocks', {count: 600000})"}),
    );
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    assert!(
        text(&r).contains("more than 4096 content blocks"),
        "{}",
        text(&r)
    );
    let r = gw.call(
        "execute",
        json!({"code": "const r = await skarn.callTool('h', 'blocks', {count: 3}); return 'ok'"}),
    );
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    assert!(text(&r).contains("ok"), "{r}");
    let peak = gw.peak_rss_kib();
    eprintln!("gateway peak RSS after 600 000 blocks: {peak} KiB");
    assert!(peak < 200 * 1024, "gateway peak RSS {peak} KiB");
}
