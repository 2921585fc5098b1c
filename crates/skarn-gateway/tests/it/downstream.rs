//! The gateway against real downstream processes (the example server):
//! crash mid-call and restart, failed and hung starts, call timeouts,
//! `tools/list_changed`, and health reporting by name with cause.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use skarn_codemode::{BridgeError, ToolBridge};
use skarn_gateway::downstream::DownError;
use skarn_gateway::gateway::CallError;
use skarn_gateway::{Config, Gateway, GatewayHandle};
use skarn_test_support::{TempDir, target_bin};

fn example_bin() -> PathBuf {
    target_bin("skarn-example-server")
}

fn config(servers: &str, gateway: &str) -> Config {
    let text = format!("[gateway]\n{gateway}\n{servers}");
    Config::parse(&text, "test.toml").unwrap()
}

fn server(alias: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[servers.{alias}]\ncommand = {:?}\nargs = [{}]\n{extra}\n",
        example_bin().display().to_string(),
        args.join(", ")
    )
}

fn args(v: Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").trim().chars().next();
            state != Some('Z') && state != Some('X')
        }
        Err(_) => false,
    }
}

/// True once `pid` is gone (bounded wait: a SIGKILL is delivered asynchronously).
fn gone(pid: i32) -> bool {
    for _ in 0..500 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn crash_mid_call_is_reported_by_name_and_restarted_on_next_call() {
    rt().block_on(async {
        let gw = Gateway::new(config(&server("ex", &[], ""), ""));
        gw.start();
        gw.settle(Duration::from_secs(20)).await;
        let groups = gw.registry.groups();
        assert_eq!(groups.len(), 1);
        let first_pid = groups[0];

        let err = gw
            .call_tool("ex", "crash", args(json!({})))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("server ex crashed"), "{msg}");
        assert!(
            matches!(err, CallError::Down(DownError::Unavailable { .. })),
            "{err:?}"
        );
        let h = &gw.health()[0];
        assert_eq!(h.status, "crashed");
        assert!(
            h.cause.as_deref().unwrap_or("").contains("connection lost"),
            "{h:?}"
        );
        assert!(gone(first_pid), "crashed child still there");

        // The next call restarts it (first crash: no backoff) and succeeds.
        let r = gw
            .call_tool("ex", "echo", args(json!({"text": "again"})))
            .await
            .unwrap();
        assert_eq!(skarn_gateway::bridge::result_text(&r), "again");
        assert_eq!(gw.health()[0].status, "ready");
        let groups = gw.registry.groups();
        assert_eq!(groups.len(), 1);
        assert_ne!(groups[0], first_pid);
        gw.shutdown();
        assert!(gone(groups[0]));
    });
}

