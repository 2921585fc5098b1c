//! fy27b (attack report atk27r): the probe lock-out (ADR 0314) searched
//! less than the echo scrubber finds, so a reflecting host answered
//! guesses again: a piece written in 20-byte braced escapes and split
//! across two writes went past the search's 256-byte carry (F1), and a
//! WebSocket ping between two fragments split the search but not the
//! scrub (F2). A secret bound to POST went up with `?.method=DELETE`,
//! which PHP frameworks read as `_method` (F10). A WebSocket handshake
//! in absolute form lost its `Connection: upgrade`, so a compliant server
//! refused it (F8). Checked from outside: what the host received, whether
//! the secret was recorded as exposed, what the client was told; as root
//! and as uid 65534 where the attack differs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::support_secret_server::{self as server, Setup};
use crate::support_secret_sources::{exposed, find, is_root};
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// The secret's value: random-looking throughout.
const VALUE: &str = "Qx7Lm2Zp9Tv4Wn8Rc3Yb6Hs1Kd5Jf0Ga";
/// A 12-byte piece of it: what an oracle sends.
const PIECE: &str = "Lm2Zp9Tv4Wn8";
/// Sent after the guess in its last write: whether the host got it.
const END: &str = "END-OF-FY27B-PROBE";

/// A plain-HTTP host on loopback that keeps every byte it receives and
/// answers a counted body with its echo, an upgrade with `101`.
struct Host {
    port: u16,
    seen: Arc<Mutex<Vec<u8>>>,
}

fn serve(mut c: TcpStream, seen: Arc<Mutex<Vec<u8>>>) {
    let _ = c.set_read_timeout(Some(Duration::from_secs(20)));
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let mut upgraded = false;
    loop {
        let n = match c.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&tmp[..n]);
        seen.lock().unwrap().extend_from_slice(&tmp[..n]);
        let Some(at) = find(&buf, b"\r\n\r\n").map(|i| i + 4) else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
        if head.contains("upgrade: websocket") && !upgraded {
            upgraded = true;
            let _ = c.write_all(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                  Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            );
            continue;
        }
        let len = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if !upgraded && buf.len() - at >= len {
            let b = buf[at..at + len].to_vec();
            let _ = c.write_all(
                format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
            let _ = c.write_all(&b);
            return;
        }
    }
}

impl Host {
    fn start() -> Host {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = seen.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let k = keep.clone();
                std::thread::spawn(move || serve(c, k));
            }
        });
        Host { port, seen }
    }

    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

/// The sandboxed client, in absolute form to the run's proxy. `esc`: a
/// body in three writes, the guess's hex digits as 20-byte braced
/// escapes; `ping`: a WebSocket text message in two fragments with a
/// ping between them (mask 0, so the host's bytes show the payload);
/// `plain`: an ordinary body in two writes; `hs`: a WebSocket handshake,
/// then one message, its echo printed.
const CLIENT: &str = r#"
import os, socket, sys, time, urllib.parse
p = urllib.parse.urlparse(os.environ.get('http_proxy') or os.environ['HTTP_PROXY'])
port, mode, g, end = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].encode()
s = socket.create_connection((p.hostname, p.port))
s.settimeout(20)
def frame(fin, op, pl):
    return bytes([(0x80 if fin else 0) | op, 0x80 | len(pl)]) + b'\0\0\0\0' + pl
def head(m):
    return f'{m} http://127.0.0.1:{port}/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n'
def answer():
    r = b''
    try:
        while (d := s.recv(65536)):
            r += d
    except OSError:
        pass
    return r
if mode in ('esc', 'plain'):
    if mode == 'esc':
        e = ''.join('\\u{%016x}' % ord(c) for c in g.encode().hex()).encode()
        parts = [b'x ' + e[:20], e[20:-20], e[-20:] + b' ' + end]
    else:
        parts = [b'hello ', b'plain world ' + end]
    body = b''.join(parts)
    s.sendall((head('POST') + f'Content-Length: {len(body)}\r\n\r\n').encode() + parts[0])
    for x in parts[1:]:
        time.sleep(2.0)
        s.sendall(x)
    r = answer()
    print('status:', r.split(b'\r\n')[0].decode(errors='replace'))
    print('answer:', r.split(b'\r\n\r\n', 1)[-1].decode(errors='replace'))
    sys.exit(0)
