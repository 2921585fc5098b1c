//! `skarn serve --http`: bearer token enforcement, and the gateway as a
//! Streamable HTTP *downstream* of another gateway (bearer token from the
//! environment variable the config names, extra headers).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

pub(crate) struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn example_bin() -> String {
    sibling("skarn-example-server").display().to_string()
}

/// Start an HTTP gateway over the example server; returns it and its URL.
pub(crate) fn http_gateway(dir: &Path, token: Option<&str>) -> (Proc, String, Option<String>) {
    let cfg = dir.join("inner.toml");
    std::fs::write(
        &cfg,
        format!("[servers.ex]\ncommand = {:?}\n", example_bin()),
    )
    .unwrap();
    let mut cmd = Command::new(SKARN);
    cmd.args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .env_remove("SKARN_HTTP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(t) = token {
        cmd.env("SKARN_HTTP_TOKEN", t);
    }
    let mut child = cmd.spawn().unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut url = None;
    let mut printed_token = None;
    while url.is_none() {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("no address printed");
        if let Some(i) = line.find("http://") {
            url = Some(line[i..].trim().to_owned());
        }
        if let Some(i) = line.find("): ")
            && line.contains("bearer token")
        {
            printed_token = Some(line[i + 3..].trim().to_owned());
        }
    }
    (Proc(child), url.unwrap(), printed_token)
}

