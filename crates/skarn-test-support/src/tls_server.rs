//! An HTTPS/1.1 server on 127.0.0.1 with a CA of its own (never a remote
//! host): keep-alive, `Content-Length` and chunked request bodies, answers
//! from a closure, every request recorded (head and body) so a test can
//! check from outside what reached the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method.
    pub method: String,
    /// Request target.
    pub path: String,
    /// Headers (name lower-cased, value).
    pub headers: Vec<(String, String)>,
    /// The whole head as received.
    pub head: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: status line tail (`200 OK`), extra headers, body.
pub struct Response {
    /// `200 OK`, `401 Unauthorized`, ...
    pub status: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body (sent with Content-Length).
    pub body: Vec<u8>,
}

impl Response {
    /// `200 OK` with `body`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: "200 OK".into(),
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// What the server sends back: a response it frames, or bytes as they
/// are (then it closes the connection).
enum Answer {
    /// Written by the closure, as it goes (a streamed response), then the
    /// connection is closed.
    Stream(Writer),
    Framed(Response),
    Raw(Vec<u8>),
}

type Handler = Arc<dyn Fn(&Request) -> Answer + Send + Sync>;

/// Writes a whole streamed response.
type Writer = Box<dyn FnOnce(&mut dyn Write)>;

/// A test CA.
pub struct TestCa {
    /// Its certificate, PEM.
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}

impl TestCa {
    /// A fresh CA.
    pub fn new() -> TestCa {
        let key = KeyPair::generate().expect("test TLS server");
        let mut p = CertificateParams::new(Vec::<String>::new()).expect("test TLS server");
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "skarn test CA");
        let cert = p.self_signed(&key).expect("test TLS server");
        TestCa {
            cert_pem: cert.pem(),
            issuer: Issuer::new(p, key),
        }
    }

    fn leaf(&self, names: &[&str]) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().expect("test TLS server");
        let p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .expect("test TLS server");
        let cert = p.signed_by(&key, &self.issuer).expect("test TLS server");
        (
            vec![cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
    }
}

/// A running server (runs until the test process ends).
pub struct TlsServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl TlsServer {
    /// Serve certificates for `names` (host names or addresses) signed by
    /// `ca`, answering with `handler`.
    pub fn start(
        ca: &TestCa,
        names: &[&str],
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> TlsServer {
        TlsServer::start_with(ca, names, Arc::new(move |r| Answer::Framed(handler(r))))
    }

    /// As [`TlsServer::start`], answering each request with the bytes
    /// `handler` returns, written as they are (a `101` and WebSocket
    /// frames, a malformed response), then closing the connection.
    pub fn start_raw(
        ca: &TestCa,
        names: &[&str],
        handler: impl Fn(&Request) -> Vec<u8> + Send + Sync + 'static,
    ) -> TlsServer {
        TlsServer::start_with(ca, names, Arc::new(move |r| Answer::Raw(handler(r))))
    }

    /// As [`TlsServer::start`], `handler` writing the whole response
    /// (head included) itself, piece by piece, flushed as it writes (a
    /// stream with pauses); the connection is closed after it.
    pub fn start_streaming(
        ca: &TestCa,
        names: &[&str],
        handler: impl Fn(&Request, &mut dyn Write) + Send + Sync + 'static,
    ) -> TlsServer {
        let handler = Arc::new(handler);
        TlsServer::start_with(
            ca,
            names,
            Arc::new(move |r| {
                let (h, r) = (handler.clone(), r.clone());
                Answer::Stream(Box::new(move |w| h(&r, w)))
            }),
        )
    }

    /// As [`TlsServer::start`], listening on `[::1]` at the same port as
    /// well (another address of the same host); `None` where IPv6
    /// loopback is not available.
    pub fn start_dual(
        ca: &TestCa,
        names: &[&str],
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Option<TlsServer> {
        let handler: Handler = Arc::new(move |r| Answer::Framed(handler(r)));
        for _ in 0..20 {
            let v4 = TcpListener::bind("127.0.0.1:0").ok()?;
            let port = v4.local_addr().ok()?.port();
            let Ok(v6) = TcpListener::bind(("::1", port)) else {
                if TcpListener::bind("[::1]:0").is_err() {
                    return None;
                }
                continue;
            };
            let seen = Arc::new(Mutex::new(Vec::new()));
            let cfg = server_config(ca, names);
            for l in [v4, v6] {
                accept_in_thread(l, cfg.clone(), seen.clone(), handler.clone());
            }
            return Some(TlsServer { port, seen });
        }
        None
    }

    fn start_with(ca: &TestCa, names: &[&str], handler: Handler) -> TlsServer {
        let cfg = server_config(ca, names);
        let l = TcpListener::bind("127.0.0.1:0").expect("test TLS server");
        let port = l.local_addr().expect("test TLS server").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        accept_in_thread(l, cfg, seen.clone(), handler);
        TlsServer { port, seen }
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().expect("test TLS server").clone()
    }

    /// Forget the requests received so far (a benchmark's large bodies).
    pub fn clear(&self) {
        self.seen.lock().expect("test TLS server").clear();
    }

    /// Everything received so far as one text (heads and bodies).
    pub fn seen_text(&self) -> String {
        self.seen()
            .iter()
            .map(|r| format!("{}{}", r.head, String::from_utf8_lossy(&r.body)))
            .collect()
    }
}

fn server_config(ca: &TestCa, names: &[&str]) -> Arc<rustls::ServerConfig> {
    let (chain, key) = ca.leaf(names);
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("test TLS server")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("test TLS server");
    Arc::new(cfg)
}

fn accept_in_thread(
    l: TcpListener,
    cfg: Arc<rustls::ServerConfig>,
    seen: Arc<Mutex<Vec<Request>>>,
    handler: Handler,
) {
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            let (cfg, seen, handler) = (cfg.clone(), seen.clone(), handler.clone());
            std::thread::spawn(move || {
                let _ = c.set_nodelay(true);
                let Ok(conn) = rustls::ServerConnection::new(cfg) else {
                    return;
                };
                let tls = rustls::StreamOwned::new(conn, c);
                serve(tls, &seen, &handler);
            });
        }
    });
}

