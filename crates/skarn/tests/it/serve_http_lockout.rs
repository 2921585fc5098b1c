//! `skarn serve --http` at its DEFAULT settings (10 s header timeout, 256
//! connection slots, 120 s idle timeout): clients without the token cannot
//! lock an authorized client out, neither by holding half-sent requests nor
//! by asking again and again on kept-alive connections, nor by sending a
//! request head and holding its body back. Judged from outside.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::serve_http::{http_gateway, post};
use skarn_test_support::TempDir;

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
    // test holds 600 connections and needs the default 256.
    if nofile() < 1024 {
        skarn_test_support::skip!(
            "RLIMIT_NOFILE {} < 1024, too low for 300 connections",
            nofile()
        );
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

    // (a) Every slot and more taken by clients without the token: 300
    // that ask again and again on kept-alive connections (each request
    // used to reset their idle timer, holding the slot for ever), and 300
    // that send half a request head and wait.
    let stop = Arc::new(AtomicBool::new(false));
    let mut conns: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(&host).unwrap())
        .collect();
    let (first_round, first_done) = std::sync::mpsc::channel();
    let spammer = {
        let (host, stop) = (host.clone(), stop.clone());
        std::thread::spawn(move || {
            let ask =
                format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}");
            for c in &conns {
                c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            }
            while !stop.load(Ordering::Relaxed) {
                // A round takes well under the 10 s a kept-alive
                // connection may wait for its next request.
                conns.retain_mut(|c| c.write_all(ask.as_bytes()).is_ok());
                conns.retain_mut(|c| {
                    let mut b = [0u8; 4096];
                    !matches!(c.read(&mut b), Ok(0))
                });
                let _ = first_round.send(());
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    first_done.recv().unwrap();
    let mut held = Vec::new();
    let addr: std::net::SocketAddr = host.parse().unwrap();
    for _ in 0..300 {
        // A gateway that no longer accepts leaves connections unanswered.
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(60))
            .expect("the gateway accepts no more connections");
        write!(s, "POST /mcp HTTP/1.1\r\nHost: {host}\r\n").unwrap();
        held.push(s);
    }
    // The authorized client is answered (post() gives up after 30 s).
    assert_eq!(post(&url, Some("tok")), 200);
    stop.store(true, Ordering::Relaxed);
    spammer.join().unwrap();
    drop(held);

    // (b) A connection answered 401 is closed by the server: a client
    // without the token cannot hold its slot by asking again and again on
    // it (each request used to reset the idle timer). The second request
    // on the same connection gets no answer, only the end of the stream.
    let request = format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}");
    for _ in 0..20 {
        let mut s = TcpStream::connect(&host).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut length = 0usize;
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        assert!(status.contains(" 401 "), "{status}");
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        r.read_exact(&mut body).unwrap();
        // Asking again on the same connection: written or refused, it must
        // not be answered.
        let _ = s.write_all(request.as_bytes());
        let mut rest = Vec::new();
        let _ = r.read_to_end(&mut rest);
        let rest = String::from_utf8_lossy(&rest);
        assert!(
            !rest.contains("HTTP/1.1"),
            "a second request on a connection answered 401 was served: {rest}"
        );
    }
}
