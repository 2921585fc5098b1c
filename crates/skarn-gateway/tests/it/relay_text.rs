//! Every text a server sends that reaches the client passes the same
//! filter as its listing (atk25d F2, F5): no ESC, CR, BEL, bidi override
//! or invisible character arrives raw, in log messages (the `logger` that
//! carries the attribution included), progress, error texts (the
//! gateway's own, quoting the server or its stderr), prompts, completions,
//! resource URIs, schema property names. Checked on what the client reads.

use serde_json::{Value, json};

use crate::common::{Upstream, gateway, hostile, rt};

/// The raw characters of `skarn-hostile-server --evil-text` found in
/// `v`'s strings and keys.
fn raw(v: &Value) -> Vec<String> {
    let bad = |s: &str| {
        s.chars().any(|c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202e}' | '\u{200b}' | '\u{e0000}'..='\u{e007f}')
        })
    };
    let mut out = Vec::new();
    match v {
        Value::String(s) if bad(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| out.extend(raw(x))),
        Value::Object(m) => {
            for (k, x) in m {
                if bad(k) {
                    out.push(k.clone());
                }
                out.extend(raw(x));
            }
        }
        _ => {}
    }
    out
}

#[test]
fn server_text_reaches_the_client_escaped_everywhere() {
    rt().block_on(async {
        let servers = hostile("h", &["--evil-text"], "[servers.h.sandbox]\nenabled = false");
        let gw = gateway(&servers, "passthrough = true").await;
        let mut up = Upstream::connect(gw.clone()).await;
        let mut got = Vec::new();
        got.push(up.request("logging/setLevel", json!({"level": "debug"})).await);
        for m in ["tools/list", "resources/list", "resources/templates/list", "prompts/list"] {
            got.push(up.request(m, json!({})).await);
        }
        let call = up
            .request(
                "tools/call",
                json!({"name": "h__evil_call", "arguments": {}, "_meta": {"progressToken": "tok"}}),
            )
            .await;
        got.push(call);
        let call = up
            .request(
                "tools/call",
                json!({"name": "h__evil_call", "arguments": {"fail": true}}),
            )
            .await;
        assert!(call.to_string().contains("RE"), "{call}");
        got.push(call);
        got.push(up.request("prompts/get", json!({"name": "h__evil"})).await);
        got.push(
            up.request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "h__evil"}, "argument": {"name": "a", "value": ""}}),
            )
            .await,
        );
        let script = up
            .request(
                "tools/call",
                json!({"name": "execute", "arguments": {"code": "return await skarn.callTool('h', 'evil_call', {fail: true})"}}),
            )
            .await;
        assert!(script.to_string().contains("RE"), "{script}");
        got.push(script);
        // A crash: the gateway's own error line quotes its last stderr line.
        let crash = up
            .request("tools/call", json!({"name": "h__evil_call", "arguments": {"crash": true}}))
            .await;
        assert!(crash.to_string().contains("ER"), "{crash}");
        got.push(crash);
        let log = up.seen.iter().find(|m| m["method"] == "notifications/message").cloned();
        let progress = up.seen.iter().find(|m| m["method"] == "notifications/progress").cloned();
        assert!(log.is_some() && progress.is_some(), "{:?}", up.seen);
        got.extend(up.seen.iter().cloned());
        let all = Value::Array(got);
        let found = raw(&all);
        assert!(found.is_empty(), "raw server text reached the client: {found:?}");
        let text = all.to_string();
        for what in ["LG", "LD", "PR", "PD", "PM", "CV", "RE", "ER"] {
            assert!(text.contains(&format!("{what}\\\\u{{1b}}")), "{what} not shown escaped: {text}");
        }
        // A URI or template that holds such characters is not listed.
        assert!(!text.contains("evil://"), "{text}");
        gw.shutdown();
    });
}

/// A URL-mode elicitation whose link holds an escape that conceals its
/// real host is refused, not forwarded (the server gets the error).
#[test]
fn a_link_with_hidden_characters_is_refused() {
    rt().block_on(async {
        let gw = gateway(&hostile("h", &[], ""), "passthrough = true").await;
        let caps = json!({"elicitation": {"form": {}, "url": {}}});
        let mut up = Upstream::connect_with(gw.clone(), 1 << 20, caps).await;
        let params = json!({"mode": "url", "message": "sign in", "elicitationId": "e1",
            "url": "https://github.com\u{1b}[8m@evil.example/"});
        let r = up
            .request(
                "tools/call",
                json!({"name": "h__sample", "arguments": {"count": 1, "kind": "raw",
                    "method": "elicitation/create", "params": params, "wait_errors": 1}}),
            )
            .await;
        assert!(r.to_string().contains("URL holds control"), "{r}");
        assert!(
            up.seen.iter().all(|m| m["method"] != "elicitation/create"),
            "{:?}",
            up.seen
        );
        gw.shutdown();
    });
}
