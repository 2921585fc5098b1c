//! What a client of the proxy can read back of a secret's value (findings
//! F1, F4, F7 of atk27): a bound host that echoes the request's credential
//! partly, reversed, case-changed, re-encoded or compressed; override
//! headers; a value one host stores and another serves. Checked on what
//! the client received and what the servers received.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flate2::Compression;
use flate2::write::{GzEncoder, ZlibEncoder};
use skarn_egress::secrets::SecretSpec;
use skarn_egress::{Interceptor, Limits, Resolver, make_run_ca};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};
use zeroize::Zeroizing;

use super::common::{Running, start_proxy_with};

const REAL: &str = "OPENSECRETvalue_9876543210zyxwvu";
const OTHER: &str = "beta-REAL-VALUE-9876543210";

/// Brotli of `data` (at most 64 KiB) as one stored meta-block: the
/// decoder's work without an encoder dependency.
fn brotli_stored(data: &[u8]) -> Vec<u8> {
    let v: u32 = ((data.len() as u32 - 1) << 4) | (1 << 20);
    let mut out = v.to_le_bytes()[..3].to_vec();
    out.extend_from_slice(data);
    out.push(3);
    out
}

fn encoded(path: &str, auth: &str) -> Response {
    let mut r = Response::ok(Vec::new());
    let text = format!("X-A: {auth}\r\n").repeat(3);
    let (coding, body) = match path {
        "/gz" => {
            let mut g = GzEncoder::new(Vec::new(), Compression::default());
            g.write_all(text.as_bytes()).unwrap();
            ("gzip", g.finish().unwrap())
        }
        "/deflate" => {
            let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
            z.write_all(text.as_bytes()).unwrap();
            ("deflate", z.finish().unwrap())
        }
        "/br" => ("br", brotli_stored(text.as_bytes())),
        "/br-chunked" => {
            r.headers
                .push(("Transfer-Encoding".into(), "chunked".into()));
            ("br", brotli_stored(text.as_bytes()))
        }
        "/zstd" => (
            "zstd",
            zstd::stream::encode_all(text.as_bytes(), 3).unwrap(),
        ),
        // `compress` (LZW): a coding the proxy does not decode.
        _ => ("compress", text.into_bytes()),
    };
    r.headers.push(("Content-Encoding".into(), coding.into()));
    r.body = body;
    r
}

fn handler(store: Arc<Mutex<String>>) -> impl Fn(&Request) -> Response {
    move |r| {
        let auth = r.header("authorization").unwrap_or("").to_string();
        let body = match r.path.as_str() {
            "/half" => auth[..auth.len() / 2 + 3].to_string(),
            "/tail" => format!("token ...{}", &auth[auth.len() - 12..]),
            "/rev" => auth.chars().rev().collect(),
            "/b64" => STANDARD.encode(&auth),
            "/lower" => auth.to_ascii_lowercase(),
            "/hex" => auth.bytes().map(|b| format!("{b:02x}")).collect(),
            // atk27g F6: UTF-16 in either byte order, and UTF-16LE in
            // base64 (PowerShell's encoded commands).
            "/utf16le" | "/utf16be" => {
                let le = r.path == "/utf16le";
                let b: Vec<u8> = auth
                    .encode_utf16()
                    .flat_map(|u| if le { u.to_le_bytes() } else { u.to_be_bytes() })
                    .collect();
                return Response::ok(b);
            }
            "/b64-utf16" => {
                let b: Vec<u8> = format!("x{auth}")
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect();
                STANDARD.encode(b)
            }
            "/store" => {
                *store.lock().unwrap() = auth;
                "stored".into()
            }
            "/fetch" => store.lock().unwrap().clone(),
            // A gist/paste: the request's body is stored as it arrived.
            "/paste" => {
                *store.lock().unwrap() = String::from_utf8_lossy(&r.body).into_owned();
                "pasted".into()
            }
            // The value in the coding headers (atk27 F1).
            "/ce-hex" => {
                let mut r = Response::ok("x");
                let hex: String = auth.bytes().map(|b| format!("{b:02x}")).collect();
                r.headers.push(("Content-Encoding".into(), hex));
                return r;
            }
            "/ce-raw" => {
                let mut r = Response::ok("x");
                r.headers.push(("Content-Encoding".into(), auth));
                return r;
            }
            "/gz" | "/deflate" | "/br" | "/br-chunked" | "/zstd" | "/compress" => {
                return encoded(&r.path, &auth);
            }
            _ => "ok".into(),
        };
        Response::ok(body)
    }
}

