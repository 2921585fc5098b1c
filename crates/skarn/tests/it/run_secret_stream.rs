//! atk27j F8: a streamed response (server-sent events) from a host a
//! granted secret is bound to goes through the TLS-terminating proxy and
//! its echo scrubber; each event must reach the command as the server
//! sends it, not when the response ends, while an echo of the value in
//! the stream is still replaced. Checked from outside: the server holds
//! back its second event until the command has written, in the
//! workspace, that it got the first.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{TestCa, TlsServer};

const REAL: &str = "stream-REAL-value-7Hq2Lm9Xw4Kp";

fn chunk(w: &mut dyn Write, d: &[u8]) {
    let _ = w.write_all(format!("{:x}\r\n", d.len()).as_bytes());
    let _ = w.write_all(d);
    let _ = w.write_all(b"\r\n");
    let _ = w.flush();
}

#[test]
fn streamed_events_from_a_bound_host_arrive_as_they_are_sent() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-stream");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let ws = t.dir("ws");
    let marker = ws.join("got-first");
    let released = Arc::new(AtomicBool::new(false));
    let (m, rel) = (marker.clone(), released.clone());
    let srv = TlsServer::start_streaming(&ca, &["localhost"], move |r, w| {
        let auth = r.header("authorization").unwrap_or("").to_string();
        let _ = w.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        );
        chunk(w, b"data: {\"delta\":\"one\"}\n\n");
        // The second event waits until the command got the first.
        let t0 = Instant::now();
        while !m.exists() && t0.elapsed() < Duration::from_secs(15) {
            std::thread::sleep(Duration::from_millis(50));
        }
        rel.store(m.exists(), Ordering::SeqCst);
        chunk(
            w,
            format!("data: {{\"you_sent\":\"{auth}\"}}\n\n").as_bytes(),
        );
        chunk(w, b"data: [DONE]\n\n");
        let _ = w.write_all(b"0\r\n\r\n");
        let _ = w.flush();
    });
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("st"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.st]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nenv = \"ST\"\n",
            vals.join("st").display(),
            srv.port
        ),
    )
    .unwrap();
    let script = format!(
        "export NO_PROXY= no_proxy=; echo \"ph=$ST\"; \
         curl -sSN -H \"Authorization: Bearer $ST\" https://localhost:{p}/stream | \
         while IFS= read -r l; do [ -n \"$l\" ] && echo \"got $l\"; \
           case \"$l\" in *one*) : > {m};; esac; done",
        p = srv.port,
        m = marker.display()
    );
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let o = run_command(
        &ws,
        &home,
        // Direct: the host reads the marker while the run lasts (the
        // default layer shows the run's writes only when it ends).
        &[
            "--secret",
            "st",
            "--net",
            &net,
            "--workspace-layer",
            "direct",
        ],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .output()
    .unwrap();
    check_stream(&o, &ws, released.load(Ordering::SeqCst), &srv);
}

fn check_stream(o: &std::process::Output, _ws: &Path, released: bool, srv: &TlsServer) {
    let (stdout, stderr) = (out(o), err(o));
    assert_eq!(code(o), 0, "{stdout}{stderr}");
    // The server got the value (the TLS-terminating path was taken).
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{stdout}{stderr}");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    assert!(stdout.contains("got data: {\"delta\":\"one\"}"), "{stdout}");
    assert!(stdout.contains("got data: [DONE]"), "{stdout}");
    assert!(
        released,
        "the first event was held back until the stream went on: {stdout}"
    );
    // The echo in the stream is still scrubbed.
    let ph = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ph="))
        .unwrap()
        .to_string();
    assert_eq!(ph.len(), REAL.len());
    assert!(
        stdout.contains(&format!("\"you_sent\":\"Bearer {ph}\"")),
        "{stdout}"
    );
    assert!(!stdout.contains(REAL), "value visible inside: {stdout}");
    assert!(!stdout.contains(&REAL[7..]), "{stdout}");
}
