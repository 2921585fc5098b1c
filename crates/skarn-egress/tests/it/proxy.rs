//! The proxy in-process, against a local upstream: resolver overrides
//! (an allowed name pointing at a private address), explicit address
//! grants, the byte bound, and malformed input.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::common::{Running, start_proxy};
use skarn_egress::{Limits, Listeners, Proxy, Resolver, Rules};

/// Upstream: counts connections, answers with `size` bytes.
fn upstream(size: usize) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            h.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut b = [0u8; 1024];
                let _ = s.read(&mut b);
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n");
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(&vec![b'x'; size]);
            });
        }
    });
    (port, hits)
}

fn start(allow: &[&str], resolver: Resolver, limits: Limits) -> Running {
    start_proxy(allow, resolver, limits, 0)
}

fn get(proxy: u16, url: &str) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    write!(s, "GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

#[test]
fn an_allowed_name_pointing_at_private_addresses_is_refused() {
    let (port, hits) = upstream(5);
    let r = Resolver::system()
        .with_override("svc.test", vec!["127.0.0.1".parse().unwrap()])
        .with_override("lan.test", vec!["10.0.0.7".parse().unwrap()]);
    let p = start(
        &[&format!("svc.test:{port}"), "lan.test:*"],
        r,
        Limits::default(),
    );
    let a = get(p.http, &format!("http://svc.test:{port}/"));
    assert!(
        a.starts_with(b"HTTP/1.1 403"),
        "{}",
        String::from_utf8_lossy(&a)
    );
    let b = get(p.http, "http://lan.test:9/");
    assert!(b.starts_with(b"HTTP/1.1 403"));
    let rep = p.report();
    assert_eq!(rep.denied.len(), 2, "{rep:?}");
    assert!(rep.denied[0].reason.contains("loopback") || rep.denied[1].reason.contains("loopback"));
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[test]
fn an_explicit_address_pattern_lets_the_name_through() {
    let (port, hits) = upstream(5);
    let r = Resolver::system().with_override("svc.test", vec!["127.0.0.1".parse().unwrap()]);
    let p = start(
        &[&format!("svc.test:{port}"), &format!("127.0.0.1:{port}")],
        r,
        Limits::default(),
    );
    let a = get(p.http, &format!("http://svc.test:{port}/"));
    assert!(
        a.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&a)
    );
    let rep = p.report();
    assert_eq!(rep.allowed[0].host, format!("svc.test:{port}"));
    assert_eq!(rep.allowed[0].connections, 1);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn the_byte_bound_ends_connections() {
    let (port, _) = upstream(4 << 20);
    let limits = Limits {
        max_total_bytes: Some(256 * 1024),
        ..Limits::default()
    };
    let p = start(&[&format!("127.0.0.1:{port}")], Resolver::system(), limits);
    let a = get(p.http, &format!("http://127.0.0.1:{port}/"));
    assert!(a.len() < 2 << 20, "{} bytes passed", a.len());
    assert!(p.report().byte_limit_hit);
}

#[test]
fn malformed_input_gets_an_answer_or_a_close_never_a_hang() {
    let p = start(&["example.invalid"], Resolver::system(), Limits::default());
    for junk in [
        &b"\x00\x01\x02garbage\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET https://example.invalid/ HTTP/1.1\r\n\r\n",
        b"CONNECT nohostport HTTP/1.1\r\n\r\n",
        b"CONNECT [::1 HTTP/1.1\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", p.http)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(junk).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        assert!(
            out.starts_with(b"HTTP/1.1 4"),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
    for junk in [
        &b"\x04\x01\x00\x50"[..],
        b"\x05\x00",
        b"\x05\x01\x00\x05\x02\x00\x09",
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", p.socks)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(junk).unwrap();
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        assert!(out.len() <= 12);
    }
    // SOCKS5 CONNECT to a name not in the list: rule-set refusal (0x02).
    let mut s = TcpStream::connect(("127.0.0.1", p.socks)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let name = b"other.invalid";
    let mut req = vec![5, 1, 0, 5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name);
    req.extend_from_slice(&443u16.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut b = [0u8; 12];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b[..2], &[5, 0]);
    assert_eq!(&b[2..4], &[5, 2]);
    let rep = p.report();
    assert_eq!(rep.denied.len(), 1, "{rep:?}");
}

#[test]
fn hostile_host_names_are_logged_as_one_printable_line() {
    let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let l2 = lines.clone();
    let rules = Rules::parse(&["example.invalid"], &[]).unwrap();
    let h = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = h.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let t = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let log: skarn_egress::DenialLog =
            Arc::new(move |l: &str| l2.lock().unwrap().push(l.to_string()));
        let p =
            Arc::new(Proxy::new(rules, Resolver::system(), Limits::default()).with_log(Some(log)));
        let l = Listeners {
            http: None,
            socks: Some(h),
        };
        rt.block_on(p.serve(l, async {
            let _ = rx.await;
        }))
        .unwrap()
    });
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // SOCKS5 carries any bytes as a name: escape sequences, RTL override.
    let name = b"evil\x1b[2J\n\xe2\x80\xaename.test";
    let mut req = vec![5, 1, 0, 5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name);
    req.extend_from_slice(&443u16.to_be_bytes());
    s.write_all(&req).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let _ = tx.send(());
    t.join().unwrap();
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0]
            .chars()
            .all(|c| c.is_ascii() && !c.is_ascii_control()),
        "{:?}",
        lines[0]
    );
}
