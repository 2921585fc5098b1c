//! Secrets bound to hosts, through the proxy in-process, against HTTPS
//! servers on loopback with their own CA: curl gets through with the
//! placeholder and the server sees the real value; every way of sending
//! the placeholder elsewhere gets no value. Each check is made on what the
//! servers received (outside the client) and on what the client saw.

use std::path::Path;
use std::process::Command;

use super::common::{Running, start_proxy_with};
use skarn_egress::secrets::SecretSpec;
use skarn_egress::{EgressReport, Interceptor, Limits, Resolver, make_run_ca};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};
use zeroize::Zeroizing;

const A_REAL: &str = "alpha-REAL-VALUE-0123456789";
const B_REAL: &str = "beta-REAL-VALUE-9876543210";

struct Setup {
    proxy: Option<Running>,
    /// The run CA and the test CA, for curl.
    bundle: String,
    a: TlsServer,
    b: TlsServer,
    c: TlsServer,
    ph_a: String,
    ph_b: String,
    _dir: TempDir,
}

fn handler(redirect_to: String) -> impl Fn(&skarn_test_support::tls_server::Request) -> Response {
    move |r| {
        let auth = r.header("authorization").unwrap_or("").to_string();
        match r.path.as_str() {
            "/echo" => Response {
                status: "200 OK".into(),
                headers: vec![("X-Echo".into(), auth.clone())],
                body: format!("you sent: {auth}\n").into_bytes(),
            },
            "/echo-chunked" => Response {
                status: "200 OK".into(),
                headers: vec![("Transfer-Encoding".into(), "chunked".into())],
                body: format!("you sent: {auth} and again {auth}\n").into_bytes(),
            },
            "/redirect" => Response {
                status: "302 Found".into(),
                headers: vec![("Location".into(), redirect_to.clone())],
                body: Vec::new(),
            },
            _ => Response::ok("ok\n"),
        }
    }
}

fn spec(name: &str, value: &str, host: String) -> SecretSpec {
    SecretSpec {
        name: name.into(),
        env: name.to_ascii_uppercase(),
        placeholder: skarn_egress::secrets::placeholder::make(value).unwrap(),
        value: Zeroizing::new(value.into()),
        hosts: vec![host],
        methods: Vec::new(),
        paths: Vec::new(),
        header: None,
    }
}

fn setup() -> Setup {
    let test_ca = TestCa::new();
    // c: allowed, bound to nothing (plain tunnel); b: bound to beta;
    // a: bound to alpha, redirects to b.
    let c = TlsServer::start(&test_ca, &["unbound.test"], handler(String::new()));
    let b = TlsServer::start(&test_ca, &["other.test"], handler(String::new()));
    let a = TlsServer::start(
        &test_ca,
        &["api.test", "127.0.0.1"],
        handler(format!("https://other.test:{}/landing", b.port)),
    );
    let sa = spec("alpha", A_REAL, format!("api.test:{}", a.port));
    let sb = spec("beta", B_REAL, format!("other.test:{}", b.port));
    let (ph_a, ph_b) = (sa.placeholder.clone(), sb.placeholder.clone());
    let ca = make_run_ca(&[sa.hosts[0].clone(), sb.hosts[0].clone()]).unwrap();
    let ic = Interceptor::with_upstream_roots(&[sa, sb], &ca, &test_ca.cert_pem).unwrap();
    let lo = vec!["127.0.0.1".parse().unwrap()];
    let resolver = Resolver::system()
        .with_override("api.test", lo.clone())
        .with_override("other.test", lo.clone())
        .with_override("unbound.test", lo);
    let allow: Vec<String> = [
        format!("api.test:{}", a.port),
        format!("other.test:{}", b.port),
        format!("unbound.test:{}", c.port),
        format!("127.0.0.1:{}", a.port),
        format!("127.0.0.1:{}", b.port),
        format!("127.0.0.1:{}", c.port),
    ]
    .into();
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let proxy = start_proxy_with(&allow, resolver, Limits::default(), 2, Some(ic));
    let dir = TempDir::new("eg-secrets");
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&bundle, format!("{}{}", ca.cert_pem, test_ca.cert_pem)).unwrap();
    Setup {
        proxy: Some(proxy),
        bundle: bundle.display().to_string(),
        a,
        b,
        c,
        ph_a,
        ph_b,
        _dir: dir,
    }
}

