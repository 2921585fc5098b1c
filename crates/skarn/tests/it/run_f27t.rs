//! f27t: request bodies in a content coding while secrets are bound. The
//! probe lock-out (ADR 0314) searched a `Content-Encoding: gzip` body as
//! sent, so a piece of a secret's real value compressed in it went up to
//! the bound host (or, on plain HTTP, to any allowed host) unseen, the
//! echo of a decompressing host answering the guess. Now the body is
//! decoded as it passes and the decoded stream searched; a bomb, a body
//! that does not decode, or a coding the proxy cannot undo is refused
//! with a message. Checked from outside: what the listener received,
//! whether the secret was recorded as exposed, what the client was told;
//! as root and as uid 65534. Usability: an ordinary gzip upload with the
//! placeholder in its header still reaches the host.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::support_secret_server::{self as server, Setup};
use crate::support_secret_sources::{exposed, is_root};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// The secret's value: random-looking throughout.
const VALUE: &str = "Qx7Lm2Zp9Tv4Wn8Rc3Yb6Hs1Kd5Jf0Ga";
/// A 12-byte piece of it: what an oracle sends.
const PIECE: &str = "Lm2Zp9Tv4Wn8";

/// A home whose secret `tok` is bound to `host`; the test CA's file.
fn setup(name: &str, host: &str, ca: &TestCa) -> Setup {
    let s = server::setup(name, "tok", VALUE, host, "TOKEN", "");
    s.trust(ca);
    s
}

/// `data` compressed by the host's `gzip` (a real tool), into `ws/name`.
fn gzip_file(ws: &Path, name: &str, data: &[u8]) -> Vec<u8> {
    let mut c = Command::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    let owned = data.to_vec();
    let w = std::thread::spawn(move || input.write_all(&owned));
    let o = c.wait_with_output().unwrap();
    w.join().unwrap().unwrap();
    std::fs::write(ws.join(name), &o.stdout).unwrap();
    o.stdout
}

fn run(s: &Setup, user: bool, port: u16, script: &str) -> Output {
    server::run(s, user, port, true, &["sh", "-c", script])
}

fn echo(r: &Request) -> Response {
    Response::ok(r.body.clone())
}

/// curl inside, a coded body to the bound host.
fn curl(port: u16, file: &str, coding: &str) -> String {
    format!(
        "export NO_PROXY= no_proxy=; curl -sS -o out.bin -w 'code=%{{http_code}}\\n' \
         -H \"Authorization: Bearer $TOKEN\" -H 'Content-Encoding: {coding}' \
         --data-binary @{file} https://localhost:{port}/up; head -c 4096 out.bin"
    )
}

fn tools_missing() -> bool {
    !host_has("curl", "--version") || !host_has("gzip", "--version")
}

fn gzip_probe_to_the_bound_host(user: bool) {
    if tools_missing() {
        skarn_test_support::skip!("curl or gzip is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], echo);
    let s = setup(
        &format!("f27t-gz-{}", u8::from(user)),
        &format!("localhost:{}", srv.port),
        &ca,
    );
    let gz = gzip_file(&s.ws, "p.gz", format!("q=x{PIECE}y").as_bytes());
    let o = run(&s, user, srv.port, &curl(srv.port, "p.gz", "gzip"));
    let text = format!("{}{}", out(&o), err(&o));
    assert!(
        srv.seen().iter().all(|r| r.body != gz),
        "the compressed probe reached the bound host: {text}"
    );
    assert!(text.contains("code=403"), "{text}");
    assert!(text.contains("switched off"), "{text}");
    assert_eq!(
        exposed(&s.home, "tok"),
        1,
        "the probe was not recorded: {text}"
    );
}

#[test]
fn a_gzip_coded_probe_to_the_bound_host_is_refused() {
    gzip_probe_to_the_bound_host(false);
}

#[test]
fn a_gzip_coded_probe_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    gzip_probe_to_the_bound_host(true);
}

/// Usability: a gzip upload with the placeholder in its header goes up
/// whole, the value in the header, the body as the client compressed it.
#[test]
fn an_ordinary_gzip_upload_to_the_bound_host_still_works() {
    if tools_missing() {
        skarn_test_support::skip!("curl or gzip is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], echo);
    let s = setup("f27t-usable", &format!("localhost:{}", srv.port), &ca);
    let text: Vec<u8> = (0..20_000u32)
        .flat_map(|i| format!("line {i} of an ordinary upload\n").into_bytes())
        .collect();
    let gz = gzip_file(&s.ws, "u.gz", &text);
    let script = format!(
        "{}; gzip -dc < out.bin | tail -n 1",
        curl(srv.port, "u.gz", "gzip")
    );
    let o = run(&s, false, srv.port, &script);
    let all = format!("{}{}", out(&o), err(&o));
    assert!(all.contains("code=200"), "{all}");
    assert!(
        out(&o).contains("line 19999 of an ordinary upload"),
        "{all}"
    );
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{all}");
    assert_eq!(seen[0].body, gz);
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {VALUE}"))
    );
    assert_eq!(exposed(&s.home, "tok"), 0);
}

/// A compression bomb ends the request with a clear refusal; a coding
/// the proxy cannot decode (`compress`) is refused before the body goes up.
#[test]
fn a_bomb_and_an_undecodable_coding_are_refused_with_a_message() {
    if tools_missing() {
        skarn_test_support::skip!("curl or gzip is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], echo);
    let s = setup("f27t-bomb", &format!("localhost:{}", srv.port), &ca);
    let bomb = gzip_file(&s.ws, "b.gz", &vec![0u8; 80 << 20]);
    std::fs::write(s.ws.join("z.bin"), b"(\xb5/\xfd not really zstd").unwrap();
    let script = format!(
        "{}; echo; {}",
        curl(srv.port, "b.gz", "gzip"),
        curl(srv.port, "z.bin", "compress")
    );
    let o = run(&s, false, srv.port, &script);
    let all = format!("{}{}", out(&o), err(&o));
    assert!(
        srv.seen().iter().all(|r| r.body != bomb),
        "the bomb went up whole: {all}"
    );
    assert!(srv.seen().is_empty(), "{all}");
    assert!(all.contains("code=413"), "{all}");
    assert!(all.contains("decodes to more than 64 MiB"), "{all}");
    assert!(all.contains("code=400"), "{all}");
    assert!(all.contains("content coding other than gzip"), "{all}");
}

/// A plain-HTTP echo host: every byte received after a head kept (per
/// connection), a complete counted body sent back.
fn plain_echo() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let seen = keep.clone();
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(20)));
                let mut buf = Vec::new();
                let mut tmp = [0u8; 4096];
                while let Ok(n @ 1..) = c.read(&mut tmp) {
                    buf.extend_from_slice(&tmp[..n]);
                    let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    let body = &buf[at + 4..];
                    {
                        let mut s = seen.lock().unwrap();
                        s.clear();
                        s.extend_from_slice(body);
                    }
                    if body.len() >= len {
                        let h = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                        let _ = c.write_all(h.as_bytes());
                        let _ = c.write_all(&body[..len]);
                        return;
                    }
                }
            });
        }
    });
    (port, seen)
}

