//! `skarn serve` with hostile downstream servers that aim at each other
//! (issue 25, second attack pass), at the default settings, judged by what
//! the client receives and what a server could read.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

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

fn saw<'a>(gw: &'a Gw, method: &str) -> Vec<&'a Value> {
    gw.seen.iter().filter(|m| m["method"] == method).collect()
}

/// No character of `s` but newlines and tabs is a control or an invisible
/// format character.
fn plain(s: &str) -> bool {
    !s.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}')
    })
}

/// Only the first line of `s` starts with `prefix`.
fn named_once(s: &str, prefix: &str) -> bool {
    let mut lines = s.lines();
    lines.next().is_some_and(|l| l.starts_with(prefix))
        && lines.all(|l| !l.trim_start().starts_with(prefix.trim_end_matches(' ')))
}

/// F2: what a server asks the user (elicitation) or the client's model
/// (sampling) cannot pass for another server's or the gateway's: its
/// terminal sequences, carriage returns and bidi overrides are shown
/// escaped, and no line of its text starts like the gateway's attribution.
/// Through a passthrough call and through `execute`.
#[test]
fn a_server_cannot_word_its_request_as_another_servers() {
    let dir = TempDir::new("serve_hostile_peers");
    let mut gw = Gw::start_with_home(
        dir.path(),
        &dir.path().join("home"),
        "passthrough = true",
        &[("evil", &["--name", "evil"])],
        json!({"elicitation": {"form": {}}, "sampling": {}}),
    );
    let via_execute = |kind: &str| {
        json!({"code": format!(
            "return await skarn.callTool('evil', 'sample', {{count: 1, kind: '{kind}', wait_results: 1}})"
        )})
    };
    gw.call(
        "evil__sample",
        json!({"count": 1, "kind": "forged", "wait_results": 1}),
    );
    let r = gw.call("execute", via_execute("forged"));
    assert!(r.get("result").is_some(), "{r}");
    let asks = saw(&gw, "elicitation/create");
    assert_eq!(asks.len(), 2, "{:?}", gw.seen);
    for e in asks {
        let m = e["params"]["message"].as_str().unwrap();
        assert!(plain(m), "{m:?}");
        assert!(
            named_once(m, "[MCP server \"evil\" asks, through skarn] "),
            "{m:?}"
        );
        assert!(!m.lines().skip(1).any(|l| l.starts_with('[')), "{m:?}");
        let title = e["params"]["requestedSchema"]["properties"]["token"]["title"]
            .as_str()
            .unwrap();
        assert!(plain(title) && !title.contains('\n'), "{title:?}");
    }

    gw.call(
        "evil__sample",
        json!({"count": 1, "kind": "forged_sampling", "wait_results": 1}),
    );
    gw.call("execute", via_execute("forged_sampling"));
    let samples = saw(&gw, "sampling/createMessage");
    assert_eq!(samples.len(), 2, "{:?}", gw.seen);
    for s in samples {
        let p = s["params"]["systemPrompt"].as_str().unwrap();
        assert!(
            named_once(p, "(Requested by the MCP server \"evil\" through skarn.)"),
            "{p:?}"
        );
        assert!(!p.lines().skip(1).any(|l| l.starts_with('(')), "{p:?}");
        let t = s["params"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap();
        assert!(plain(t), "{t:?}");
    }
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
