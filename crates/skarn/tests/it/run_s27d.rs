//! Issue 27 (s27d): a response through the TLS-terminating path reaches
//! a client that reads slowly and waits for the body's end without
//! closing (keep-alive). The proxy's TLS stream holds what the socket did
//! not take until its next write or a flush; without the flush at the
//! body's end (`intercept/body.rs`) the tail stayed in the proxy and the
//! client waited until its own time limit (found by the issue-27 bench;
//! s27a's fix had no test). Checked from outside: how much of the
//! body the client got before its own time limit (all of it).

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

const REAL: &str = "flush-REAL-value-4Vq8Nz2Lm7Xw";
/// Larger than loopback's socket buffers on both sides, so the proxy's
/// last writes find the socket full while the client reads slowly.
const SIZE: usize = 8 << 20;

/// A keep-alive client through the proxy (CONNECT, then TLS) with a
/// small receive buffer that reads slowly, so the proxy's socket is full
/// when it writes the body's last bytes; it waits (20 s at most) for the
/// whole `Content-Length` and prints how much it got.
const CLIENT: &str = r#"
import os, re, socket, ssl, time
from urllib.parse import urlsplit
u = urlsplit(os.environ.get("HTTPS_PROXY") or os.environ["https_proxy"])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
s.connect((u.hostname, u.port))
s.sendall(b"CONNECT localhost:PORT HTTP/1.1\r\nHost: localhost:PORT\r\n\r\n")
r = b""
while b"\r\n\r\n" not in r:
    r += s.recv(1)
t = ssl.create_default_context().wrap_socket(s, server_hostname="localhost")
t.sendall(("GET /big HTTP/1.1\r\nHost: localhost:PORT\r\nAuthorization: Bearer "
           + os.environ["FL"] + "\r\n\r\n").encode())
t.settimeout(20)
b = b""
while b"\r\n\r\n" not in b:
    b += t.recv(65536)
head, body = b.split(b"\r\n\r\n", 1)
n = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
got = len(body)
try:
    while got < n:
        d = t.recv(16384)
        if not d:
            break
        got += len(d)
        time.sleep(0.004)
except socket.timeout:
    pass
print("got=%d of=%d" % (got, n), flush=True)
"#;

#[test]
fn a_slow_clients_response_tail_arrives_without_another_request() {
    if !std::path::Path::new("/usr/bin/python3").exists() {
        skarn_test_support::skip!("no /usr/bin/python3");
    }
    let t = TempDir::new("s27d-flush");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let body: Vec<u8> = b"0123456789 abcdef ghij\n"
        .iter()
        .cycle()
        .take(SIZE)
        .copied()
        .collect();
    let srv = TlsServer::start(&ca, &["localhost"], move |_| Response::ok(body.clone()));
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("fl"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.fl]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nenv = \"FL\"\n",
            vals.join("fl").display(),
            srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let script = CLIENT.replace("PORT", &srv.port.to_string());
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let o = run_command(
        &ws,
        &home,
        &["--secret", "fl", "--net", &net],
        &["/usr/bin/python3", "-c", &script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .output()
    .unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    assert_eq!(code(&o), 0, "{stdout}{stderr}");
    // The TLS-terminating path was taken: the host got the value.
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{stdout}{stderr}");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    let want = format!("got={SIZE} of={SIZE}");
    assert!(stdout.contains(&want), "{stdout}{stderr}");
}
