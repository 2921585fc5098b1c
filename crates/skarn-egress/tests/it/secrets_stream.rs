//! What a bound host (or a plain-HTTP server) can stream back past the
//! scrubber (atk27 F2, F3, F13): WebSocket messages split into fragments,
//! masked, in control frames or compressed; plain-HTTP bodies chunked or
//! gzipped; JSON echoes escaping every character. The servers are on
//! loopback; each check is made on the bytes the client received and on
//! what the server was sent.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;

use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder};
use skarn_egress::secrets::SecretSpec;
use skarn_egress::{Interceptor, Limits, Resolver, make_run_ca};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, TestCa, TlsServer};
use zeroize::Zeroizing;

use super::common::{Running, start_proxy_with};

/// Quotes, a backslash, a tab, non-ASCII: every JSON escape is needed.
const REAL: &str = "Xk7\"Qz2\\mN4\"vR8é€sL1xT6wB3pY9-0123456789";

/// A server frame (unmasked unless `mask`), opcode, payload.
fn ws_frame(fin: bool, rsv1: bool, op: u8, mask: Option<[u8; 4]>, p: &[u8]) -> Vec<u8> {
    let mut f = vec![u8::from(fin) << 7 | u8::from(rsv1) << 6 | op];
    let m = if mask.is_some() { 0x80 } else { 0 };
    if p.len() < 126 {
        f.push(m | p.len() as u8);
    } else {
        f.push(m | 126);
        f.extend_from_slice(&(p.len() as u16).to_be_bytes());
    }
    let mut p = p.to_vec();
    if let Some(k) = mask {
        f.extend_from_slice(&k);
        for (i, b) in p.iter_mut().enumerate() {
            *b ^= k[i % 4];
        }
    }
    f.extend_from_slice(&p);
    f
}

const SWITCH: &str = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n";

