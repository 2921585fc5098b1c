//! `skarn run --net allow:...`: every denial path, each checked from
//! outside (the local server's request counter stays at zero) and by the
//! `skarn: net: denied` line and the report.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use crate::static_http::Server;
use skarn_test_support::TempDir;

const PY: &str = "/usr/bin/python3";

fn sh(ws: &Path, home: &Path, flags: &[&str], script: &str) -> Output {
    run_in(ws, home, flags, &["sh", "-c", script])
}

/// curl through the HTTP proxy (NO_PROXY cleared), printing the status
/// (`CODE/CONNECT-CODE`).
fn curl(args: &str) -> String {
    format!(
        "curl -sS --noproxy '' -o /dev/null -w '%{{http_code}}/%{{http_connect}}\\n' {args}; true"
    )
}

fn denied_json(o: &Output) -> serde_json::Value {
    let e = err(o);
    let line = e.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line).expect("report JSON");
    v["egress"]["denied"].clone()
}

#[test]
fn a_name_not_in_the_list_is_refused_and_counted() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-d1");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let o = sh(
        &ws,
        &home,
        &["--net", &net, "--json"],
        &curl("http://not-listed.invalid/ -p -x http://127.0.0.1:3128"),
    );
    assert!(out(&o).contains("403"), "{}", out(&o));
    assert!(
        err(&o).contains("skarn: net: denied not-listed.invalid:80 (not in the allow list)"),
        "{}",
        err(&o)
    );
    let d = denied_json(&o);
    assert_eq!(d[0]["host"], "not-listed.invalid:80");
    assert_eq!(d[0]["count"], 1);
    assert_eq!(srv.hits(), 0);
}

#[test]
fn an_allowed_name_resolving_to_loopback_is_refused() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-d2");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:localhost:{}", srv.port);
    let u = format!("http://localhost:{}/", srv.port);
    let script = format!(
        "{} ; {}",
        curl(&u),
        curl(&format!("-x socks5h://127.0.0.1:1080 {u}"))
    );
    let o = sh(&ws, &home, &["--net", &net], &script);
    assert!(out(&o).contains("403"), "{}", out(&o));
    assert!(err(&o).contains("(loopback)"), "{}", err(&o));
    assert_eq!(err(&o).matches("skarn: net: denied localhost").count(), 2);
    assert_eq!(srv.hits(), 0);
}

#[test]
fn wrong_port_host_mismatch_and_deny_list_are_refused() {
    let srv = Server::start(None);
    let other = Server::start(None);
    let t = TempDir::new("eg-d3");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = [
        // CONNECT to a port the pattern does not allow.
        curl(&format!("-p http://127.0.0.1:{}/", other.port)),
        // Plain HTTP whose Host names another host than the target.
        curl(&format!(
            "-H 'Host: 127.0.0.1:{}' http://127.0.0.1:{}/",
            other.port, srv.port
        )),
    ]
    .join(";");
    let o = sh(&ws, &home, &["--net", &net], &script);
    assert_eq!(out(&o).matches("403").count(), 2, "{}", out(&o));
    assert!(err(&o).contains("not allowed for this host"), "{}", err(&o));
    assert!(
        err(&o).contains("does not match the request target"),
        "{}",
        err(&o)
    );
    assert_eq!((srv.hits(), other.hits()), (0, 0));
    // Deny wins over allow.
    let o = sh(
        &ws,
        &home,
        &["--net", &net, "--deny-host", "127.0.0.0/8"],
        &curl(&format!("http://127.0.0.1:{}/", srv.port)),
    );
    assert!(out(&o).contains("403"), "{}", out(&o));
    assert!(err(&o).contains("in the deny list"), "{}", err(&o));
    assert_eq!(srv.hits(), 0);
}

#[test]
fn socks_to_unlisted_private_and_ipv6_literals_are_refused() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-d4");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = "allow:example.invalid";
    let p = srv.port;
    let script = [
        curl(&format!(
            "-x socks5h://127.0.0.1:1080 http://127.0.0.1:{p}/"
        )),
        curl(&format!("-x socks5://127.0.0.1:1080 http://127.0.0.1:{p}/")),
        curl(&format!("-p 'http://[::ffff:127.0.0.1]:{p}/'")),
        curl(&format!("'http://[::1]:{p}/'")),
        curl(&format!("'http://[::ffff:7f00:1]:{p}/'")),
        curl("-p http://169.254.169.254/"),
    ]
    .join(";");
    let o = sh(&ws, &home, &["--net", net, "--json"], &script);
    let e = err(&o);
    assert_eq!(e.matches("skarn: net: denied").count(), 6, "{e}");
    assert!(e.contains(&format!("denied [::1]:{p}")), "{e}");
    assert_eq!(srv.hits(), 0);
}

#[test]
fn direct_tcp_udp_and_dns_from_inside_reach_nothing() {
    let srv = Server::start(None);
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let uport = udp.local_addr().unwrap().port();
    let t = TempDir::new("eg-d5");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        r#"{PY} - <<'E'
import socket
def tcp(h, p):
    try:
        socket.create_connection((h, p), timeout=3); return "open"
    except OSError as e: return "closed"
print("tcp-loopback", tcp("127.0.0.1", {p}))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try: s.sendto(b"x", ("127.0.0.1", {uport})); print("udp-sent-inside")
except OSError: print("udp-refused")
for addr in ("192.0.2.1", "10.0.0.1", "8.8.8.8"):
    try: s.sendto(b"x", (addr, 53)); print("udp-out", addr)
    except OSError: print("udp-unreachable", addr)
try:
    socket.getaddrinfo("localhost.example.invalid", 80); print("dns-ok")
except OSError: print("dns-failed")
E"#,
        p = srv.port
    );
    let o = sh(&ws, &home, &["--net", &net], &script);
    let s = out(&o);
    assert!(s.contains("tcp-loopback closed"), "{s}\n{}", err(&o));
    assert!(s.contains("udp-unreachable 8.8.8.8"), "{s}");
    assert!(s.contains("dns-failed"), "{s}");
    assert_eq!(srv.hits(), 0);
    let mut b = [0u8; 8];
    assert!(udp.recv(&mut b).is_err(), "a datagram left the sandbox");
}

#[test]
fn bad_patterns_are_one_clear_error() {
    let t = TempDir::new("eg-d6");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    for bad in [
        "allow:",
        "allow:*.com",
        "allow:http://x.test/",
        "allow:x.test:99999",
        "sideways",
    ] {
        let o = sh(&ws, &home, &["--net", bad], "true");
        assert_eq!(code(&o), 2, "{bad}: {}", err(&o));
        assert_eq!(err(&o).trim().lines().count(), 1, "{bad}: {}", err(&o));
    }
    let o = sh(&ws, &home, &["--deny-host", "x.test"], "true");
    assert_eq!(code(&o), 2, "{}", err(&o));
}
