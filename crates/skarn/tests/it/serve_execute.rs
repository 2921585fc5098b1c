//! `execute` through `skarn serve`: images a script returns go out as MCP
//! image content (not base64 text twice); a script run without the worker
//! says so in its result text; `read_tool_docs` shows the result mapping.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

/// Send every request, then collect the responses by id.
fn serve(config: &Path, isolation: &str, calls: &[(u64, &str, Value)]) -> Vec<Value> {
    let mut child = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["serve", "--isolation", isolation, "--config"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut answers = Vec::new();
    for (id, name, args) in calls {
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
        writeln!(stdin, "{req}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("no answer from skarn serve");
            let m: Value = serde_json::from_str(&line).unwrap();
            if m.get("id") == Some(&json!(id)) {
                answers.push(m["result"].clone());
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    answers
}

#[test]
fn returned_images_are_content_and_in_process_runs_say_so() {
    let example = sibling("skarn-example-server");
    let tmp = TempDir::new("serve-exec");
    let dir = tmp.path();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.example]\ncommand = {:?}\n",
            example.display().to_string()
        ),
    )
    .unwrap();
    let image = r#"return await skarn.callTool("example", "image", {})"#;
    let answers = serve(
        &cfg,
        "in_process",
        &[
            (1, "execute", json!({"code": image})),
            (2, "execute", json!({"code": "return 1"})),
            (3, "read_tool_docs", json!({"name": "example__add"})),
        ],
    );
    let content = answers[0]["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "image", "{}", answers[0]);
    assert_eq!(content[0]["mimeType"], "image/png");
    let whole = answers[0].to_string();
    // The base64 payload appears once: in the image block.
    assert_eq!(whole.matches("iVBORw0KGgo").count(), 1, "{whole}");
    let text = answers[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("without the confined worker"), "{text}");
    let docs = answers[2]["content"][0]["text"].as_str().unwrap();
    assert!(
        docs.contains("Promise<unknown /* JSON or text */ | null | Array<"),
        "{docs}"
    );
}

#[test]
fn a_huge_thrown_error_reaches_the_client_cut_to_the_error_cap() {
    let tmp = TempDir::new("serve-exec-err");
    let cfg = tmp.path().join("skarn.toml");
    std::fs::write(&cfg, "").unwrap();
    let scripts = [
        r#"throw new Error("x".repeat(7e6))"#,
        r#"const e = new Error("m"); e.name = "N".repeat(3e7); throw e"#,
        "const e = new Error('m'); Object.defineProperty(e, 'stack', { value: 'at x (script:2:1)\\n'.repeat(2e5) }); throw e",
    ];
    for isolation in ["in_process", "auto"] {
        let calls: Vec<(u64, &str, Value)> = scripts
            .iter()
            .enumerate()
            .map(|(i, s)| (i as u64 + 1, "execute", json!({ "code": s })))
            .collect();
        let answers = serve(&cfg, isolation, &calls);
        for (a, s) in answers.iter().zip(scripts) {
            assert_eq!(a["isError"], true, "{s}");
            // The error text appears twice (text and structuredContent),
            // each copy within the 64 KiB error cap.
            let size = a.to_string().len();
            assert!(
                size < 2 * (64 << 10) + 4096,
                "{isolation}: {size} bytes for {s}"
            );
            let err = &a["structuredContent"]["error"];
            assert_eq!(err["kind"], "runtime", "{s}");
            let text = a["content"][0]["text"].as_str().unwrap();
            assert!(text.starts_with("script failed (runtime error): "), "{s}");
            let marked = err["message"].as_str().unwrap().contains("… [truncated ")
                || err["details"].as_array().is_some_and(|d| {
                    d.last()
                        .and_then(Value::as_str)
                        .is_some_and(|l| l.starts_with("… [truncated "))
                });
            assert!(marked, "{isolation}: no truncation marker for {s}");
        }
    }
}

/// Send each message; collect the answer of each request (with an id).
fn exchange(config: &Path, messages: &[Value]) -> Vec<Value> {
    let mut child = Command::new(SKARN)
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["serve", "--isolation", "in_process", "--config"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut answers = Vec::new();
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        let Some(id) = m.get("id") else { continue };
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("no answer from skarn serve");
            let a: Value = serde_json::from_str(&line).unwrap();
            if a.get("id") == Some(id) {
                answers.push(a);
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    answers
}

#[test]
fn a_task_augmented_call_from_a_client_is_answered_as_an_ordinary_call() {
    // ADR 0108: the gateway offers no tasks (no capability, no tool with
    // task support); a client that asks anyway gets the plain result once.
    let tmp = TempDir::new("serve-exec-task");
    let cfg = tmp.path().join("skarn.toml");
    std::fs::write(&cfg, "").unwrap();
    let answers = exchange(
        &cfg,
        &[
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                "protocolVersion":"2025-11-25",
                "capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}}}}},
                "clientInfo":{"name":"t","version":"0"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
                "name":"execute","arguments":{"code":"skarn.log('ran'); return 41 + 1"},
                "task":{"ttl":60000}}}),
        ],
    );
    let caps = &answers[0]["result"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    for t in answers[1]["result"]["tools"].as_array().unwrap() {
        let support = t["execution"]["taskSupport"]
            .as_str()
            .unwrap_or("forbidden");
        assert_eq!(support, "forbidden", "{t}");
    }
    let r = &answers[2]["result"];
    assert!(r.get("task").is_none(), "no task was created: {r}");
    assert_eq!(r["structuredContent"]["value"], 42, "{r}");
    assert_eq!(r["structuredContent"]["logs"], json!(["ran"]), "{r}");
}