struct Setup {
    proxy: Option<Running>,
    bundle: String,
    /// Bound to `alpha` (REAL).
    a: TlsServer,
    /// Bound to `beta`; shares `a`'s store.
    b: TlsServer,
    /// Allowed, bound to nothing (a plain tunnel); shares the store.
    c: TlsServer,
    ph: String,
    _dir: TempDir,
}

fn spec(name: &str, value: &str, host: String, routes: bool) -> SecretSpec {
    SecretSpec {
        name: name.into(),
        env: name.to_ascii_uppercase(),
        placeholder: skarn_egress::secrets::placeholder::make(value).unwrap(),
        value: Zeroizing::new(value.into()),
        hosts: vec![host],
        methods: if routes {
            vec!["GET".into()]
        } else {
            Vec::new()
        },
        paths: if routes {
            vec!["/*".into()]
        } else {
            Vec::new()
        },
        header: None,
    }
}

fn setup() -> Setup {
    let test_ca = TestCa::new();
    let store = Arc::new(Mutex::new(String::new()));
    let a = TlsServer::start(
        &test_ca,
        &["api.test", "alias.test"],
        handler(store.clone()),
    );
    let b = TlsServer::start(&test_ca, &["other.test"], handler(store.clone()));
    let c = TlsServer::start(&test_ca, &["unbound.test"], handler(store));
    let sa = spec("alpha", REAL, format!("api.test:{}", a.port), true);
    let sb = spec("beta", OTHER, format!("other.test:{}", b.port), false);
    let ph = sa.placeholder.clone();
    let ca = make_run_ca(&[sa.hosts[0].clone(), sb.hosts[0].clone()]).unwrap();
    let ic = Interceptor::with_upstream_roots(&[sa, sb], &ca, &test_ca.cert_pem).unwrap();
    let lo = vec!["127.0.0.1".parse().unwrap()];
    let resolver = Resolver::system()
        .with_override("api.test", lo.clone())
        .with_override("other.test", lo.clone())
        .with_override("alias.test", lo.clone())
        .with_override("unbound.test", lo);
    let allow = [
        format!("api.test:{}", a.port),
        format!("alias.test:{}", a.port),
        format!("other.test:{}", b.port),
        format!("unbound.test:{}", c.port),
        "127.0.0.1:*".to_string(),
    ];
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let proxy = start_proxy_with(&allow, resolver, Limits::default(), 2, Some(ic));
    let dir = TempDir::new("eg-secrets-echo");
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&bundle, format!("{}{}", ca.cert_pem, test_ca.cert_pem)).unwrap();
    Setup {
        proxy: Some(proxy),
        bundle: bundle.display().to_string(),
        a,
        b,
        c,
        ph,
        _dir: dir,
    }
}

impl Setup {
    fn curl(&self, args: &[&str]) -> Vec<u8> {
        let p = self.proxy.as_ref().unwrap().http;
        let o = Command::new("curl")
            .args(["-sS", "--max-time", "20", "--proxy"])
            .arg(format!("http://127.0.0.1:{p}"))
            .args(["--cacert", &self.bundle])
            .args(args)
            .output()
            .unwrap();
        let mut all = o.stdout;
        all.extend_from_slice(&o.stderr);
        all
    }

    fn get(&self, path: &str) -> Vec<u8> {
        let hdr = format!("Authorization: Bearer {}", self.ph);
        self.curl(&[
            "-H",
            &hdr,
            &format!("https://api.test:{}{path}", self.a.port),
        ])
    }
}