/// The WebSocket server's answer: the credential it was sent, back in
/// every shape a frame can give it.
fn ws_answer(r: &Request) -> Vec<u8> {
    let auth = r.header("authorization").unwrap_or("").as_bytes().to_vec();
    let mut out = format!("{SWITCH}\r\n").into_bytes();
    if r.path == "/ws-ext" {
        // Takes up an extension that was never offered.
        return format!("{SWITCH}Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
            .into_bytes();
    }
    // 1. A text message in 3-byte fragments.
    let pieces: Vec<&[u8]> = auth.chunks(3).collect();
    for (i, p) in pieces.iter().enumerate() {
        let op = if i == 0 { 1 } else { 0 };
        out.extend(ws_frame(i + 1 == pieces.len(), false, op, None, p));
    }
    // 2. A masked binary message.
    out.extend(ws_frame(true, false, 2, Some([9, 8, 7, 6]), &auth));
    // 3. Pings carrying the value in 9-byte pieces.
    for p in auth.chunks(9) {
        out.extend(ws_frame(true, false, 9, None, p));
    }
    // 4. The value split over two messages.
    let (a, b) = auth.split_at(auth.len() / 2);
    out.extend(ws_frame(true, false, 1, None, a));
    out.extend(ws_frame(true, false, 1, None, b));
    if r.path == "/ws-deflate" {
        // 5. permessage-deflate (RSV1) of the value: never passed on.
        let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
        d.write_all(&auth).unwrap();
        out.extend(ws_frame(true, true, 1, None, &d.finish().unwrap()));
        out.extend(ws_frame(true, false, 1, None, b"after"));
    }
    out.extend(ws_frame(true, false, 8, None, b"\x03\xe8bye"));
    out
}

fn json_answer(r: &Request) -> Vec<u8> {
    let auth = r.header("authorization").unwrap_or("");
    let every: String = auth.encode_utf16().map(|u| format!("\\u{u:04X}")).collect();
    let body = format!(
        "{{\"you_sent\":{},\"again\":\"{every}\"}}",
        serde_json::to_string(auth).unwrap()
    );
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

struct Setup {
    proxy: Option<Running>,
    a: TlsServer,
    run_ca: String,
    ph: String,
    _dir: TempDir,
}

fn setup() -> Setup {
    let test_ca = TestCa::new();
    let a = TlsServer::start_raw(&test_ca, &["api.test"], |r| match r.path.as_str() {
        "/json" => json_answer(r),
        _ => ws_answer(r),
    });
    let spec = SecretSpec {
        name: "tok".into(),
        env: "TOK".into(),
        placeholder: skarn_egress::secrets::placeholder::make(REAL).unwrap(),
        value: Zeroizing::new(REAL.into()),
        hosts: vec![format!("api.test:{}", a.port)],
        methods: Vec::new(),
        paths: Vec::new(),
        header: None,
    };
    let ph = spec.placeholder.clone();
    let ca = make_run_ca(&spec.hosts).unwrap();
    let ic = Interceptor::with_upstream_roots(&[spec], &ca, &test_ca.cert_pem).unwrap();
    let resolver = Resolver::system().with_override("api.test", vec!["127.0.0.1".parse().unwrap()]);
    let allow = [format!("api.test:{}", a.port), "127.0.0.1:*".to_string()];
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let proxy = start_proxy_with(&allow, resolver, Limits::default(), 2, Some(ic));
    Setup {
        proxy: Some(proxy),
        a,
        run_ca: ca.cert_pem.clone(),
        ph,
        _dir: TempDir::new("eg-secrets-stream"),
    }
}

/// Through the proxy's CONNECT to the bound host, TLS with the run's CA:
/// send `head`, read everything until the proxy closes.
fn exchange_tls(s: &Setup, head: &str) -> Vec<u8> {
    let p = s.proxy.as_ref().unwrap().http;
    let mut tcp = TcpStream::connect(("127.0.0.1", p)).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        tcp,
        "CONNECT api.test:{0} HTTP/1.1\r\nHost: api.test:{0}\r\n\r\n",
        s.a.port
    )
    .unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(tcp.read(&mut b).unwrap(), 1);
        got.push(b[0]);
    }
    assert!(got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject;
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(s.run_ca.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("api.test").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    tls.write_all(head.as_bytes()).unwrap();
    tls.flush().unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
    }
    all
}

/// Frames after the head: (fin, opcode, payload), checked unmasked and
/// without reserved bits.
fn frames(mut b: &[u8]) -> Vec<(bool, u8, Vec<u8>)> {
    let mut v = Vec::new();
    while b.len() >= 2 {
        assert_eq!(b[0] & 0x70, 0, "reserved bits reach the client");
        assert_eq!(b[1] & 0x80, 0, "a masked frame reaches the client");
        let (len, at) = match b[1] & 0x7f {
            126 => (usize::from(u16::from_be_bytes([b[2], b[3]])), 4),
            127 => panic!("no frame here is that long"),
            n => (usize::from(n), 2),
        };
        v.push((b[0] & 0x80 != 0, b[0] & 0x0f, b[at..at + len].to_vec()));
        b = &b[at + len..];
    }
    assert!(b.is_empty(), "a cut frame");
    v
}

/// Whether `out`, read as text, raw or unescaped, holds 10 bytes of the
/// value in a row.
fn shows_value(out: &[u8]) -> bool {
    let text = String::from_utf8_lossy(out).to_string();
    let unescaped = serde_json::from_str::<String>(&format!("\"{}\"", text.replace('"', "\\\"")))
        .unwrap_or_default();
    let v = REAL.as_bytes();
    v.windows(10).any(|w| {
        out.windows(10).any(|x| x == w) || unescaped.as_bytes().windows(10).any(|x| x == w)
    })
}

fn ws_request(s: &Setup, path: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: api.test:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\
         Authorization: Bearer {}\r\n\r\n",
        s.a.port, s.ph
    )
}

/// Payloads of the data messages, reassembled, and of the control frames.
fn messages(fs: &[(bool, u8, Vec<u8>)]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut data, mut control, mut cur) = (Vec::new(), Vec::new(), Vec::new());
    for (fin, op, p) in fs {
        if *op >= 8 {
            control.push(p.clone());
            continue;
        }
        cur.extend_from_slice(p);
        if *fin {
            data.push(std::mem::take(&mut cur));
        }
    }
    (data, control)
}

#[test]
fn websocket_messages_from_a_bound_host_are_scrubbed() {
    let s = setup();
    let out = exchange_tls(&s, &ws_request(&s, "/ws"));
    let at = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(out.starts_with(b"HTTP/1.1 101"));
    let fs = frames(&out[at..]);
    let (data, control) = messages(&fs);
    // The reassembled messages carry the placeholder where the value was.
    let whole = format!("Bearer {}", s.ph).into_bytes();
    assert_eq!(data[0], whole);
    assert_eq!(data[1], whole);
    assert_eq!([data[2].clone(), data[3].clone()].concat(), whole);
    let all: Vec<u8> = fs.iter().flat_map(|f| f.2.clone()).collect();
    assert!(!shows_value(&all), "{}", String::from_utf8_lossy(&all));
    // Pings in 9-byte pieces: only what precedes a 10-byte run is left.
    let pings: Vec<u8> = control.concat();
    assert!(!shows_value(&pings));
    // The server got the value, and no extension offer.
    let seen = s.a.seen();
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    assert!(seen[0].header("sec-websocket-extensions").is_none());
}