/// Python's urllib through the run's proxy: `text` deflated (zlib) with
/// `Content-Encoding: deflate`, to a plain-HTTP host no secret is bound
/// to; prints the status and the inflated answer.
const CLIENT: &str = r#"
import sys, urllib.request, zlib
port, text = sys.argv[1], sys.argv[2].encode()
body = zlib.compress(text)
req = urllib.request.Request(f'http://127.0.0.1:{port}/up', data=body, headers={'Content-Encoding': 'deflate'})
try:
    r = urllib.request.urlopen(req, timeout=30)
    print('status', r.status, zlib.decompress(r.read()).decode())
except Exception as e:
    print('failed', e)
"#;

/// What the client sends for a text (zlib is deterministic).
const DEFLATE: &str =
    "import sys,zlib; sys.stdout.buffer.write(zlib.compress(sys.argv[1].encode()))";

fn deflate_probe_over_plain_http(user: bool) {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let (port, seen) = plain_echo();
    let ca = TestCa::new();
    let s = setup(
        &format!("f27t-plain-{}", u8::from(user)),
        "example.test",
        &ca,
    );
    std::fs::write(s.ws.join("client.py"), CLIENT).unwrap();
    let py = |text: &str| format!("export NO_PROXY= no_proxy=; python3 client.py {port} '{text}'");
    // Usability: an ordinary deflated body goes up and comes back.
    let o = run(&s, user, port, &py("hello deflated world"));
    assert!(
        out(&o).contains("status 200 hello deflated world"),
        "{}{}",
        out(&o),
        err(&o)
    );
    seen.lock().unwrap().clear();
    let o = run(&s, user, port, &py(&format!("q=x{PIECE}y")));
    let text = format!("{}{}", out(&o), err(&o));
    let got = seen.lock().unwrap().clone();
    let probe = Command::new("python3")
        .args(["-c", DEFLATE])
        .arg(format!("q=x{PIECE}y"))
        .output()
        .unwrap()
        .stdout;
    assert!(
        got != probe && !text.contains(PIECE),
        "the deflated probe reached the plain host: {text}"
    );
    assert!(!text.contains("status 200"), "{text}");
    assert_eq!(
        exposed(&s.home, "tok"),
        1,
        "the probe was not recorded: {text}"
    );
}

#[test]
fn a_deflate_coded_probe_over_plain_http_is_refused() {
    deflate_probe_over_plain_http(false);
}

#[test]
fn a_deflate_coded_probe_over_plain_http_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    deflate_probe_over_plain_http(true);
}

/// The record of the files a secret's value was read from (ADR 0319):
/// past 16,384 files for one secret the oldest were dropped, so no longer
/// hidden; now the record is kept whole and the secret refused, the
/// message naming it and the way out.
#[test]
fn a_secret_past_the_record_bound_is_refused_and_nothing_is_dropped() {
    let t = TempDir::new("f27t-record");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let many = t.dir("many");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[secrets.tok]\nfrom_env = \"F27T_TOK\"\nhosts = [\"example.test\"]\n",
    )
    .unwrap();
    let hex: String = "tok".bytes().map(|b| format!("{b:02x}")).collect();
    let mut record = Vec::new();
    for i in 0..16_385 {
        let f = many.join(format!("f{i}"));
        std::fs::write(&f, "").unwrap();
        record.extend_from_slice(format!("{hex}\t{}\0", f.display()).as_bytes());
    }
    let rec = home.join(".local/state/skarn/source-reads");
    std::fs::create_dir_all(rec.parent().unwrap()).unwrap();
    std::fs::write(&rec, &record).unwrap();
    let mut c = run_command(&ws, &home, &["--secret", "tok"], &["echo", "ran"]);
    c.env("F27T_TOK", VALUE);
    let o = c.output().unwrap();
    let all = format!("{}{}", out(&o), err(&o));
    assert!(!out(&o).contains("ran"), "the secret was used: {all}");
    assert!(all.contains("secret tok"), "{all}");
    assert!(all.contains("is refused"), "{all}");
    let kept = std::fs::read(&rec).unwrap();
    let first = format!("{}\0", many.join("f0").display());
    assert!(
        kept.windows(first.len()).any(|w| w == first.as_bytes()),
        "the oldest recorded file was dropped"
    );
}