impl Setup {
    fn curl(&self, args: &[&str]) -> (String, String) {
        let p = self.proxy.as_ref().unwrap().http;
        let o = Command::new("curl")
            .args(["-sS", "--max-time", "20", "--proxy"])
            .arg(format!("http://127.0.0.1:{p}"))
            .args(["--cacert", &self.bundle])
            .args(args)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    fn report(&mut self) -> EgressReport {
        self.proxy.take().unwrap().report()
    }

    fn no_real_value_seen_by_client(&self, text: &str) {
        assert!(!text.contains(A_REAL) && !text.contains(B_REAL), "{text}");
    }
}

fn curl_missing() -> bool {
    Command::new("curl").arg("--version").output().is_err()
}

#[test]
fn curl_with_the_placeholder_reaches_the_bound_host_with_the_real_value() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let url = format!("https://api.test:{}/echo", s.a.port);
    let hdr = format!("Authorization: Bearer {}", s.ph_a);
    let (out, err) = s.curl(&["-i", "-H", &hdr, &url]);
    // The server got the value...
    let seen = s.a.seen();
    assert_eq!(seen.len(), 1, "{err}");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {A_REAL}"))
    );
    // ...and its echo came back as the placeholder, head and body.
    assert!(
        out.contains(&format!("you sent: Bearer {}", s.ph_a)),
        "{out}{err}"
    );
    assert!(out.contains(&format!("X-Echo: Bearer {}", s.ph_a)), "{out}");
    s.no_real_value_seen_by_client(&out);
    s.no_real_value_seen_by_client(&err);
    let r = s.report();
    assert_eq!(r.secrets.len(), 1, "{r:?}");
    assert_eq!(r.secrets[0].secret, "alpha");
    assert_eq!(r.secrets[0].host, format!("api.test:{}", s.a.port));
    assert_eq!(
        (r.secrets[0].method.as_str(), r.secrets[0].path.as_str()),
        ("GET", "/echo")
    );
    assert_eq!((r.secrets[0].sent, r.secrets[0].refused), (1, 0));
    assert!(!format!("{r:?}").contains(A_REAL));
}

#[test]
fn basic_auth_and_url_userinfo_carry_the_placeholder_too() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    let url = format!("https://me:{}@api.test:{}/x", s.ph_a, s.a.port);
    let (out, err) = s.curl(&[&url]);
    assert_eq!(out, "ok\n", "{err}");
    let seen = s.a.seen();
    use base64::Engine;
    let want = base64::engine::general_purpose::STANDARD.encode(format!("me:{A_REAL}"));
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Basic {want}"))
    );
}

#[test]
fn the_placeholder_sent_to_a_host_it_is_not_bound_to_gets_no_value() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let hdr = format!("Authorization: Bearer {}", s.ph_a);
    // To another bound host (b is beta's): refused, nothing reaches b.
    let (out, err) = s.curl(&["-H", &hdr, &format!("https://other.test:{}/x", s.b.port)]);
    assert!(out.contains("secret alpha was not sent"), "{out}{err}");
    assert!(s.b.seen().is_empty());
    // Plain HTTP through the proxy: refused.
    let (out, _) = s.curl(&["-H", &hdr, &format!("http://unbound.test:{}/x", s.c.port)]);
    assert!(out.contains("secret alpha was not sent"), "{out}");
    // To an allowed host no secret is bound to: a plain tunnel, the
    // server sees only the placeholder.
    let (out, err) = s.curl(&["-H", &hdr, &format!("https://unbound.test:{}/x", s.c.port)]);
    assert_eq!(out, "ok\n", "{err}");
    // CONNECT to the bound host's address: refused (a plain tunnel would
    // relay its answers unscrubbed: attack atk27 F5).
    let (out, err) = s.curl(&["-H", &hdr, &format!("https://127.0.0.1:{}/x", s.a.port)]);
    assert_ne!(out, "ok\n", "{err}");
    assert!(err.contains("403"), "{out}{err}");
    let seen = format!("{}{}", s.a.seen_text(), s.c.seen_text());
    assert!(seen.contains(&s.ph_a), "{seen}");
    assert!(!seen.contains(A_REAL), "{seen}");
    assert!(!s.b.seen_text().contains(A_REAL));
    let r = s.report();
    let refused: Vec<_> = r.secrets.iter().filter(|u| u.refused > 0).collect();
    assert_eq!(refused.len(), 2, "{r:?}");
    assert!(refused.iter().all(|u| u.secret == "alpha"));
    assert!(!format!("{r:?}").contains(A_REAL));
}