/// Whether `out`, in any form the scrubber promises to cover, holds a run
/// of 10 bytes of the value.
fn shows_value(out: &[u8]) -> bool {
    let text = String::from_utf8_lossy(out).to_ascii_lowercase();
    let rev: String = text.chars().rev().collect();
    let b64: Vec<u8> = text
        .split_whitespace()
        .filter_map(|w| STANDARD.decode(w).ok())
        .flatten()
        .collect();
    let b64 = String::from_utf8_lossy(&b64).to_ascii_lowercase();
    let hexed: Vec<u8> = (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    let hexed = String::from_utf8_lossy(&hexed).to_ascii_lowercase();
    // UTF-16 (either order) read back as bytes: every other byte dropped,
    // at both offsets, also after base64.
    let narrow = |b: &[u8]| -> String {
        let even: Vec<u8> = b.iter().step_by(2).copied().collect();
        let odd: Vec<u8> = b.iter().skip(1).step_by(2).copied().collect();
        format!(
            "{} {}",
            String::from_utf8_lossy(&even),
            String::from_utf8_lossy(&odd)
        )
        .to_ascii_lowercase()
    };
    let wide = narrow(out);
    let wide_b64: Vec<u8> = String::from_utf8_lossy(out)
        .split_whitespace()
        .filter_map(|w| STANDARD.decode(w).ok())
        .flatten()
        .collect();
    let wide_b64 = narrow(&wide_b64);
    let v = REAL.to_ascii_lowercase();
    (0..=v.len() - 10).any(|i| {
        let w = &v[i..i + 10];
        [&text, &rev, &b64, &hexed, &wide, &wide_b64]
            .iter()
            .any(|t| t.contains(w))
    })
}

fn curl_missing() -> bool {
    Command::new("curl").arg("--version").output().is_err()
}

#[test]
fn partial_transformed_and_compressed_echoes_are_scrubbed() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    for path in [
        "/half",
        "/tail",
        "/rev",
        "/b64",
        "/lower",
        "/hex",
        "/utf16le",
        "/utf16be",
        "/b64-utf16",
        "/gz",
        "/deflate",
        "/br",
        "/br-chunked",
        "/zstd",
    ] {
        let out = s.get(path);
        assert!(!out.is_empty(), "{path}");
        assert!(
            !shows_value(&out),
            "{path}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    // The decoded bodies are what the host sent, with the placeholder.
    let out = String::from_utf8_lossy(&s.get("/gz")).to_string();
    assert_eq!(out, format!("X-A: Bearer {}\r\n", s.ph).repeat(3));
    let out = String::from_utf8_lossy(&s.get("/zstd")).to_string();
    assert_eq!(out, format!("X-A: Bearer {}\r\n", s.ph).repeat(3));
    // A coding the proxy cannot decode is refused, not passed on.
    let out = String::from_utf8_lossy(&s.get("/compress")).to_string();
    assert!(out.contains("cannot scrub"), "{out}");
    assert!(!shows_value(out.as_bytes()));
    // Every request reached the host with the value.
    assert!(
        s.a.seen()
            .iter()
            .all(|r| r.header("authorization") == Some(&*format!("Bearer {REAL}")))
    );
}

/// atk27 F1: the proxy's own refusal of an unknown coding names no
/// upstream bytes, so a coding header that echoes the value (raw or hex)
/// brings nothing of it back.
#[test]
fn a_coding_header_echoing_the_value_brings_nothing_back() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    for path in ["/ce-hex", "/ce-raw"] {
        let out = s.get(path);
        let text = String::from_utf8_lossy(&out).to_string();
        assert!(text.contains("cannot scrub"), "{path}: {text}");
        assert!(!shows_value(&out), "{path}: {text}");
    }
    assert!(
        s.a.seen()
            .iter()
            .all(|r| r.header("authorization") == Some(&*format!("Bearer {REAL}")))
    );
}

#[test]
fn override_headers_get_no_value_where_method_or_path_is_bound() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let hdr = format!("Authorization: Bearer {}", s.ph);
    let url = format!("https://api.test:{}/x", s.a.port);
    for extra in [
        "X-HTTP-Method-Override: DELETE",
        "X-Original-URL: /admin/delete-all",
        "X-Rewrite-URL: /admin/delete-all",
    ] {
        let out = s.curl(&["-H", &hdr, "-H", extra, &url]);
        let out = String::from_utf8_lossy(&out);
        assert!(out.contains("secret alpha was not sent"), "{extra}: {out}");
    }
    let out = s.curl(&["-H", &hdr, &format!("{url}?_method=DELETE")]);
    assert!(String::from_utf8_lossy(&out).contains("secret alpha was not sent"));
    assert!(s.a.seen().is_empty(), "{}", s.a.seen_text());
    let r = s.proxy.take().unwrap().report();
    assert!(
        r.secrets.iter().all(|u| u.sent == 0 && u.refused > 0),
        "{r:?}"
    );
}