s.sendall((head('GET') + 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n').encode())
r = b''
while b'\r\n\r\n' not in r and (d := s.recv(1)):
    r += d
print('status:', r.split(b'\r\n')[0].decode(errors='replace'))
if mode == 'ping':
    for f in [frame(False, 1, b'x ' + g[:6].encode()), frame(True, 9, b'p' * 100), frame(True, 0, g[6:].encode() + b' ' + end)]:
        s.sendall(f)
        time.sleep(1.0)
else:
    s.sendall(frame(True, 1, b'hello over ' + end))
r = answer()
text = b''
while len(r) >= 2:
    n = r[1] & 0x7f
    text += r[2:2 + n]
    r = r[2 + n:]
print('frames:', text.decode(errors='replace'))
"#;

/// A home whose secret `s` is bound to `host` (with `extra` lines).
fn setup(name: &str, host: &str, extra: &str) -> Setup {
    let s = server::setup(name, "s", VALUE, host, "TOK", extra);
    std::fs::write(s.ws.join("client.py"), CLIENT).unwrap();
    s
}

fn run(s: &Setup, user: bool, port: u16, secret: bool, cmd: &[&str]) -> Output {
    server::run(s, user, port, secret, cmd)
}

fn client(s: &Setup, user: bool, port: u16, mode: &str, guess: &str) -> String {
    let p = port.to_string();
    let o = run(
        s,
        user,
        port,
        true,
        &["python3", "client.py", &p, mode, guess, END],
    );
    format!("{}{}", out(&o), err(&o))
}

/// F1 (`esc`) and F2 (`ping`): the guess split so the old search missed
/// it never reaches the host whole; the secret is recorded as exposed.
/// Usability first: an ordinary split body still goes up and comes back.
fn split_guess(user: bool, mode: &str) {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let host = Host::start();
    let s = setup(
        &format!("fy27b-{mode}-{}", u8::from(user)),
        "example.test",
        "",
    );
    let o = client(&s, user, host.port, "plain", "-");
    assert!(
        o.contains(&format!("answer: hello plain world {END}")),
        "{o}"
    );
    // The escaped guess is ten bytes: its middle write alone holds no
    // whole window, only the three writes together do.
    let guess = if mode == "esc" { &PIECE[..10] } else { PIECE };
    let o = client(&s, user, host.port, mode, guess);
    let seen = host.seen();
    assert!(
        seen.matches(END).count() == 1,
        "the split guess reached the host whole: {seen}\n{o}"
    );
    assert_eq!(exposed(&s.home, "s"), 1, "the guess was not recorded: {o}");
}

#[test]
fn f1_a_long_escaped_guess_split_across_writes_is_refused() {
    split_guess(false, "esc");
}

#[test]
fn f1_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    split_guess(true, "esc");
}

#[test]
fn f2_a_ping_between_websocket_fragments_does_not_split_the_search() {
    split_guess(false, "ping");
}

#[test]
fn f2_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    split_guess(true, "ping");
}

/// F10: a secret bound to POST is not sent with a query parameter PHP
/// frameworks read as `_method`; the plain POST still goes.
fn method_spellings(user: bool) {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |r: &Request| {
        Response::ok(r.body.clone())
    });
    let s = setup(
        &format!("fy27b-method-{}", u8::from(user)),
        &format!("localhost:{}", srv.port),
        "methods = [\"POST\"]\n",
    );
    s.trust(&ca);
    let mut script = String::from("export NO_PROXY= no_proxy=; ");
    for q in [
        "",
        "?.method=DELETE",
        "?%2Emethod=DELETE",
        "?[method=DELETE",
        "?_method[]=DELETE",
        "?+.method=DELETE",
    ] {
        script.push_str(&format!(
            "printf '%s ' '{q}'; curl -gsS -o /dev/null -w '%{{http_code}}\\n' -d '' \
             -H \"Authorization: Bearer $TOK\" 'https://localhost:{}/api/x{q}'; ",
            srv.port
        ));
    }
    let o = run(&s, user, srv.port, true, &["sh", "-c", &script]);
    let text = format!("{}{}", out(&o), err(&o));
    let seen = srv.seen();
    assert!(
        seen.iter().all(|r| !r.path.contains('?')),
        "a method override went up with the credential: {:?}\n{text}",
        seen.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert_eq!(seen.len(), 1, "{text}");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {VALUE}"))
    );
    assert_eq!(out(&o).matches(" 403").count(), 5, "{text}");
}

#[test]
fn f10_method_overrides_in_php_spellings_are_refused() {
    method_spellings(false);
}

#[test]
fn f10_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    method_spellings(true);
}

/// F8 (usability): an absolute-form WebSocket handshake reaches a
/// compliant server (node's HTTP parser upgrades only with
/// `Connection: upgrade`) and a message goes both ways, with a secret
/// bound (frames searched and scrubbed) and without.
const NODE_WS: &str = r#"
const http = require('http');
const s = http.createServer((q, r) => { r.writeHead(426); r.end('upgrade required\n'); });
s.on('upgrade', (q, sock) => {
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n');
  let d = Buffer.alloc(0);
  sock.on('data', (x) => {
    d = Buffer.concat([d, x]);
    const n = d[1] & 0x7f;
    if (d.length < 6 + n) return;
    const m = d.subarray(2, 6), p = Buffer.from(d.subarray(6, 6 + n));
    for (let i = 0; i < n; i++) p[i] ^= m[i % 4];
    sock.end(Buffer.concat([Buffer.from([0x81, n]), p]));
  });
});
s.listen(0, '127.0.0.1', () => console.log(s.address().port));
"#;

#[test]
fn f8_an_absolute_form_websocket_handshake_reaches_a_compliant_server() {
    if !host_has("python3", "--version") || !host_has("node", "--version") {
        skarn_test_support::skip!("python3 or node is not installed");
    }
    /// The server, ended however the test ends.
    struct Node(std::process::Child);
    impl Drop for Node {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut node = Node(
        Command::new("node")
            .args(["-e", NODE_WS])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(node.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let s = setup("fy27b-hs", "example.test", "");
    let p = port.to_string();
    for secret in [true, false] {
        let o = run(
            &s,
            false,
            port,
            secret,
            &["python3", "client.py", &p, "hs", "-", END],
        );
        let text = format!("{}{}", out(&o), err(&o));
        assert!(text.contains("status: HTTP/1.1 101"), "{secret}: {text}");
        assert!(
            text.contains(&format!("hello over {END}")),
            "{secret}: {text}"
        );
    }
    drop(node);
}
