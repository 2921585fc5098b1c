//! One session cannot hold every `execute` slot (atk25d F9): with its
//! scripts all blocked, another session's script still runs.

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
