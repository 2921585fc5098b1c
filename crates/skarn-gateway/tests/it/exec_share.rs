//! One session cannot hold every `execute` slot (atk25d F9): with its
//! scripts all blocked, another session's script still runs; nor can many
//! 2026-07-28 requests, each a session of its own over HTTP.

use std::time::Duration;

use serde_json::json;

use crate::common::{Upstream, gateway, hostile, rt};

#[test]
fn one_sessions_scripts_leave_slots_for_another_session() {
    rt().block_on(async {
        let dir = skarn_test_support::TempDir::new("exec-share");
        let (started, release) = (dir.s("started"), dir.s("release"));
        let servers = hostile("h", &[], "[servers.h.sandbox]\nenabled = false");
        let gw = gateway(&servers, "max_concurrent_executes = 2").await;
        let mut a = Upstream::connect(gw.clone()).await;
        let mut b = Upstream::connect(gw.clone()).await;
        // A's scripts each wait at the server until `release` exists.
        let code = format!(
            "return await skarn.callTool('h', 'sample', {{count: 0, touch: {started:?}, wait_file: {release:?}}})"
        );
        let mut ids = Vec::new();
        for _ in 0..4 {
            ids.push(
                a.start_request("tools/call", json!({"name": "execute", "arguments": {"code": code}}))
                    .await,
            );
        }
        // A's first script reached the server; give the others the time to
        // take every slot they can (at most 2 s).
        for _ in 0..1200 {
            if std::path::Path::new(&started).exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for _ in 0..40 {
            if gw.exec_slots.available_permits() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let r = b
            .request("tools/call", json!({"name": "execute", "arguments": {"code": "return 1"}}))
            .await;
        assert_eq!(r["result"]["isError"], json!(false), "{r}");
        assert!(
            !std::path::Path::new(&release).exists(),
            "B ran while A's scripts still held their slots"
        );
        std::fs::write(&release, "").unwrap();
        // A's first script completes once released (not cut off by its
        // deadline while B waited).
        let r = a.response(ids[0]).await;
        assert_eq!(r["result"]["isError"], json!(false), "{r}");
        gw.shutdown();
    });
}

/// Four 2026-07-28 `execute` requests over HTTP (stateless: each its own
/// session), all blocked at the server: together they hold at most half
/// the slots, and a 2025-11-25 session's script still runs.
#[cfg(unix)] // the raw HTTP client of `http_isolation`
#[test]
fn many_stateless_requests_leave_slots_for_a_session() {
    use crate::http_isolation::{Client, exchange, modern};
    let rt = rt();
    let dir = skarn_test_support::TempDir::new("exec-share-http");
    let (started, release) = (dir.s("started"), dir.s("release"));
    let servers = hostile("h", &[], "[servers.h.sandbox]\nenabled = false");
    let gw = skarn_gateway::Gateway::new(crate::common::config(
        &servers,
        "max_concurrent_executes = 2",
    ));
    let stop = tokio_util::sync::CancellationToken::new();
    let addr = rt.block_on(async {
        gw.start();
        gw.settle(Duration::from_secs(30)).await;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        tokio::spawn(skarn_gateway::http::serve_http(
            gw.clone(),
            l,
            crate::http_isolation::TOKEN.into(),
            stop.clone(),
        ));
        addr
    });
    let code = format!(
        "return await skarn.callTool('h', 'sample', {{count: 0, touch: {started:?}, wait_file: {release:?}}})"
    );
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for id in 1..=4u64 {
        let (h, m) = modern(
            id,
            "tools/call",
            "execute",
            json!({"name": "execute", "arguments": {"code": code}}),
        );
        let addr = addr.clone();
        std::thread::spawn(move || {
            let seen = std::sync::Mutex::new(Vec::new());
            exchange(&addr, "POST", Some(&h), &m, &seen, &|v| {
                v["id"] == json!(id)
            });
        });
    }
    for _ in 0..1200 {
        if std::path::Path::new(&started).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Give the other requests the time to take every slot they can.
    for _ in 0..40 {
        if gw.exec_slots.available_permits() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The session's script, answered while every stateless script still
    // waits at the server (they end only at `release` or their deadline,
    // far later than this wait for a hang).
    let (tx, rx) = std::sync::mpsc::channel();
    let b_addr = addr.clone();
    std::thread::spawn(move || {
        let mut b = Client::connect(&b_addr);
        let _ = tx.send(b.request(
            "tools/call",
            json!({"name": "execute", "arguments": {"code": "return 1"}}),
        ));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the session's script waited for the stateless requests' slots");
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    assert_eq!(finished.load(std::sync::atomic::Ordering::SeqCst), 0);
    std::fs::write(&release, "").unwrap();
    stop.cancel();
    gw.shutdown();
    drop(rt);
}
