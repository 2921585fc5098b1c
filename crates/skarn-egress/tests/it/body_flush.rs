//! Issue 27 (s27d): a response body through the TLS-terminating path
//! reaches a keep-alive client that reads slowly and waits for the
//! body's end without closing. The proxy's TLS stream keeps what the
//! socket did not take until its next write or a flush; without the
//! flush at a body's end (`intercept/body.rs`, s27a) the tail stayed in
//! the proxy and the client waited until its own time limit (found by
//! the issue-27 bench). Checked from the client's side: how much of the
//! `Content-Length` it got within 20 s.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use skarn_egress::secrets::SecretSpec;
use skarn_egress::{Interceptor, Limits, Listeners, Proxy, Resolver, Rules, make_run_ca};
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};
use zeroize::Zeroizing;

const REAL: &str = "flush-REAL-value-4Vq8Nz2Lm7Xw";
/// Many times what the small socket buffers on both sides hold: the
/// proxy's last writes find the socket full.
const SIZE: usize = 2 << 20;

/// The proxy on a listener whose accepted sockets keep a small send
/// buffer (inherited from the listener: no autotuning), so the socket is
/// full whenever the slow client lags and the TLS stream keeps the rest.
fn small_buffer_proxy(allow: &[&str], resolver: Resolver, ic: Interceptor) -> u16 {
    use rustix::net::{AddressFamily, SocketType, sockopt};
    let fd = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    sockopt::set_socket_send_buffer_size(&fd, 4096).unwrap();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    rustix::net::bind(&fd, &addr).unwrap();
    rustix::net::listen(&fd, 16).unwrap();
    let l = std::net::TcpListener::from(fd);
    let port = l.local_addr().unwrap().port();
    let rules = Rules::parse(allow, &[]).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let px = Arc::new(
            Proxy::new(rules, resolver, Limits::default())
                .with_log(None)
                .with_secrets(ic),
        );
        let _ = rt.block_on(px.serve(
            Listeners {
                http: Some(l),
                socks: None,
            },
            std::future::pending(),
        ));
    });
    port
}

/// A TCP connection to `port` whose receive buffer stays small (set
/// before connecting: no autotuning).
fn small_buffer_connect(port: u16) -> TcpStream {
    use rustix::net::{AddressFamily, SocketType, sockopt};
    let fd = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    sockopt::set_socket_recv_buffer_size(&fd, 8192).unwrap();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    rustix::net::connect(&fd, &addr).unwrap();
    TcpStream::from(fd)
}

#[test]
fn a_slow_keep_alive_client_gets_the_whole_body() {
    let test_ca = TestCa::new();
    let body: Vec<u8> = b"0123456789 abcdef ghij\n"
        .iter()
        .cycle()
        .take(SIZE)
        .copied()
        .collect();
    let a = TlsServer::start(&test_ca, &["api.test"], move |_| Response::ok(body.clone()));
    let spec = SecretSpec {
        name: "fl".into(),
        env: "FL".into(),
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
    let proxy = small_buffer_proxy(&allow, resolver, ic);

    let mut tcp = small_buffer_connect(proxy);
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        tcp,
        "CONNECT api.test:{0} HTTP/1.1\r\nHost: api.test:{0}\r\n\r\n",
        a.port
    )
    .unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(tcp.read(&mut b).unwrap(), 1);
        got.push(b[0]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca.cert_pem.as_bytes()) {
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
    // Keep-alive: the client does not close, it waits for the body.
    write!(
        tls,
        "GET /big HTTP/1.1\r\nHost: api.test:{}\r\nAuthorization: Bearer {ph}\r\n\r\n",
        a.port
    )
    .unwrap();
    tls.flush().unwrap();
    let mut all = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    let want = loop {
        let text = String::from_utf8_lossy(&all);
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .map(|v| v.trim().parse::<usize>().unwrap());
            break end + 4 + len.unwrap();
        }
        let n = tls.read(&mut buf).unwrap();
        assert!(n > 0);
        all.extend_from_slice(&buf[..n]);
    };
    // Slowly (up to 4 MB/s: the proxy is often faster), until the whole body or
    // 20 s idle.
    while all.len() < want {
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
        std::thread::sleep(Duration::from_millis(4));
    }
    // The host got the value (the TLS-terminating path was taken).
    let seen = a.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    assert_eq!(all.len(), want, "the body's tail never came");
}
