//! Log messages of downstream servers are per client session (attack
//! F10): one client's `logging/setLevel` does not change what another
//! gets, and a server's logs reach the client whose call it serves (or
//! that asked for logs), never a client that did neither. Default
//! settings; judged from the messages each client reads.

use serde_json::{Value, json};
use skarn_test_support::target_bin;

use crate::common::{Upstream, gateway, rt};

fn logs(up: &Upstream) -> Vec<&Value> {
    up.seen
        .iter()
        .filter(|v| v.get("method").and_then(Value::as_str) == Some("notifications/message"))
        .collect()
}

/// Ping until `up` has seen `n` log messages (at most 200 pings).
async fn until_logs(up: &mut Upstream, n: usize) {
    let mut pings = 0;
    while logs(up).len() < n {
        pings += 1;
        assert!(pings < 200, "log messages missing: {:?}", up.seen);
        up.request("ping", json!({})).await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[test]
fn log_levels_and_log_messages_belong_to_each_client() {
    rt().block_on(async {
        let server = format!(
            "[servers.conf]\ncommand = {:?}\n",
            target_bin("skarn-conformance-server").display().to_string()
        );
        let gw = gateway(&server, "passthrough = true").await;
        let mut a = Upstream::connect(gw.clone()).await;
        let mut b = Upstream::connect(gw.clone()).await;
        let mut c = Upstream::connect(gw.clone()).await;
        // A wants everything; B, later, only errors: B's choice is B's.
        a.request("logging/setLevel", json!({"level": "debug"}))
            .await;
        b.request("logging/setLevel", json!({"level": "error"}))
            .await;
        let r = a
            .request(
                "tools/call",
                json!({"name": "conf__test_tool_with_logging", "arguments": {}}),
            )
            .await;
        assert!(r.get("result").is_some(), "{r}");
        // The three info messages of A's call reach A...
        until_logs(&mut a, 3).await;
        assert!(logs(&a).iter().all(|m| m["params"]["logger"] == "conf"));
        // ... and neither B (it asked for errors only) nor C (it neither
        // called the server nor asked for logs).
        for _ in 0..10 {
            b.request("ping", json!({})).await;
            c.request("ping", json!({})).await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(
            logs(&b).is_empty(),
            "B got another client's logs: {:?}",
            b.seen
        );
        assert!(
            logs(&c).is_empty(),
            "C got another client's logs: {:?}",
            c.seen
        );

        // C asks for logs and calls: it gets all of its call's logs (in
        // flight they go to the caller; handled just after the answer, to
        // the clients that asked), and B still nothing.
        c.request("logging/setLevel", json!({"level": "info"}))
            .await;
        let r = c
            .request(
                "tools/call",
                json!({"name": "conf__test_tool_with_logging", "arguments": {}}),
            )
            .await;
        assert!(r.get("result").is_some(), "{r}");
        until_logs(&mut c, 3).await;
        b.request("ping", json!({})).await;
        assert!(logs(&b).is_empty(), "{:?}", b.seen);
    });
}