#[test]
fn smuggling_past_the_matcher_gets_no_value() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    let hdr = format!("Authorization: Bearer {}", s.ph_a);
    let a = format!("https://api.test:{}/x", s.a.port);
    // Host header naming the other bound host, and a second Host header.
    for extra in [
        vec!["-H".to_string(), format!("Host: other.test:{}", s.b.port)],
        vec![
            "-H".to_string(),
            format!("X-A: 1\r\nHost: other.test:{}", s.b.port),
        ],
    ] {
        let mut args: Vec<&str> = extra.iter().map(String::as_str).collect();
        args.extend(["-H", &hdr, &a]);
        let (out, err) = s.curl(&args);
        s.no_real_value_seen_by_client(&format!("{out}{err}"));
    }
    // A redirect from the bound host to another one, followed with the
    // credential (--location-trusted): the second request is refused.
    let (out, err) = s.curl(&[
        "-L",
        "--location-trusted",
        "-H",
        &hdr,
        &format!("https://api.test:{}/redirect", s.a.port),
    ]);
    s.no_real_value_seen_by_client(&format!("{out}{err}"));
    assert!(out.contains("secret alpha was not sent"), "{out}{err}");
    assert!(!s.b.seen_text().contains(A_REAL));
    assert!(!s.c.seen_text().contains(A_REAL));
    // Only the redirecting request reached a with the value; b saw nothing.
    assert!(s.b.seen().is_empty(), "{}", s.b.seen_text());
    let _ = &s.ph_b;
}

#[test]
fn a_tls_server_name_other_than_the_tunnels_gets_nothing() {
    let s = setup();
    let p = s.proxy.as_ref().unwrap().http;
    // python's ssl lets the client send any server name.
    let script = format!(
        r#"
import socket, ssl
s = socket.create_connection(("127.0.0.1", {p}))
s.sendall(b"CONNECT api.test:{port} HTTP/1.1\r\nHost: api.test:{port}\r\n\r\n")
assert s.recv(4096).startswith(b"HTTP/1.1 200")
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    t = ctx.wrap_socket(s, server_hostname="other.test")
    t.sendall(b"GET /echo HTTP/1.1\r\nHost: api.test:{port}\r\nAuthorization: Bearer {ph}\r\n\r\n")
    print(t.recv(4096))
except Exception as e:
    print("closed", type(e).__name__)
"#,
        port = s.a.port,
        ph = s.ph_a
    );
    let o = Command::new("python3").args(["-c", &script]).output();
    let Ok(o) = o else {
        skarn_test_support::skip!("python3 is not installed");
    };
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("200 OK"), "{out}");
    assert!(s.a.seen().is_empty(), "{}", s.a.seen_text());
    let _ = Path::new("/");
}

#[test]
fn a_chunked_echo_split_across_chunks_is_scrubbed() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup();
    let hdr = format!("Authorization: Bearer {}", s.ph_a);
    let (out, err) = s.curl(&[
        "-H",
        &hdr,
        &format!("https://api.test:{}/echo-chunked", s.a.port),
    ]);
    assert_eq!(
        out,
        format!("you sent: Bearer {p} and again Bearer {p}\n", p = s.ph_a),
        "{err}"
    );
    assert!(s.a.seen_text().contains(A_REAL));
}

