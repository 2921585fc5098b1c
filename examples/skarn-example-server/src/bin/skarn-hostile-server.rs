//! A deliberately misbehaving MCP server for Skarn's gateway tests. It
//! speaks raw JSON-RPC on stdio (no SDK) so that it can break the rules:
//!
//! - `--name N`: tools are named `<N>_t<k>` where k counts `tools/list`
//!   requests so far (a re-list is visible from outside).
//! - `--env-dump FILE`: write its environment (NAME=VALUE lines) to FILE.
//! - `--resource URI`, `--template T`: resources it lists; `resources/read`
//!   answers with the text `served by <N>: <uri>`.
//! - `--endless-pages`: every `tools/list` page has a next cursor.
//! - `--slow-relist`: answers the first `tools/list` only; later ones never.
//! - `--huge-answer BYTES`: the tool `huge` answers with a line of BYTES.
//! - `--setsid-child FILE`: starts a `setsid` sleeper whose pid goes to FILE.
//!
//! Tools: `notify {count}` sends `count` `notifications/tools/list_changed`
//! before answering; `list_count` answers the number of `tools/list`
//! requests received; `huge` (see above).

use std::io::{BufRead, Write};

use serde_json::{Value, json};

#[derive(Default)]
struct Opts {
    name: String,
    resources: Vec<String>,
    templates: Vec<String>,
    endless: bool,
    slow_relist: bool,
    huge: usize,
}

fn send(out: &mut impl Write, v: &Value) {
    let mut line = serde_json::to_vec(v).unwrap_or_default();
    line.push(b'\n');
    if out.write_all(&line).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

fn text(s: &str) -> Value {
    json!({"content": [{"type": "text", "text": s}]})
}

fn main() {
    let mut o = Opts {
        name: "hostile".into(),
        ..Opts::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_default();
        match a.as_str() {
            "--name" => o.name = val(),
            "--env-dump" => {
                let dump: String = std::env::vars_os()
                    .map(|(k, v)| format!("{}={}\n", k.to_string_lossy(), v.to_string_lossy()))
                    .collect();
                std::fs::write(val(), dump).expect("write the env dump");
            }
            "--resource" => o.resources.push(val()),
            "--template" => o.templates.push(val()),
            "--endless-pages" => o.endless = true,
            "--slow-relist" => o.slow_relist = true,
            "--huge-answer" => o.huge = val().parse().unwrap_or(0),
            "--setsid-child" => {
                let file = val();
                let script = format!(
                    "echo $$ > '{file}.tmp' && mv '{file}.tmp' '{file}' && exec sleep 1000"
                );
                std::process::Command::new("setsid")
                    .args(["-f", "sh", "-c", &script])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("run setsid");
            }
            other => {
                eprintln!("skarn-hostile-server: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    serve(&o);
}

fn serve(o: &Opts) {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut lists = 0u64;
    let mut page = 0u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue; // a notification
        };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => json!({
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {"listChanged": true}, "resources": {}},
                "serverInfo": {"name": o.name, "version": "0"},
            }),
            "ping" => json!({}),
            "tools/list" => {
                lists += 1;
                if o.slow_relist && lists > 1 {
                    continue; // never answered
                }
                let tool = |n: String| json!({"name": n, "description": "a tool", "inputSchema": {"type": "object"}});
                let mut tools = vec![
                    tool(format!("{}_t{lists}", o.name)),
                    tool("notify".into()),
                    tool("list_count".into()),
                    tool("huge".into()),
                ];
                if o.endless {
                    page += 1;
                    tools = (0..50)
                        .map(|i| tool(format!("p{page}_{i}_{}", "x".repeat(200))))
                        .collect();
                    json!({"tools": tools, "nextCursor": format!("c{page}")})
                } else {
                    json!({"tools": tools})
                }
            }
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                match name {
                    "notify" => {
                        let n = params
                            .pointer("/arguments/count")
                            .and_then(Value::as_u64)
                            .unwrap_or(1);
                        for _ in 0..n {
                            send(
                                &mut out,
                                &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                            );
                        }
                        text("sent")
                    }
                    "list_count" => text(&lists.to_string()),
                    "huge" => text(&"x".repeat(o.huge)),
                    _ => text(name),
                }
            }
            "resources/list" => {
                json!({"resources": o.resources.iter().map(|u| json!({"uri": u, "name": u})).collect::<Vec<_>>()})
            }
            "resources/templates/list" => {
                json!({"resourceTemplates": o.templates.iter().map(|u| json!({"uriTemplate": u, "name": u})).collect::<Vec<_>>()})
            }
            "resources/read" => {
                let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
                json!({"contents": [{"uri": uri, "text": format!("served by {}: {uri}", o.name)}]})
            }
            "prompts/list" => json!({"prompts": []}),
            _ => {
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}),
                );
                continue;
            }
        };
        send(
            &mut out,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
}
