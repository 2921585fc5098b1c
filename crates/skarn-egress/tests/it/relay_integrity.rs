//! What the relay carries arrives unchanged, in order, in both directions,
//! and the end of one direction reaches the other side (the zero-copy path
//! on Linux moves bytes through a pipe, so these check it byte for byte).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

use super::common::start_proxy;
use skarn_egress::{Limits, Resolver};

/// Deterministic bytes that are not one repeated value.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Upstream: reads everything until the client's end, then answers with
/// the bytes it read, reversed, and closes.
fn reversing_echo() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let _ = s.read_to_end(&mut got);
                got.reverse();
                let _ = s.write_all(&got);
            });
        }
    });
    port
}

#[test]
fn many_megabytes_cross_unchanged_both_ways_with_half_close() {
    let port = reversing_echo();
    let p = start_proxy(
        &[&format!("127.0.0.1:{port}")],
        Resolver::system(),
        Limits::default(),
        2,
    );
    let sent = pattern(24 << 20, 7);
    let mut s = TcpStream::connect(("127.0.0.1", p.http)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = s.try_clone().unwrap();
    let back = std::thread::spawn(move || {
        let mut v = Vec::new();
        reader.read_to_end(&mut v).unwrap();
        v
    });
    s.write_all(&sent).unwrap();
    // The upstream answers only after it saw the end of the request side.
    s.shutdown(Shutdown::Write).unwrap();
    let mut got = back.join().unwrap();
    // The proxy's answer to CONNECT comes first.
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        &got[..got.len().min(64)]
    );
    assert!(got.len() > sent.len(), "{} bytes came back", got.len());
    let tail = got.split_off(got.len() - sent.len());
    let mut want = sent.clone();
    want.reverse();
    assert!(tail == want, "the bytes changed on the way");
    let r = p.report();
    let (o, i): (u64, u64) = r
        .allowed
        .iter()
        .fold((0, 0), |(o, i), a| (o + a.bytes_out, i + a.bytes_in));
    assert_eq!((o, i), (sent.len() as u64, sent.len() as u64), "{r:?}");
}

#[test]
fn parallel_tunnels_keep_their_own_bytes() {
    let port = reversing_echo();
    let p = start_proxy(
        &[&format!("127.0.0.1:{port}")],
        Resolver::system(),
        Limits::default(),
        2,
    );
    std::thread::scope(|sc| {
        for k in 0..16u32 {
            let proxy = p.http;
            sc.spawn(move || {
                let sent = pattern(1 << 20, 100 + k);
                let mut s = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                let mut r = s.try_clone().unwrap();
                let back = std::thread::spawn(move || {
                    let mut v = Vec::new();
                    r.read_to_end(&mut v).unwrap();
                    v
                });
                s.write_all(&sent).unwrap();
                s.shutdown(Shutdown::Write).unwrap();
                let got = back.join().unwrap();
                let mut want = sent;
                want.reverse();
                assert!(got.ends_with(&want), "tunnel {k}: bytes changed or mixed");
            });
        }
    });
}
