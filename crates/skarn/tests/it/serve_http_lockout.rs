//! `skarn serve --http` at its DEFAULT settings (10 s header timeout, 256
//! connection slots, 120 s idle timeout): clients without the token cannot
//! lock an authorized client out, neither by holding half-sent requests nor
//! by asking again and again on kept-alive connections. Judged from
//! outside, without timing: the authorized client is answered while the
//! attackers' connections are still well inside their header timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::serve_http::{http_gateway, post};
use skarn_test_support::TempDir;

/// Connections that the server has not closed (a read would block).
fn still_open(conns: &[TcpStream]) -> usize {
    conns
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut b = [0u8; 1];
            let open = matches!(
                (&**s).read(&mut b),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
            );
            s.set_nonblocking(false).unwrap();
            open
        })
        .count()
}

fn nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one struct we own.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    lim.rlim_cur
}

#[test]
fn unauthenticated_clients_cannot_lock_out_an_authorized_one_at_the_defaults() {
    // The gateway's slots are min(256, half its descriptor limit); this
    // test holds 300 half-open connections and needs the default 256.
    if nofile() < 1024 {
        eprintln!(
            "SKIPPED: RLIMIT_NOFILE {} < 1024, too low for 300 connections",
            nofile()
        );
        return;
    }
    let dir = TempDir::new("serve_http_lockout");
    let (_p, url, _) = http_gateway(dir.path(), Some("tok"));
    let host = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap()
        .0
        .to_owned();

    // (a) Kept-alive connections answered 401 are closed by the server: a
    // client without the token cannot hold its slot by asking again.
    let mut spam = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(&host).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        assert!(status.contains(" 401 "), "{status}");
        // The whole answer, then end of stream (not a read timeout: the
        // server would keep a kept-alive connection for its 120 s idle
        // timeout).
        let mut rest = [0u8; 4096];
        loop {
            match r.read(&mut rest) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) => panic!("the server kept a connection it answered 401 open: {e}"),
            }
        }
        spam.push(s);
    }

    // (b) 300 connections without the token send half a request and wait:
    // more than every slot.
    let mut held = Vec::new();
    for _ in 0..300 {
        let mut s = TcpStream::connect(&host).unwrap();
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {host}\r\n").unwrap();
        held.push(s);
    }
    // The authorized client is answered...
    assert_eq!(post(&url, Some("tok")), 200);
    // ...while the half-open connections were still inside their header
    // timeout: only the few closed to make room are gone (had the client
    // waited for the header timeout, every one held by then would be).
    let open = still_open(&held);
    assert!(
        open >= 200,
        "only {open} of 300 half-open connections still open: the authorized client waited for them to time out"
    );
    drop(held);
}