fn serve<S: Read + Write>(s: S, seen: &Mutex<Vec<Request>>, handler: &Handler) {
    let mut r = BufReader::new(s);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match r.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            head.push_str(&line);
            if line == "\r\n" || line == "\n" {
                break;
            }
        }
        let mut lines = head.lines();
        let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
        if first.len() < 3 {
            return;
        }
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let mut body = Vec::new();
        if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut l = String::new();
                if r.read_line(&mut l).unwrap_or(0) == 0 {
                    return;
                }
                let n = usize::from_str_radix(l.trim().split(';').next().unwrap_or(""), 16)
                    .unwrap_or(0);
                let mut chunk = vec![0; n + 2];
                if r.read_exact(&mut chunk).is_err() {
                    return;
                }
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            body = vec![0; n];
            if r.read_exact(&mut body).is_err() {
                return;
            }
        }
        let req = Request {
            method: first[0].to_string(),
            path: first[1].to_string(),
            headers: headers.clone(),
            head: head.clone(),
            body,
        };
        seen.lock().expect("test TLS server").push(req.clone());
        let resp = match handler(&req) {
            Answer::Framed(r) => r,
            Answer::Stream(f) => {
                f(r.get_mut());
                let _ = r.get_mut().flush();
                return;
            }
            Answer::Raw(bytes) => {
                let w = r.get_mut();
                let _ = w.write_all(&bytes);
                let _ = w.flush();
                return;
            }
        };
        // A handler asking for `Transfer-Encoding: chunked` gets its body
        // in 5-byte chunks (so a value is split across them).
        let chunked = resp
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
        let mut out = format!("HTTP/1.1 {}\r\n", resp.status);
        if !chunked {
            out.push_str(&format!("Content-Length: {}\r\n", resp.body.len()));
        }
        for (n, v) in &resp.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str("\r\n");
        let mut body = Vec::new();
        if chunked {
            for c in resp.body.chunks(5) {
                body.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                body.extend_from_slice(c);
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"0\r\n\r\n");
        } else {
            body = resp.body;
        }
        // One write: head and body leave together (no Nagle wait between).
        let mut all = out.into_bytes();
        all.extend_from_slice(&body);
        let w = r.get_mut();
        if w.write_all(&all).is_err() || w.flush().is_err() {
            return;
        }
        if get("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            return;
        }
    }
}