/// atk27h F5 and F1: the underscore spellings CGI/WSGI servers read as the
/// override headers, and Host/framing values a front end reads otherwise
/// than the proxy's check (non-ASCII white space, `[name]`, `+port`,
/// `0port`), get no value: checked on what the bound host received.
#[test]
fn underscore_overrides_and_odd_host_spellings_get_no_value() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let hdr = format!("Authorization: Bearer {}", s.ph);
    let port = s.a.port;
    let url = format!("https://api.test:{port}/x");
    let nbsp = String::from_utf8_lossy(b"\xc2\xa0").into_owned();
    let host_nbsp = format!("Host: api.test:{port}{nbsp}");
    let host_ideo = format!("Host: \u{3000}api.test:{port}");
    let host_br = format!("Host: [api.test]:{port}");
    let host_plus = format!("Host: api.test:+{port}");
    let host_zero = format!("Host: api.test:0{port}");
    let cl_nbsp = format!("Content-Length: 2{nbsp}");
    for extra in [
        "X_HTTP_Method_Override: DELETE",
        "X_Forwarded_Host: evil.example",
        "x_original_url: /admin/delete-all",
        &host_nbsp,
        &host_ideo,
        &host_br,
        &host_plus,
        &host_zero,
        &cl_nbsp,
    ] {
        // A GET (the bound method) with a body, so only the header decides.
        let out = s.curl(&["-H", &hdr, "-H", extra, "-X", "GET", "-d", "ab", &url]);
        let out = String::from_utf8_lossy(&out);
        assert!(
            out.contains("was not sent") || out.contains("400") || out.contains("skarn:"),
            "{extra}: {out}"
        );
    }
    let seen = s.a.seen_text();
    assert!(
        !seen.contains(REAL),
        "the bound host received the value: {seen}"
    );
    assert!(s.a.seen().is_empty(), "{seen}");
    // The dashed spellings of the same request still go (control).
    let ok = s.curl(&["-H", &hdr, &url]);
    assert_eq!(String::from_utf8_lossy(&ok), "ok");
    drop(s.proxy.take());
}

/// F7: a value the bound host stores, read back through another host. The
/// proxy scrubs what it can read: a bound host's responses (any secret's
/// value) and plain HTTP. A tunnel to an unbound host keeps end-to-end TLS
/// (issue 27), so it is not scrubbed: documented in ADR 0110.
#[test]
fn a_stored_value_read_back_through_what_the_proxy_reads_is_scrubbed() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    // A paste whose content is the placeholder: bodies are never
    // substituted, so the host stores only the placeholder.
    let url = format!("https://api.test:{}/paste", s.a.port);
    let body = format!("my token is {}", s.ph);
    let out = s.curl(&["--data-binary", &body, &url]);
    assert_eq!(out, b"pasted");
    let seen = s.a.seen_text();
    assert!(
        seen.contains(&body) && !seen.contains(&format!("is {REAL}")),
        "{seen}"
    );
    let out = s.get("/store");
    assert_eq!(out, b"stored");
    // Through the same bound host, another method and path than the
    // secret is bound to (GET /*), without the secret: scrubbed.
    let url = format!("https://api.test:{}/fetch", s.a.port);
    let out = s.curl(&["-X", "DELETE", &url]);
    assert_eq!(String::from_utf8_lossy(&out), format!("Bearer {}", s.ph));
    // Through the other bound host (terminated, beta's): scrubbed.
    let out = s.curl(&[&format!("https://other.test:{}/fetch", s.b.port)]);
    assert_eq!(String::from_utf8_lossy(&out), format!("Bearer {}", s.ph));
    // Through plain HTTP from a local server that serves it: scrubbed.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut c, _)) = l.accept() {
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let body = format!("leak: Bearer {REAL}\n");
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let out = s.curl(&[&format!("http://127.0.0.1:{port}/plain")]);
    assert_eq!(
        String::from_utf8_lossy(&out),
        format!("leak: Bearer {}\n", s.ph)
    );
    let _ = &s.c;
}

