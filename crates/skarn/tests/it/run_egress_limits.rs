//! `skarn run --net allow:... --net-max-bytes/--net-max-connections`: the
//! proxy's bounds, checked from outside (a sink on the host's loopback
//! counts the bytes it really received) and against the report.

use std::process::Output;

use crate::common::*;
use crate::static_http::Server;
use skarn_test_support::TempDir;

const PY: &str = "/usr/bin/python3";

use skarn_test_support::CountingSink as Sink;

/// N connections through the HTTP proxy, each `CONNECT` with 2 KiB in the
/// same packet as the head and 64 KiB after; prints the status codes seen.
const FLOOD: &str = r#"
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
codes = {}
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", 3128))
    head = ("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % port).encode()
    data = b""
    try:
        s.sendall(head + b"a" * 2048)
        s.sendall(b"b" * 65536)
        s.shutdown(socket.SHUT_WR)
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    code = data[9:12].decode() or "cut"
    codes[code] = codes.get(code, 0) + 1
    if code == "503":
        sys.stderr.write(data.decode(errors="replace"))
    s.close()
print(sorted(codes.items()))
"#;

fn report_json(o: &Output) -> serde_json::Value {
    let e = err(o);
    let line = e.lines().last().unwrap_or_default();
    serde_json::from_str(line).expect("report JSON")
}

#[test]
fn net_max_bytes_is_one_total_for_the_run() {
    let sink = Sink::start();
    let t = TempDir::new("eg-lim1");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:127.0.0.1:{}", sink.port);
    // 40 x 66 KiB = 2.6 MiB offered; 1 MiB allowed.
    let port = sink.port.to_string();
    let o = run_in(
        &ws,
        &home,
        &["--net", &net, "--net-max-bytes", "1", "--json"],
        &[PY, "-c", FLOOD, &port, "40"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v = report_json(&o);
    let e = &v["egress"];
    let carried = e["allowed"][0]["connections"].as_u64().unwrap();
    assert_eq!(sink.settled_bytes(carried), 1 << 20, "{}", out(&o));
    assert_eq!(e["allowed"][0]["bytes_out"], 1 << 20, "{e}");
    assert_eq!(e["allowed"][0]["bytes_in"], 0, "{e}");
    assert_eq!(e["byte_limit_hit"], true, "{e}");
    let refused = e["denied"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["reason"].as_str().unwrap_or("").contains("byte limit"))
        .unwrap_or_else(|| panic!("{e}"));
    // Every connection was carried (the proxy connected upstream) or refused.
    assert_eq!(refused["count"].as_u64().unwrap() + carried, 40, "{e}");
    assert!(out(&o).contains("'503'"), "{}", out(&o));
    assert!(err(&o).contains("byte limit of this run"), "{}", err(&o));
}

#[test]
fn one_connection_slot_serves_both_proxies() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-lim2");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let u = format!("http://127.0.0.1:{}/x", srv.port);
    // One at a time, SOCKS5 then HTTP, twice: with one slot, neither
    // proxy may keep it while waiting for a client.
    let one = format!(
        "curl -sS --max-time 30 --noproxy '' -x socks5h://127.0.0.1:1080 {u} && echo && \
         curl -sS --max-time 30 --noproxy '' -p {u} && echo"
    );
    let script = format!("{one} && {one}");
    let o = run_in(
        &ws,
        &home,
        &["--net", &net, "--net-max-connections", "1"],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).matches("hello-egress").count(), 4, "{}", out(&o));
    assert_eq!(srv.hits(), 4);
}
