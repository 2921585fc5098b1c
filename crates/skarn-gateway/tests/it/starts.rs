//! Start scheduling against real processes: at most one start per core at
//! once with each start timeout counted from that server's own start, and
//! failed starts retried in the background until they succeed.

use std::path::PathBuf;
use std::time::Duration;

use skarn_gateway::{Config, Gateway};
use skarn_test_support::{TempDir, target_bin};

use crate::common::rt;

fn example_bin() -> PathBuf {
    target_bin("skarn-example-server")
}

fn statuses(gw: &Gateway) -> Vec<&'static str> {
    gw.health().iter().map(|h| h.status).collect()
}

#[test]
fn starts_wait_for_a_slot_and_their_timeout_counts_from_their_own_start() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = cores + 1;
    let mut text = String::from("[gateway]\nstart_timeout = 1.5\n");
    for i in 0..n {
        text.push_str(&format!(
            "[servers.hung{i}]\ncommand = {:?}\nargs = [\"--hang-on-start\"]\n",
            example_bin().display().to_string()
        ));
    }
    let gw = Gateway::new(Config::parse(&text, "test.toml").unwrap());
    rt().block_on(async {
        gw.start();
        // Every core holds a hung start: the last server waits its turn.
        let t0 = std::time::Instant::now();
        loop {
            let s = statuses(&gw);
            let starting = s.iter().filter(|s| **s == "starting").count();
            let queued = s.iter().filter(|s| **s == "queued").count();
            if starting == cores && queued == 1 {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "{s:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (starting, _, text) = gw.not_ready();
        assert_eq!(starting.len(), n, "{text}");
        // Waiting covers the queue too: afterwards every server has had its
        // own full start timeout.
        gw.wait_for_starts().await;
        for h in gw.health() {
            assert_eq!(h.status, "failed", "{h:?}");
            assert!(h.cause.unwrap().contains("start timeout"));
        }
        gw.shutdown();
    });
}

#[test]
fn a_failed_start_is_retried_in_the_background() {
    let dir = TempDir::new("starts");
    let marker = dir.path().join("tried");
    // Fails the first time, serves the second.
    let script = format!(
        "if [ -e '{m}' ]; then exec '{bin}'; else touch '{m}'; echo 'first start fails' >&2; exit 3; fi",
        m = marker.display(),
        bin = example_bin().display()
    );
    let text = format!("[servers.flaky]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n");
    let gw = Gateway::new(Config::parse(&text, "test.toml").unwrap());
    rt().block_on(async {
        gw.start();
        gw.wait_for_starts().await;
        let h = &gw.health()[0];
        assert_eq!(h.status, "failed", "{h:?}");
        let (_, down, text) = gw.not_ready();
        assert!(text.contains("retrying in"), "{text}");
        assert!(down[0]["retry_in_ms"].is_u64(), "{down:?}");
        // Nobody calls it: the retry happens on its own.
        let t0 = std::time::Instant::now();
        while gw.health()[0].status != "ready" {
            assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", gw.health());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gw.catalog().by_name.contains_key("flaky__echo"));
        gw.shutdown();
    });
}

/// A stdio server that refuses `server/discover` and `initialize` alike
/// (counting its starts in `count`).
fn refusing_server(count: &std::path::Path) -> String {
    let py = format!(
        r#"
import json, sys
open({count:?}, "a").write("start\n")
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "error": {{"code": -32600, "message": "refused: " + m.get("method", "")}}}}), flush=True)
"#,
        count = count.display().to_string()
    );
    format!("[servers.refuser]\ncommand = \"python3\"\nargs = [\"-c\", {py:?}]\n")
}

#[test]
fn a_server_that_refuses_every_handshake_is_given_up_after_start_attempts() {
    let dir = TempDir::new("starts");
    let count = dir.path().join("starts");
    let text = format!("[gateway]\nstart_attempts = 3\n{}", refusing_server(&count));
    let gw = Gateway::new(Config::parse(&text, "test.toml").unwrap());
    let starts = || {
        std::fs::read_to_string(&count)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    rt().block_on(async {
        gw.start();
        // Retried with backoff (1 s, 2 s), then given up.
        let t0 = std::time::Instant::now();
        loop {
            let (_, down, _) = gw.not_ready();
            if down.first().is_some_and(|d| d["given_up"] == true) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "not given up: {down:?} after {} starts",
                starts()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(starts(), 3);
        let h = &gw.health()[0];
        assert_eq!(h.status, "failed", "{h:?}");
        let cause = h.cause.clone().unwrap_or_default();
        assert!(cause.contains("given up after 3 failed attempt"), "{cause}");
        let (_, _, text) = gw.not_ready();
        assert!(!text.contains("retrying in"), "{text}");
        assert!(text.contains("given up"), "{text}");
        // A call gets the cause at once and starts nothing.
        let err = gw.call_tool("refuser", "x", None).await.unwrap_err();
        assert!(err.to_string().contains("given up"), "{err}");
        // Longer than the next backoff would have been: still three starts.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(starts(), 3);
        gw.shutdown();
    });
}

/// A 2025-11-25 stdio server that answers nothing to a method it does not
/// know (`server/discover` included), as some do.
fn silent_legacy_server() -> String {
    let py = r#"
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    method, mid = m.get("method"), m.get("id")
    if method == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "silent", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        r = {"content": [{"type": "text", "text": "hello back"}]}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": r}), flush=True)
"#;
    format!("[servers.silent]\ncommand = \"python3\"\nargs = [\"-c\", {py:?}]\n")
}

#[test]
fn a_legacy_server_silent_to_discover_starts_without_waiting_out_the_probe() {
    // rmcp alone waits 10 s for the discover answer; the start timeout is
    // half that, so only the early initialize (after 1 s) lets it start.
    let text = format!(
        "[gateway]\nstart_timeout = 5\nstart_attempts = 1\n{}",
        silent_legacy_server()
    );
    let gw = Gateway::new(Config::parse(&text, "test.toml").unwrap());
    rt().block_on(async {
        gw.start();
        gw.wait_for_starts().await;
        let h = &gw.health()[0];
        assert_eq!(h.status, "ready", "{h:?}");
        let r = gw.call_tool("silent", "hello", None).await.unwrap();
        assert_eq!(crate::common::text(&r), "hello back");
        gw.shutdown();
    });
}
