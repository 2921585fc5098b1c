//! `skarn serve` over stdio, driven with raw JSON-RPC lines: malformed
//! input, start-up with a hung downstream, child clean-up on every way the
//! gateway can end, `skarn init`, and configuration errors.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

fn example_bin() -> PathBuf {
    sibling("skarn-example-server")
}

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Session {
    fn start(config: &Path) -> Session {
        Session::start_in(config, &config.with_file_name("trusting-home"))
    }

    /// With `HOME=home`, where the test's user trusts `config` (the test
    /// wrote it).
    fn start_in(config: &Path, home: &Path) -> Session {
        std::fs::create_dir_all(home).unwrap();
        crate::common::trust(config, home);
        let mut child = Command::new(SKARN)
            .args(["serve", "--config"])
            .arg(config)
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines: rx,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Next message (generous bound: only a hang would hit it).
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no answer from skarn serve");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The response with this id (skipping notifications).
    fn response(&self, id: Value) -> Value {
        loop {
            let m = self.recv();
            if m.get("id") == Some(&id) {
                return m;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.send(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        let r = self.response(json!(1));
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        r
    }

    fn call(&mut self, id: u64, name: &str, args: Value) -> Value {
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
        self.send(&req.to_string());
        self.response(json!(id))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("skarn.toml");
    std::fs::write(&p, body).unwrap();
    p
}

fn example_server(alias: &str, extra: &str) -> String {
    format!(
        "[servers.{alias}]\ncommand = {:?}\n{extra}\n",
        example_bin().display().to_string()
    )
}

#[test]
fn malformed_json_rpc_gets_errors_and_serving_goes_on() {
    let dir = TempDir::new("serve_stdio");
    let cfg = write_config(dir.path(), &example_server("ex", ""));
    let mut s = Session::start(&cfg);
    let init = s.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "skarn");

    s.send("{this is not json");
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert_eq!(m["id"], Value::Null);

    s.send(r#"{"jsonrpc":"2.0","id":3}"#);
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32600, "{m}");

    s.send(r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#);
    let m = s.response(json!(4));
    assert_eq!(m["error"]["code"], -32601, "{m}");

    s.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#);
    let m = s.response(json!(5));
    assert!(m.get("error").is_some(), "{m}");

    let m = s.call(6, "no_such_tool", json!({}));
    assert!(m.get("error").is_some(), "{m}");

    let m = s.call(7, "search", json!({"limit": 3}));
    assert_eq!(m["result"]["isError"], true, "{m}");

    s.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#);
    let m = s.response(json!(8));
    let names: Vec<&str> = m["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search", "read_tool_docs", "execute"]);
}

#[test]
fn initialize_is_answered_while_a_server_hangs_and_the_first_search_waits_for_starts() {
    let dir = TempDir::new("serve_stdio");
    let body = format!(
        "{}{}",
        example_server("ex", ""),
        example_server("slow", "args = [\"--hang-on-start\"]\nstart_timeout = 3")
    );
    let cfg = write_config(dir.path(), &body);
    let mut s = Session::start(&cfg);
    // Initialize does not wait for downstream servers.
    let init = s.initialize();
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("search")
    );
    // The very first search waits for the starts (bounded by each start
    // timeout): it sees the example server's tools and names the hung
    // server with its cause.
    let m = s.call(11, "search", json!({"query": "echo text"}));
    let sc = &m["result"]["structuredContent"];
    assert_eq!(sc["results"][0]["name"], "ex__echo", "{m}");
    assert_eq!(sc["servers_starting"], json!([]), "{m}");
    let down = &sc["servers_unavailable"][0];
    assert_eq!(down["server"], "slow", "{m}");
    assert!(
        down["cause"].as_str().unwrap().contains("start timeout"),
        "{m}"
    );
    let text = m["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("server slow failed to start"), "{text}");
    // Passthrough is off: the downstream tool is not callable directly.
    let m = s.call(9999, "ex__echo", json!({"text": "x"}));
    assert!(m.get("error").is_some(), "{m}");
}

#[test]
fn passthrough_forwards_calls_and_announces_list_changes() {
    let dir = TempDir::new("serve_stdio");
    let body = format!(
        "[gateway]\npassthrough = true\n{}",
        example_server("ex", "")
    );
    let cfg = write_config(dir.path(), &body);
    let mut s = Session::start(&cfg);
    s.initialize();
    // Wait until ex's tools are listed.
    let mut id = 10;
    loop {
        id += 1;
        s.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}).to_string());
        let m = s.response(json!(id));
        let n = m["result"]["tools"].as_array().unwrap().len();
        if n > 3 {
            break;
        }
        assert!(id < 3000, "ex never listed: {m}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let m = s.call(5000, "ex__add", json!({"a": 2, "b": 40}));
    assert_eq!(m["result"]["structuredContent"]["sum"], 42.0, "{m}");
    let m = s.call(5001, "ex__fail", json!({"message": "boom"}));
    assert_eq!(m["result"]["isError"], true, "{m}");
    // A downstream list change is announced upstream...
    s.send(&json!({"jsonrpc":"2.0","id":5002,"method":"tools/call","params":{"name":"ex__add_tool","arguments":{"name":"fresh"}}}).to_string());
    let mut announced = false;
    let mut answered = false;
    while !(announced && answered) {
        let m = s.recv();
        if m["method"] == "notifications/tools/list_changed" {
            announced = true;
        }
        if m["id"] == 5002 {
            answered = true;
        }
    }
    // ...and the new tool is listed and callable.
    s.send(r#"{"jsonrpc":"2.0","id":5003,"method":"tools/list"}"#);
    let m = s.response(json!(5003));
    let names: Vec<&str> = m["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ex__fresh"), "{names:?}");
    let m = s.call(5004, "ex__fresh", json!({"k": 1}));
    assert_eq!(m["result"]["structuredContent"]["args"]["k"], 1, "{m}");
}

/// Every descendant of `pid` (children, grandchildren...).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let after = stat.rsplit(')').next().unwrap_or("");
            let ppid = after
                .split_whitespace()
                .nth(1)
                .and_then(|x| x.parse::<u32>().ok());
            if let Some(pp) = ppid {
                parent_of.push((p, pp));
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parent_of {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").trim().chars().next();
            state != Some('Z') && state != Some('X')
        }
        Err(_) => false,
    }
}

fn wait_gone(pids: &[u32]) -> Vec<u32> {
    for _ in 0..500 {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    pids.iter().copied().filter(|&p| alive(p)).collect()
}

/// Start a gateway with three downstreams (one wrapped in a shell so that
/// the server is a grandchild), wait until all are ready, and return the
/// session and every descendant process.
fn gateway_with_children(dir: &Path) -> (Session, Vec<u32>) {
    let ex = example_bin().display().to_string();
    // One server unconfined: the process-tree clean-up holds for both.
    // Installed where no sandbox may write, or it runs confined (ADR 0237).
    let b = crate::common::installed(&example_bin(), &dir.join("trusting-home"))
        .display()
        .to_string();
    let body = format!(
        "{}[servers.b]\ncommand = {b:?}\n[servers.b.sandbox]\nenabled = false\n\n\
         [servers.wrapped]\ncommand = \"sh\"\nargs = [\"-c\", {:?}]\n\
         [servers.wrapped.sandbox]\nexec = [{ex:?}]\n",
        example_server("a", ""),
        format!("{ex}; exit 0"),
    );
    let cfg = write_config(dir, &body);
    let mut s = Session::start(&cfg);
    s.initialize();
    let mut id = 100;
    loop {
        id += 1;
        let m = s.call(id, "search", json!({"query": "echo", "limit": 50}));
        let sc = &m["result"]["structuredContent"];
        let n = sc["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["name"].as_str().unwrap().ends_with("__echo"))
            .count();
        if n == 3 {
            break;
        }
        assert!(id < 3000, "servers never became ready: {m}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kids = descendants(s.child.id());
    assert!(
        kids.len() >= 4,
        "expected 3 servers + a shell, got {kids:?}"
    );
    (s, kids)
}

#[test]
fn no_orphans_when_the_client_disconnects() {
    let dir = TempDir::new("serve_stdio");
    let (mut s, kids) = gateway_with_children(dir.path());
    drop(s.stdin.take()); // the client goes away
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(wait_gone(&kids), Vec::<u32>::new(), "orphaned children");
}

#[test]
fn no_orphans_on_sigterm() {
    let dir = TempDir::new("serve_stdio");
    let (mut s, kids) = gateway_with_children(dir.path());
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc_kill(s.child.id() as i32, 15);
    }
    let _ = s.child.wait().unwrap();
    assert_eq!(wait_gone(&kids), Vec::<u32>::new(), "orphaned children");
}

#[test]
fn no_orphans_even_on_sigkill() {
    let dir = TempDir::new("serve_stdio");
    let (mut s, kids) = gateway_with_children(dir.path());
    s.child.kill().unwrap();
    let _ = s.child.wait().unwrap();
    assert_eq!(wait_gone(&kids), Vec::<u32>::new(), "orphaned children");
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn init_writes_a_starter_that_serve_accepts_and_prints_snippets() {
    let dir = TempDir::new("serve_stdio");
    let cfg = dir.path().join("skarn.toml");
    let out = Command::new(SKARN)
        .args(["init", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // stdout is one JSON document (redirectable); prose is on stderr.
    let snippet: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(snippet["mcpServers"]["skarn"]["args"][0], "serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--client"), "{stderr}");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("[gateway]") && text.contains("# "), "{text}");
    // Refuses to overwrite.
    let again = Command::new(SKARN)
        .args(["init", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    // The starter serves.
    let mut s = Session::start(&cfg);
    let init = s.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "skarn");
}

#[test]
fn config_errors_name_file_line_and_column() {
    let dir = TempDir::new("serve_stdio");
    let cfg = write_config(
        dir.path(),
        "[gateway]\npassthrough = false\n\n[servers.a]\ncommand = \"x\"\nbogus_key = 1\n",
    );
    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["serve", "--config"])
        .arg(&cfg)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("skarn: error: {}:6:1: ", cfg.display());
    assert!(err.starts_with(&want), "{err}");
    assert!(err.contains("bogus_key"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["serve", "--config"])
        .arg(dir.path().join("none.toml"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("skarn init"));
}

fn hostile_bin() -> PathBuf {
    sibling("skarn-hostile-server")
}

/// Peak resident memory of `pid` in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM")
}

#[test]
fn an_oversized_client_line_is_skipped_without_buffering_it() {
    let dir = TempDir::new("serve_stdio");
    let cfg = write_config(dir.path(), "");
    let mut s = Session::start(&cfg);
    s.initialize();
    let chunk = vec![b'x'; 1 << 20];
    {
        let stdin = s.stdin.as_mut().unwrap();
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"")
            .unwrap();
        for _ in 0..200 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}\n").unwrap();
        stdin.flush().unwrap();
    }
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert!(m.to_string().contains("too large"), "{m}");
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let m = s.response(json!(3));
    assert!(m["result"]["tools"].is_array(), "{m}");
    let peak = peak_rss_kib(s.child.id());
    eprintln!("gateway peak RSS after a 200 MiB line: {} MiB", peak / 1024);
    // The 16 MiB line limit is buffered once; the other 184 MiB must not be.
    assert!(peak < 120 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn a_setsid_grandchild_does_not_survive_the_gateway() {
    let dir = TempDir::new("serve_stdio");
    let pid_file = dir.path().join("sleeper.pid");
    let body = format!(
        // Unconfined (its pid file is outside any sandbox grant); the
        // sandboxed case is in serve_sandbox.rs.
        "[servers.h]\ncommand = {:?}\nargs = [\"--setsid-child\", {:?}]\n\
         [servers.h.sandbox]\nenabled = false\n",
        // Installed where no sandbox may write (ADR 0237).
        crate::common::installed(&hostile_bin(), &dir.path().join("trusting-home"))
            .display()
            .to_string(),
        pid_file.display().to_string()
    );
    let cfg = write_config(dir.path(), &body);
    let mut s = Session::start(&cfg);
    s.initialize();
    let mut pid = None;
    for _ in 0..1500 {
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            pid = Some(p);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = pid.expect("the downstream never started its sleeper");
    assert!(alive(pid));
    drop(s.stdin.take()); // the client goes away; the gateway exits
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let left = wait_gone(&[pid]);
    if !left.is_empty() {
        // Clean up before failing.
        // SAFETY: signalling the sleeper this test started.
        unsafe {
            libc_kill(pid as i32, 9);
        }
    }
    assert_eq!(left, Vec::<u32>::new(), "the setsid sleeper survived");
}

#[test]
fn the_shell_tool_runs_commands_confined_and_compressed() {
    let dir = TempDir::new("serve_stdio");
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // World-accessible, so the test also works as an unprivileged user.
    for d in [dir.path(), &ws, &outside] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    // The workspace is the configuration's directory.
    let cfg = write_config(&ws, "[gateway]\nshell = true\n");
    let mut s = Session::start_in(&cfg, &dir.path().join("home"));
    s.initialize();
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let tools = s.response(json!(2));
    assert!(tools.to_string().contains("\"name\":\"run\""), "{tools}");
    let escape = outside.join("escaped");
    let r = s.call(
        3,
        "run",
        json!({
            "command": format!("echo inside > made.txt; echo x > {}; cat made.txt", escape.display()),
            "cwd": ws.display().to_string(),
        }),
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.starts_with("exit "), "{r}");
    assert!(text.contains("inside"), "{text}");
    // What Claude Code shows the model of a successful call (atk24o F9).
    let shown = r["result"]["structuredContent"]["output"]
        .as_str()
        .unwrap_or("");
    assert!(shown.contains("inside"), "{r}");
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap(),
        "inside\n"
    );
    assert!(!escape.exists(), "the command wrote outside its workspace");
    // Issue 24 item 4: the caller cannot make another directory (say
    // ~/.config/systemd/user) the writable workspace, directly or through
    // a link inside the workspace.
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    for (id, cwd) in [(10, outside.clone()), (11, ws.join("link"))] {
        let r = s.call(
            id,
            "run",
            json!({"command": "echo planted > unit.service", "cwd": cwd.display().to_string()}),
        );
        assert_eq!(r["result"]["isError"], json!(true), "{r}");
        assert!(r.to_string().contains("outside the workspace"), "{r}");
        assert!(!outside.join("unit.service").exists(), "{r}");
    }
    // Bad arguments: one clear error, the gateway keeps serving.
    let r = s.call(4, "run", json!({"command": "true", "cwd": "relative"}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    let r = s.call(
        5,
        "run",
        json!({"command": "exit 3", "cwd": ws.display().to_string()}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["exit_code"],
        json!(3),
        "{r}"
    );
}
