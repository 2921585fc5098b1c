//! The proxy's bounds, checked from outside: a sink upstream counts the
//! bytes it really received, and the clients see what the proxy answered.
//! `max_total_bytes` is one total for the whole proxy (both directions,
//! all connections, bytes sent with the request head included);
//! `max_connections` counts HTTP and SOCKS5 connections together.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

use super::common::{Running, start_proxy};
use skarn_egress::{EgressReport, Limits, Resolver};

use skarn_test_support::CountingSink as Sink;

fn start(allow: &[&str], limits: Limits) -> Running {
    start_proxy(allow, Resolver::system(), limits, 2)
}

fn bytes_limit(max: u64) -> Limits {
    Limits {
        max_total_bytes: Some(max),
        ..Limits::default()
    }
}

/// `CONNECT` with `extra` in the same write as the head, then `more`
/// bytes; returns what the proxy answered (write errors after a cut are
/// expected and ignored).
fn tunnel(proxy: u16, port: u16, extra: usize, more: usize) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut first = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n").into_bytes();
    first.extend(std::iter::repeat_n(b'a', extra));
    let _ = s.write_all(&first);
    let _ = s.write_all(&vec![b'b'; more]);
    let _ = s.shutdown(Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn out_total(r: &EgressReport) -> u64 {
    r.allowed.iter().map(|a| a.bytes_out + a.bytes_in).sum()
}

#[test]
fn bytes_sent_with_the_connect_head_are_counted() {
    let sink = Sink::start();
    let p = start(&[&format!("127.0.0.1:{}", sink.port)], bytes_limit(1000));
    // 3000 bytes in the same packet as the head, nothing after.
    let a = tunnel(p.http, sink.port, 3000, 0);
    assert!(
        a.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&a)
    );
    assert_eq!(sink.settled_bytes(1), 1000);
    let r = p.report();
    assert_eq!(out_total(&r), 1000, "{r:?}");
    assert!(r.byte_limit_hit);
}

#[test]
fn the_byte_bound_is_one_total_across_connections() {
    let sink = Sink::start();
    let max = 300_000;
    let p = start(&[&format!("127.0.0.1:{}", sink.port)], bytes_limit(max));
    // 40 connections at once, each 2 KiB with the head and 64 KiB after:
    // 2.6 MB offered, 300 kB allowed.
    std::thread::scope(|sc| {
        for _ in 0..40 {
            sc.spawn(|| tunnel(p.http, sink.port, 2048, 64 * 1024));
        }
    });
    // Once spent, new connections are refused with a reason, over both
    // protocols.
    let late = tunnel(p.http, sink.port, 10, 10);
    let late = String::from_utf8_lossy(&late);
    assert!(late.starts_with("HTTP/1.1 503"), "{late}");
    assert!(late.contains("byte limit"), "{late}");
    let mut s = TcpStream::connect(("127.0.0.1", p.socks)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = vec![5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1];
    req.extend_from_slice(&sink.port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut b = [0u8; 12];
    s.read_exact(&mut b).unwrap();
    assert_eq!(
        &b[..4],
        &[5, 0, 5, 2],
        "SOCKS5: not allowed by the rule set"
    );
    let r = p.report();
    // The late connections were refused, so what upstream received is the
    // total of the 40 (and proves nothing slipped past the bound).
    let carried: u64 = r.allowed.iter().map(|a| a.connections).sum();
    assert_eq!(sink.settled_bytes(carried), max);
    assert_eq!(out_total(&r), max, "{r:?}");
    assert!(r.byte_limit_hit);
    let refused = r
        .denied
        .iter()
        .find(|d| d.reason.contains("byte limit"))
        .unwrap_or_else(|| panic!("{r:?}"));
    // Every connection was either carried or refused with that reason
    // (40 at once, then one HTTP and one SOCKS5).
    assert_eq!(refused.count + carried, 42, "{r:?}");
}

#[test]
fn plain_http_responses_stop_at_the_bound() {
    // Upstream answering any request with 4 MiB.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut b = [0u8; 1024];
                let _ = s.read(&mut b);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n");
                let _ = s.write_all(&vec![b'x'; 4 << 20]);
            });
        }
    });
    let max = 256 * 1024;
    let p = start(&[&format!("127.0.0.1:{port}")], bytes_limit(max));
    let mut s = TcpStream::connect(("127.0.0.1", p.http)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    let r = p.report();
    let sent: u64 = r.allowed.iter().map(|a| a.bytes_out).sum();
    assert_eq!(got.len() as u64 + sent, max, "{r:?}");
    assert_eq!(out_total(&r), max);
    assert!(r.byte_limit_hit);
}

fn socks_connect(proxy: u16, port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = vec![5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1];
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut b = [0u8; 12];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b[..4], &[5, 0, 5, 0]);
    s
}

fn http_connect(proxy: u16, port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").unwrap();
    let mut b = vec![0u8; 39];
    s.read_exact(&mut b).unwrap();
    assert!(
        b.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&b)
    );
    s
}

#[test]
fn one_connection_slot_serves_either_listener() {
    let sink = Sink::start();
    let limits = Limits {
        max_connections: 1,
        ..Limits::default()
    };
    let p = start(&[&format!("127.0.0.1:{}", sink.port)], limits);
    // One after the other, over both protocols: neither listener may keep
    // the only slot while it waits.
    for _ in 0..3 {
        for socks in [true, false] {
            let mut s = if socks {
                socks_connect(p.socks, sink.port)
            } else {
                http_connect(p.http, sink.port)
            };
            s.write_all(b"0123456789").unwrap();
            s.shutdown(Shutdown::Write).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        }
    }
    assert_eq!(sink.settled_bytes(6), 60);
    assert_eq!(sink.accepted(), 6);
    let r = p.report();
    assert_eq!(r.allowed[0].connections, 6);
}

#[test]
fn max_connections_are_all_usable_at_once() {
    let sink = Sink::start();
    let limits = Limits {
        max_connections: 3,
        ..Limits::default()
    };
    let p = start(&[&format!("127.0.0.1:{}", sink.port)], limits);
    // Three tunnels open together, all on the HTTP listener.
    let mut open: Vec<TcpStream> = (0..3).map(|_| http_connect(p.http, sink.port)).collect();
    for s in &mut open {
        s.write_all(b"x").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
    }
    for s in &mut open {
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    }
    assert_eq!(sink.settled_bytes(3), 3);
    assert_eq!(p.report().allowed[0].connections, 3);
}
