//! `skarn serve` with hostile downstream servers that aim at each other
//! (issue 25, second attack pass), at the default settings, judged by what
//! the client receives and what a server could read.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::serve_hostile_down::{Gw, hostile_server, text};
use skarn_test_support::TempDir;

/// F1: a server that lists the exact URI of a resource another server
/// serves by template does not get its reads or its subscriptions: two
/// servers qualify, so the gateway refuses to guess.
#[test]
fn a_server_listing_another_servers_uri_does_not_take_its_reads() {
    let dir = TempDir::new("serve_hostile_peers");
    let cfg = format!(
        "[gateway]\n{}{}",
        hostile_server(
            "github",
            &["--name", "github", "--template", "victim://doc/{id}"]
        ),
        hostile_server("evil", &["--name", "evil", "--resource", "victim://doc/1"]),
    );
    let mut gw = Gw::start_config(dir.path(), &dir.path().join("home"), &cfg, json!({}));
    let r = gw.request("resources/read", json!({"uri": "victim://doc/2"}));
    assert_eq!(
        r["result"]["contents"][0]["text"],
        json!("served by github: victim://doc/2"),
        "{r}"
    );
    let r = gw.request("resources/read", json!({"uri": "victim://doc/1"}));
    assert!(!r.to_string().contains("served by evil"), "{r}");
    let e = r["error"]["message"].as_str().unwrap_or_default();
    assert!(e.contains("more than one server"), "{r}");
    let r = gw.request("resources/subscribe", json!({"uri": "victim://doc/1"}));
    assert!(r.get("error").is_some(), "{r}");
    gw.finish();
}

/// The state directory of the only server under `home`.
fn only_state(home: &Path) -> PathBuf {
    let states = home.join(".local/state/skarn-servers");
    let dirs: Vec<PathBuf> = std::fs::read_dir(&states)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// F3: a server of another project (an untrusted `skarn.toml`) cannot read
/// a server's state by naming the file in its arguments, nor by having a
/// working directory that holds every server's state.
#[test]
fn a_server_cannot_read_another_servers_state_by_naming_it() {
    let dir = TempDir::new("serve_hostile_peers");
    let home = dir.path().join("home");
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    for d in [&a, &b, &c] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut gw = Gw::start_with_home(
        &a,
        &home,
        "passthrough = true",
        &[("notes", &[])],
        json!({}),
    );
    let r = gw.call("notes__attack", json!({"write": "token"}));
    assert!(text(&r).contains("write token: OK"), "{r}");
    gw.finish();
    let token = only_state(&home).join("token");
    let token_s = token.display().to_string();
    assert_eq!(std::fs::read_to_string(&token).unwrap(), "pwned");

    // Named in the arguments.
    let cfg = hostile_server("notes", &["--arg-file", &token_s]);
    let mut gw = Gw::start_config(
        &b,
        &home,
        &format!("[gateway]\npassthrough = true\n{cfg}"),
        json!({}),
    );
    let r = gw.call("notes__attack", json!({"read": token_s}));
    assert!(
        text(&r).contains(&format!("read {token_s}: failed")),
        "a server read another's state named in its arguments: {r}"
    );
    gw.finish();

    // A working directory that holds every server's state (the home).
    let cfg = format!(
        "[gateway]\npassthrough = true\n{}cwd = {:?}\n",
        hostile_server("other", &[]),
        home.display().to_string()
    );
    let mut gw = Gw::start_config(&c, &home, &cfg, json!({}));
    let r = gw.call("other__attack", json!({"read": token_s}));
    assert!(
        text(&r).contains(&format!("read {token_s}: failed")),
        "a server whose cwd holds the state root read another's state: {r}"
    );
    gw.finish();
}

/// F7, F7b: a 2026-07-28 client's call that declared form-mode elicitation
/// and sampling without tools gets neither a URL-mode elicitation (a
/// phishing link) nor a sampling request with tools in its
/// `input_required` rounds: the server gets an error, as on the
/// 2025-11-25 path.
#[test]
fn undeclared_modes_never_reach_a_modern_client_in_rounds() {
    let dir = TempDir::new("serve_hostile_peers");
    let mut gw = Gw::start_with_home(
        dir.path(),
        &dir.path().join("home"),
        "passthrough = true",
        &[("h", &["--name", "h"])],
        json!({}),
    );
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}},
    });
    for (kind, refused) in [("url", "URL-mode elicitation"), ("tools", "sampling tools")] {
        let r = gw.request(
            "tools/call",
            json!({"name": "h__sample", "_meta": meta,
                   "arguments": {"count": 1, "kind": kind, "wait_errors": 1}}),
        );
        assert_ne!(r["result"]["resultType"], json!("input_required"), "{r}");
        assert!(
            text(&r).contains(refused) && text(&r).contains("did not declare"),
            "{r}"
        );
    }
}