#[test]
fn compressed_websocket_frames_and_taken_up_extensions_are_refused() {
    let s = setup();
    let out = exchange_tls(&s, &ws_request(&s, "/ws-deflate"));
    let at = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let fs = frames(&out[at..]);
    // Everything before the compressed frame came, nothing from it on.
    assert!(!fs.iter().any(|f| f.2 == b"after"));
    let all: Vec<u8> = fs.iter().flat_map(|f| f.2.clone()).collect();
    assert!(!shows_value(&all));
    let out = exchange_tls(&s, &ws_request(&s, "/ws-ext"));
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 502"), "{text}");
}

#[test]
fn json_echoes_escaping_every_character_are_scrubbed() {
    let s = setup();
    let head = format!(
        "GET /json HTTP/1.1\r\nHost: api.test:{}\r\nAuthorization: Bearer {}\r\n\r\n",
        s.a.port, s.ph
    );
    let out = exchange_tls(&s, &head);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.contains("you_sent"), "{text}");
    let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    for k in ["you_sent", "again"] {
        let got = v[k].as_str().unwrap();
        assert!(!shows_value(got.as_bytes()), "{k}: {got}");
    }
    // Each escape keeps its length carrying placeholder characters (a
    // two-byte escape becomes two of them): still valid JSON.
    assert!(v["you_sent"].as_str().unwrap().starts_with("Bearer "));
    assert_eq!(
        s.a.seen()[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
}

/// A plain-HTTP server on loopback answering each connection with
/// `answer` (after reading the request head); the heads it got.
fn plain_server(answer: Vec<u8>) -> (u16, std::sync::mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(1) => head.push(b[0]),
                    _ => break,
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
            let _ = c.write_all(&answer);
        }
    });
    (port, rx)
}

fn curl_missing() -> bool {
    Command::new("curl").arg("--version").output().is_err()
}

#[test]
fn plain_http_bodies_chunked_or_gzipped_are_scrubbed() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let text = format!("leak: {REAL}\n");
    // 1. Chunked, 3 bytes a chunk.
    let mut chunked =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for c in text.as_bytes().chunks(3) {
        chunked.extend(format!("{:x}\r\n", c.len()).into_bytes());
        chunked.extend_from_slice(c);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    // 2. Gzip (sent although identity was asked for).
    let mut g = GzEncoder::new(Vec::new(), Compression::default());
    g.write_all(text.as_bytes()).unwrap();
    let gz = g.finish().unwrap();
    let mut gzipped = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        gz.len()
    )
    .into_bytes();
    gzipped.extend_from_slice(&gz);
    let p = s.proxy.as_ref().unwrap().http;
    for answer in [chunked, gzipped] {
        let (port, heads) = plain_server(answer);
        let o = Command::new("curl")
            .args(["-sS", "--compressed", "--max-time", "20", "--proxy"])
            .arg(format!("http://127.0.0.1:{p}"))
            .arg(format!("http://127.0.0.1:{port}/x"))
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&o.stdout).to_string();
        assert_eq!(
            got,
            format!("leak: {}\n", s.ph),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let head = heads.recv().unwrap().to_ascii_lowercase();
        assert!(head.contains("accept-encoding: identity\r\n"), "{head}");
        assert!(!head.contains("gzip"), "{head}");
    }
    // 3. A WebSocket over plain HTTP: parsed and scrubbed as on the TLS path.
    let mut ws = format!("{SWITCH}\r\n").into_bytes();
    for (i, c) in REAL.as_bytes().chunks(4).enumerate() {
        ws.extend(ws_frame(
            4 * (i + 1) >= REAL.len(),
            false,
            u8::from(i == 0),
            None,
            c,
        ));
    }
    let (port, _heads) = plain_server(ws);
    let mut c = TcpStream::connect(("127.0.0.1", p)).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        c,
        "GET http://127.0.0.1:{port}/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let at = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let (data, _) = messages(&frames(&out[at..]));
    assert_eq!(data, vec![s.ph.clone().into_bytes()]);
    let r = s.proxy.take().unwrap().report();
    assert!(!format!("{r:?}").contains(REAL));
}