pub(crate) fn post(url: &str, token: Option<&str>) -> u16 {
    // Minimal HTTP/1.1 client on loopback (no extra dependency).
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn http_requires_the_token_and_generates_one_when_unset() {
    let dir = TempDir::new("serve_http");
    let (_p, url, printed) = http_gateway(dir.path(), None);
    let token = printed.expect("a generated token is printed once on stderr");
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(post(&url, None), 401);
    assert_eq!(post(&url, Some("wrong")), 401);
    assert_eq!(post(&url, Some(&token)), 200);

    let (_p2, url2, printed2) = http_gateway(dir.path(), Some("chosen-token"));
    assert!(
        printed2.is_none(),
        "a token from the environment must not be printed"
    );
    assert_eq!(post(&url2, Some("chosen-token")), 200);
    assert_eq!(post(&url2, Some(&token)), 401);
}

fn stdio_gateway(
    cfg: &Path,
    envs: &[(&str, &str)],
) -> (Proc, std::process::ChildStdin, mpsc::Receiver<Value>) {
    let mut cmd = Command::new(SKARN);
    cmd.args(["serve", "--config"])
        .arg(cfg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    (Proc(child), stdin, rx)
}

fn rpc(
    stdin: &mut std::process::ChildStdin,
    rx: &mpsc::Receiver<Value>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
    )
    .unwrap();
    loop {
        let m = rx.recv_timeout(Duration::from_secs(60)).expect("no answer");
        if m["id"] == id {
            return m;
        }
    }
}

#[test]
fn a_gateway_reaches_an_http_downstream_with_a_bearer_token_from_the_environment() {
    let dir = TempDir::new("serve_http");
    let (_inner, url, _) = http_gateway(dir.path(), Some("inner-secret"));
    let outer = dir.path().join("outer.toml");
    std::fs::write(
        &outer,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.inner]\nurl = {url:?}\nauth = {{ bearer_env = \"INNER_TOKEN\" }}\nheaders = {{ \"X-Test\" = \"1\" }}\nallow_private = true\n\n[servers.locked]\nurl = {url:?}\nauth = {{ bearer_env = \"WRONG_TOKEN\" }}\nstart_timeout = 20\nallow_private = true\n\n[servers.unlisted]\nurl = {url:?}\n"
        ),
    )
    .unwrap();
    // The test wrote the file (with allow_private): its user trusts it.
    let home = outer.with_file_name("trusting-home");
    std::fs::create_dir_all(&home).unwrap();
    crate::common::trust(&outer, &home);
    let home = home.display().to_string();
    let (_p, mut stdin, rx) = stdio_gateway(
        &outer,
        &[
            ("INNER_TOKEN", "inner-secret"),
            ("WRONG_TOKEN", "nope"),
            ("HOME", &home),
        ],
    );
    let init = rpc(
        &mut stdin,
        &rx,
        1,
        "initialize",
        json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "skarn");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Wait until both downstreams have settled.
    let mut id = 10;
    let sc = loop {
        id += 1;
        let m = rpc(
            &mut stdin,
            &rx,
            id,
            "tools/call",
            json!({"name":"search","arguments":{"query":"search tools","limit":20}}),
        );
        let sc = m["result"]["structuredContent"].clone();
        if sc["servers_starting"].as_array().unwrap().is_empty() {
            break sc;
        }
        assert!(id < 3000, "{m}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let names: Vec<&str> = sc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"inner__search"), "{sc}");
    // The server with the wrong token is reported by name with its cause.
    let bad = &sc["servers_unavailable"][0];
    assert_eq!(bad["server"], "locked", "{sc}");
    assert_eq!(bad["status"], "failed", "{sc}");
    assert!(!bad["cause"].as_str().unwrap().is_empty(), "{sc}");
    // A loopback URL without `allow_private = true` is refused (issue 12);
    // the model reads the fact, not the switch (attack atk24i F8).
    let private = &sc["servers_unavailable"][1];
    assert_eq!(private["server"], "unlisted", "{sc}");
    let cause = private["cause"].as_str().unwrap();
    assert!(
        cause.contains("loopback") && !cause.contains("allow_private"),
        "{sc}"
    );
    // A call through the HTTP downstream works end to end (once the inner
    // gateway's own server, started in its sandbox, is ready).
    for id in 9000.. {
        let m = rpc(
            &mut stdin,
            &rx,
            id,
            "tools/call",
            json!({"name":"inner__search","arguments":{"query":"add two numbers"}}),
        );
        let text = m["result"]["content"][0]["text"].as_str().unwrap_or("");
        if text.contains("still starting") && id < 12000 {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        assert!(text.contains("ex__add"), "{m}");
        break;
    }
}

#[test]
fn half_requests_without_a_token_cannot_starve_an_authorized_client() {
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("serve_http");
    let cfg = dir.path().join("empty.toml");
    std::fs::write(&cfg, "").unwrap();
    let mut cmd = Command::new(SKARN);
    cmd.args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--header-timeout",
        "1s",
        "--idle-timeout",
        "2s",
        "--config",
    ])
    .arg(&cfg)
    .env("SKARN_HTTP_TOKEN", "tok")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    // A small descriptor limit, so that holding descriptors is enough to
    // starve the server.
    // SAFETY: setrlimit is async-signal-safe; it only lowers our child's limit.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 128,
                rlim_max: 128,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    let p = Proc(child);
    let mut url = None;
    for line in err.lines().map_while(Result::ok) {
        if let Some(i) = line.find("http://") {
            url = Some(line[i..].trim().to_owned());
            break;
        }
    }
    let url = url.expect("no address printed");
    let host = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap()
        .0
        .to_owned();
    // 200 clients without a token send half a request and wait.
    let mut held = Vec::new();
    for _ in 0..200 {
        let mut s = std::net::TcpStream::connect(&host).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {host}\r\n").unwrap();
        held.push(s);
    }
    // An authorized client is still served (post() gives up after 30 s).
    assert_eq!(post(&url, Some("tok")), 200);
    drop(held);
    drop(p);
}

/// One request on loopback: the status and the raw response head.
fn raw(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    write!(
        s,
        "{method} /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

#[test]
fn http_checks_origins_takes_any_bearer_case_and_ends_sessions_with_200() {
    let dir = TempDir::new("serve_http");
    let (_p, url, _) = http_gateway(dir.path(), Some("tok-123"));
    // The scheme name is case-insensitive.
    let (status, head) = raw(&url, "POST", &[("Authorization", "bearer tok-123")], INIT);
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .expect("a session id");
    // A page from elsewhere is refused; a loopback page is served.
    let auth = ("Authorization", "Bearer tok-123");
    let (status, _) = raw(
        &url,
        "POST",
        &[auth, ("Origin", "http://evil.example")],
        INIT,
    );
    assert_eq!(status, 403);
    let (status, _) = raw(
        &url,
        "POST",
        &[auth, ("Origin", "http://localhost:3000")],
        INIT,
    );
    assert_eq!(status, 200);
    // DELETE ends the session with 200 (clients treat 202 as a failure).
    let (status, head) = raw(
        &url,
        "DELETE",
        &[
            auth,
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        "",
    );
    assert_eq!(status, 200, "{head}");
}

#[test]
fn http_accepts_localhost_as_the_host() {
    let dir = TempDir::new("serve_http");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(&cfg, "").unwrap();
    let mut child = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["serve", "--http", "localhost:0", "--config"])
        .arg(&cfg)
        .env("SKARN_HTTP_TOKEN", "t")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    let _p = Proc(child);
    let line = err
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("http://") || l.contains("error"))
        .expect("skarn serve printed nothing");
    assert!(
        line.contains("serving MCP (Streamable HTTP) at http://127.0.0.1:"),
        "{line}"
    );
}