/// Attack atk27 F5: a bound host reached through SOCKS5 by name, or by a
/// `CONNECT` to its address, was a plain tunnel, so a value the host
/// stored came back unscrubbed. Both are refused now; the value never
/// reaches the client.
#[test]
fn a_bound_host_is_never_reached_through_a_plain_tunnel() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    // The host stores the value it was sent (through the scrubbing path).
    assert_eq!(s.get("/store"), b"stored");
    let socks = s.proxy.as_ref().unwrap().socks;
    let by_name = Command::new("curl")
        .args(["-sS", "-k", "--max-time", "20", "--socks5-hostname"])
        .arg(format!("127.0.0.1:{socks}"))
        .arg(format!("https://api.test:{}/fetch", s.a.port))
        .output()
        .unwrap();
    let mut out = by_name.stdout.clone();
    out.extend_from_slice(&by_name.stderr);
    assert!(!shows_value(&out), "{}", String::from_utf8_lossy(&out));
    assert!(
        !by_name.status.success(),
        "{}",
        String::from_utf8_lossy(&out)
    );
    // SOCKS5 by address, and CONNECT to the address.
    let by_addr = Command::new("curl")
        .args(["-sS", "-k", "--max-time", "20", "--socks5"])
        .arg(format!("127.0.0.1:{socks}"))
        .arg(format!("https://127.0.0.1:{}/fetch", s.a.port))
        .output()
        .unwrap();
    let mut out = by_addr.stdout.clone();
    out.extend_from_slice(&by_addr.stderr);
    assert!(!shows_value(&out), "{}", String::from_utf8_lossy(&out));
    let out = s.curl(&["-k", &format!("https://127.0.0.1:{}/fetch", s.a.port)]);
    assert!(!shows_value(&out), "{}", String::from_utf8_lossy(&out));
    assert!(
        String::from_utf8_lossy(&out).contains("403") || !out.is_empty(),
        "{}",
        String::from_utf8_lossy(&out)
    );
    // A host no secret is bound to is still tunnelled (through SOCKS5).
    let other = Command::new("curl")
        .args(["-sS", "-k", "--max-time", "20", "--socks5-hostname"])
        .arg(format!("127.0.0.1:{socks}"))
        .arg(format!("https://unbound.test:{}/hello", s.c.port))
        .output()
        .unwrap();
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
}

/// Attack atk27d F1: another name of a bound host (an alias resolving to
/// its address) was a plain tunnel, so a value the host stored came back
/// raw. Through the HTTP proxy it is now served like the bound host (TLS
/// terminated, the answer scrubbed, no secret sent); through SOCKS5 it is
/// refused.
#[test]
fn another_name_of_a_bound_host_is_scrubbed_or_refused() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    assert_eq!(s.get("/store"), b"stored");
    let url = format!("https://alias.test:{}/fetch", s.a.port);
    let out = s.curl(&["-k", &url]);
    assert!(!shows_value(&out), "{}", String::from_utf8_lossy(&out));
    assert!(
        String::from_utf8_lossy(&out).contains(&s.ph),
        "the alias was not served (scrubbed): {}",
        String::from_utf8_lossy(&out)
    );
    // The placeholder sent to the alias is not replaced.
    let hdr = format!("Authorization: Bearer {}", s.ph);
    let with_value = |s: &Setup| s.a.seen().iter().filter(|r| r.head.contains(REAL)).count();
    let before = with_value(&s);
    let _ = s.curl(&[
        "-k",
        "-H",
        &hdr,
        &format!("https://alias.test:{}/echo", s.a.port),
    ]);
    assert_eq!(with_value(&s), before, "the value was sent to the alias");
    let socks = s.proxy.as_ref().unwrap().socks;
    let o = Command::new("curl")
        .args(["-sS", "-k", "--max-time", "20", "--socks5-hostname"])
        .arg(format!("127.0.0.1:{socks}"))
        .arg(&url)
        .output()
        .unwrap();
    let mut out = o.stdout.clone();
    out.extend_from_slice(&o.stderr);
    assert!(!shows_value(&out), "{}", String::from_utf8_lossy(&out));
    assert!(!o.status.success(), "{}", String::from_utf8_lossy(&out));
}
