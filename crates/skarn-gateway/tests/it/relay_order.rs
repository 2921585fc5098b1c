//! Order of what the gateway relays: a downstream's progress reaches the
//! client before the answer it belongs to (clients drop progress that
//! comes after the answer), however late rmcp gets round to handling each
//! notification. Checked from outside, in the order the client reads.

use serde_json::{Value, json};

use crate::common::{Upstream, gateway, hostile, rt};

/// Read until the answer to `id`; the progress notifications read before it.
async fn progress_before_answer(up: &mut Upstream, id: u64) -> (u64, Value) {
    let mut progress = 0;
    loop {
        let v = up.next_message().await;
        if v.get("id") == Some(&json!(id)) {
            return (progress, v);
        }
        if v.get("method").and_then(Value::as_str) == Some("notifications/progress") {
            assert_eq!(v["params"]["progressToken"], json!("tok"), "{v}");
            progress += 1;
        }
    }
}

#[test]
fn every_progress_notification_comes_before_its_answer() {
    rt().block_on(async {
        let gw = gateway(&hostile("h", &[], ""), "passthrough = true").await;
        let mut up = Upstream::connect(gw.clone()).await;
        // Spinning threads, more than the machine has CPUs, so that the
        // kernel preempts the gateway's workers as on a loaded CI host and
        // rmcp's per-notification tasks start late.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spinners: Vec<_> = (0..cpus * 2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        for round in 0..10u64 {
            let count = 20 * (round % 5 + 1);
            let id = up
                .start_request(
                    "tools/call",
                    json!({"name": "h__flood", "arguments": {"count": count, "bytes": 20}, "_meta": {"progressToken": "tok"}}),
                )
                .await;
            let (got, answer) = progress_before_answer(&mut up, id).await;
            assert!(answer.get("result").is_some(), "{answer}");
            assert_eq!(got, count, "round {round}: progress read before the answer");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for s in spinners {
            s.join().unwrap();
        }
        gw.shutdown();
    });
}