/// Raw request bytes through a CONNECT tunnel to `host:port`, TLS with
/// server name `sni` (certificates not checked: the attacker's client).
fn raw(s: &Setup, host: &str, port: u16, sni: &str, request: &str) -> String {
    let p = s.proxy.as_ref().unwrap().http;
    let script = format!(
        r#"
import socket, ssl, sys
s = socket.create_connection(("127.0.0.1", {p}))
s.settimeout(10)
s.sendall(b"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n")
assert s.recv(4096).startswith(b"HTTP/1.1 200")
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
out = b""
try:
    t = ctx.wrap_socket(s, server_hostname="{sni}")
    t.sendall(sys.argv[1].encode().decode("unicode_escape").encode("latin-1"))
    while True:
        b = t.recv(65536)
        if not b:
            break
        out += b
except Exception as e:
    out += ("closed " + type(e).__name__).encode()
print(out.decode("latin-1"))
"#
    );
    let o = Command::new("python3")
        .args(["-c", &script, request])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn smuggled_requests_over_the_wire_get_no_value() {
    if Command::new("python3").arg("--version").output().is_err() {
        skarn_test_support::skip!("python3 is not installed");
    }
    let s = setup();
    let (a, b, ph) = (s.a.port, s.b.port, s.ph_a.clone());
    let auth = format!("Authorization: Bearer {ph}");
    for req in [
        // Two Host headers, the second naming another host.
        format!(
            "GET /echo HTTP/1.1\\r\\nHost: api.test:{a}\\r\\nHost: other.test:{b}\\r\\n{auth}\\r\\n\\r\\n"
        ),
        // Absolute-form naming another host.
        format!(
            "GET https://other.test:{b}/echo HTTP/1.1\\r\\nHost: api.test:{a}\\r\\n{auth}\\r\\n\\r\\n"
        ),
        // A folded header line carrying the placeholder.
        format!("GET /echo HTTP/1.1\\r\\nHost: api.test:{a}\\r\\nX-A: 1\\r\\n {auth}\\r\\n\\r\\n"),
        // Length and chunked together, a second request hidden in the body.
        format!(
            "POST /x HTTP/1.1\\r\\nHost: api.test:{a}\\r\\nContent-Length: 4\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\nGET /echo HTTP/1.1\\r\\nHost: other.test:{b}\\r\\n{auth}\\r\\n\\r\\n"
        ),
        // An HTTP/2 connection preface.
        "PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n".to_string(),
    ] {
        let out = raw(&s, "api.test", a, "api.test", &req);
        assert!(!out.contains(A_REAL), "{out}");
        assert!(
            out.contains("400 Bad Request") || out.contains("closed"),
            "{req}: {out}"
        );
    }
    // After one good request on a kept-alive connection, a second one
    // naming another host is refused too.
    let two = format!(
        "GET /echo HTTP/1.1\\r\\nHost: api.test:{a}\\r\\n{auth}\\r\\n\\r\\nGET /echo HTTP/1.1\\r\\nHost: other.test:{b}\\r\\n{auth}\\r\\n\\r\\n"
    );
    let out = raw(&s, "api.test", a, "api.test", &two);
    assert!(out.contains(&format!("you sent: Bearer {ph}")), "{out}");
    assert!(out.contains("400 Bad Request"), "{out}");
    assert!(!out.contains(A_REAL));
    assert!(s.b.seen().is_empty());
    // Only the one good request reached a, with the value.
    let seen = s.a.seen();
    assert_eq!(seen.len(), 1, "{}", s.a.seen_text());
}

/// Finding F5 (atk27): a Basic header the proxy made, stored by the bound
/// host and shown later on another connection, comes back scrubbed.
#[test]
fn a_stored_basic_header_read_back_on_another_connection_is_scrubbed() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let mut s = setup();
    let stored = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let st = stored.clone();
    let test_ca = TestCa::new();
    let srv = TlsServer::start(&test_ca, &["api.test"], move |r| {
        if r.path == "/store" {
            *st.lock().unwrap() = r.header("authorization").unwrap_or("").to_string();
        }
        Response::ok(st.lock().unwrap().clone())
    });
    // A proxy bound to this server.
    let sa = spec("alpha", A_REAL, format!("api.test:{}", srv.port));
    let ph = sa.placeholder.clone();
    let ca = make_run_ca(&sa.hosts).unwrap();
    let ic = Interceptor::with_upstream_roots(&[sa], &ca, &test_ca.cert_pem).unwrap();
    let lo = vec!["127.0.0.1".parse().unwrap()];
    let allow = [
        format!("api.test:{}", srv.port),
        format!("127.0.0.1:{}", srv.port),
    ];
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let proxy = start_proxy_with(
        &allow,
        Resolver::system().with_override("api.test", lo),
        Limits::default(),
        2,
        Some(ic),
    );
    std::fs::write(&s.bundle, format!("{}{}", ca.cert_pem, test_ca.cert_pem)).unwrap();
    let old = s.proxy.replace(proxy);
    drop(old.map(|p| p.report()));
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("u:{ph}"));
    let hdr = format!("Authorization: Basic {basic}");
    let (_, err) = s.curl(&["-H", &hdr, &format!("https://api.test:{}/store", srv.port)]);
    assert!(
        stored
            .lock()
            .unwrap()
            .contains(&base64::engine::general_purpose::STANDARD.encode(format!("u:{A_REAL}"))),
        "{err}"
    );
    let (out, err) = s.curl(&[&format!("https://api.test:{}/fetch", srv.port)]);
    assert_eq!(out, format!("Basic {basic}"), "{err}");
}