#[test]
fn failed_and_hung_servers_are_reported_and_do_not_block_others() {
    rt().block_on(async {
        let text = format!(
            "{}{}{}",
            server("good", &[], ""),
            server("broken", &["--fail-on-start"], ""),
            server("hung", &["--hang-on-start"], "start_timeout = 1.5"),
        );
        let gw = Gateway::new(config(&text, ""));
        gw.start();
        // The good server is ready long before the hung one times out.
        let t0 = std::time::Instant::now();
        loop {
            let h = gw.health();
            let good = h.iter().find(|s| s.name == "good").unwrap();
            let broken = h.iter().find(|s| s.name == "broken").unwrap();
            if good.status == "ready" && broken.status == "failed" {
                let hung = h.iter().find(|s| s.name == "hung").unwrap();
                assert_eq!(hung.status, "starting", "{h:?}");
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "{h:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        gw.rebuild();
        let (starting, _, text) = gw.not_ready();
        assert_eq!(starting, vec![json!("hung")]);
        assert!(text.contains("still starting"), "{text}");

        gw.settle(Duration::from_secs(20)).await;
        let h = gw.health();
        let broken = h.iter().find(|s| s.name == "broken").unwrap();
        assert_eq!(broken.status, "failed");
        assert!(
            broken
                .cause
                .as_deref()
                .unwrap()
                .contains("refusing to start"),
            "{broken:?}"
        );
        let hung = h.iter().find(|s| s.name == "hung").unwrap();
        assert_eq!(hung.status, "failed");
        assert!(
            hung.cause.as_deref().unwrap().contains("start timeout"),
            "{hung:?}"
        );

        // A script sees "server X failed to start: ...", not "unknown tool".
        let bridge: Arc<dyn ToolBridge> = Arc::new(skarn_gateway::bridge::GatewayBridge::new(
            gw.clone(),
            tokio::runtime::Handle::current(),
        ));
        let e = bridge
            .call_tool("broken", "echo", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(e, BridgeError::ServerUnavailable { .. }), "{e:?}");
        assert!(
            e.to_string().starts_with("server broken failed to start: "),
            "{e}"
        );
        let e = bridge
            .call_tool("nosuch", "echo", json!({}))
            .await
            .unwrap_err();
        assert_eq!(
            e,
            BridgeError::NoSuchServer {
                server: "nosuch".into()
            }
        );
        let e = bridge
            .call_tool("good", "nosuch", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(e, BridgeError::NoSuchTool { .. }), "{e:?}");
        let e = bridge
            .call_tool("good", "echo", json!([1]))
            .await
            .unwrap_err();
        assert!(matches!(e, BridgeError::InvalidArguments { .. }), "{e:?}");
        let v = bridge
            .call_tool("good", "add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(v, json!({"sum": 3.0}));
        let e = bridge
            .call_tool("good", "fail", json!({"message": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "good.fail failed: nope");
        let v = bridge
            .read_resource("good", "example://readme")
            .await
            .unwrap();
        assert!(
            v.as_str().unwrap().starts_with("skarn-example-server"),
            "{v}"
        );
        let tools = bridge.list_tools().await.unwrap();
        assert!(
            tools
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "notes_add")
        );
        gw.shutdown();
        assert!(gw.registry.groups().is_empty());
    });
}

#[test]
fn every_call_has_a_timeout_and_the_server_keeps_serving() {
    rt().block_on(async {
        let gw = Gateway::new(config(&server("ex", &[], "timeout = 0.3"), ""));
        gw.start();
        gw.settle(Duration::from_secs(20)).await;
        let e = gw
            .call_tool("ex", "sleep", args(json!({"ms": 5000})))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("timed out after 300 ms"), "{e}");
        let r = gw
            .call_tool("ex", "echo", args(json!({"text": "ok"})))
            .await
            .unwrap();
        assert_eq!(skarn_gateway::bridge::result_text(&r), "ok");
        gw.shutdown();
    });
}

#[test]
fn tools_list_changed_refreshes_the_catalogue_and_is_announced() {
    rt().block_on(async {
        let gw = Gateway::new(config(&server("ex", &[], ""), ""));
        let mut changes = gw.changes.subscribe();
        gw.start();
        gw.settle(Duration::from_secs(20)).await;
        assert!(!gw.catalog().by_name.contains_key("ex__brand_new"));
        gw.call_tool("ex", "add_tool", args(json!({"name": "brand_new"})))
            .await
            .unwrap();
        let t0 = std::time::Instant::now();
        while !gw.catalog().by_name.contains_key("ex__brand_new") {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "catalogue not refreshed"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The change was announced to upstream sessions.
        let got = tokio::time::timeout(Duration::from_secs(5), changes.recv()).await;
        assert!(got.is_ok(), "no change announced");
        let hits = gw.catalog().index.search("brand new", 1);
        assert_eq!(gw.catalog().tools[hits[0].doc].qualified, "ex__brand_new");
        gw.shutdown();
    });
}

#[test]
fn garbage_on_stdout_does_not_take_the_gateway_down() {
    rt().block_on(async {
        let text = format!(
            "{}{}",
            server("noisy", &["--garbage-on-start"], "start_timeout = 5"),
            server("ok", &[], "")
        );
        let gw = Gateway::new(config(&text, ""));
        gw.start();
        gw.settle(Duration::from_secs(20)).await;
        let h = gw.health();
        let noisy = h.iter().find(|s| s.name == "noisy").unwrap();
        // Either the SDK skips the bad line, or the server is failed with a cause.
        assert!(
            noisy.status == "ready" || noisy.cause.is_some(),
            "{noisy:?}"
        );
        let r = gw
            .call_tool("ok", "echo", args(json!({"text": "fine"})))
            .await
            .unwrap();
        assert_eq!(skarn_gateway::bridge::result_text(&r), "fine");
        gw.shutdown();
    });
}

#[test]
fn handle_drop_kills_every_child_and_health_report_works() {
    let text = format!(
        "{}{}",
        server("a", &[], ""),
        server("b", &["--fail-on-start"], "")
    );
    let dir = TempDir::new("downstream");
    let path = dir.path().join("skarn.toml");
    std::fs::write(&path, &text).unwrap();
    let report = skarn_gateway::health_report(&path).unwrap();
    assert_eq!(report.len(), 2);
    assert_eq!(report[0].name, "a");
    assert_eq!(report[0].status, "ready");
    assert!(report[0].tools >= 8, "{report:?}");
    assert_eq!(report[1].status, "failed");
    assert!(
        report[1].cause.as_deref().unwrap().contains("refusing"),
        "{report:?}"
    );

    let handle = GatewayHandle::start(Config::load(&path).unwrap()).unwrap();
    handle.settle(Duration::from_secs(20));
    let pids = handle.gateway().registry.groups();
    assert_eq!(pids.len(), 1);
    assert!(alive(pids[0]));
    drop(handle);
    assert!(gone(pids[0]), "child {} survived the gateway", pids[0]);

    let e = skarn_gateway::health_report(&dir.path().join("missing.toml")).unwrap_err();
    assert!(e.to_string().contains("missing.toml"), "{e}");
}

#[test]
fn bridge_from_config_runs_scripts_against_the_configured_servers() {
    // What `skarn exec --config` does: a connected bridge plus a guard.
    let dir = TempDir::new("downstream");
    let path = dir.path().join("skarn.toml");
    std::fs::write(&path, server("ex", &[], "")).unwrap();
    let (bridge, handle) = skarn_gateway::bridge_from_config(&path).unwrap();
    let limits = skarn_codemode::Limits::default();
    let code = r#"
        const r = await skarn.callTool("ex", "add", {a: 20, b: 22});
        let caught = "";
        try { await skarn.callTool("ex", "crash", {}); } catch (e) { caught = String(e); }
        const again = await skarn.callTool("ex", "echo", {text: "back"});
        return {sum: r.sum, caught, again};
    "#;
    let out = skarn_codemode::execute(code, bridge, &limits);
    match &out.result {
        Ok(v) => {
            assert_eq!(v["sum"].as_f64(), Some(42.0), "{v}");
            assert!(
                v["caught"].as_str().unwrap().contains("server ex crashed"),
                "{v}"
            );
            assert_eq!(v["again"], json!("back"), "{v}");
            assert_eq!(out.tool_calls, 3);
        }
        Err(e) if e.message.contains("not built yet") => {
            eprintln!("engine placeholder on this branch: script not run ({e})");
        }
        Err(e) => panic!("script failed: {e}"),
    }
    let pids = handle.gateway().registry.groups();
    drop(handle);
    for p in pids {
        assert!(gone(p), "child {p} survived");
    }
    let Err(e) = skarn_gateway::bridge_from_config(&dir.path().join("nope.toml")) else {
        panic!("a missing file must fail");
    };
    assert!(e.to_string().contains("nope.toml"), "{e}");
}
