//! Helpers for tests against the hostile fake downstream
//! (`examples/skarn-example-server/src/bin/skarn-hostile-server.rs`) and a
//! raw JSON-RPC upstream client over the gateway's stdio transport.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skarn_gateway::{Config, Gateway};
use skarn_test_support::target_bin;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// One `[servers.<alias>]` table running the hostile server.
pub fn hostile(alias: &str, args: &[&str], extra: &str) -> String {
    let mut all = vec!["--name".to_owned(), alias.to_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    let args: Vec<String> = all.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[servers.{alias}]\ncommand = {:?}\nargs = [{}]\n{extra}\n",
        target_bin("skarn-hostile-server").display().to_string(),
        args.join(", ")
    )
}

pub fn config(servers: &str, gateway: &str) -> Config {
    let text = format!("[gateway]\n{gateway}\n{servers}");
    Config::parse(&text, "test.toml").unwrap()
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A started gateway whose servers have all settled.
pub async fn gateway(servers: &str, gateway: &str) -> Arc<Gateway> {
    let gw = Gateway::new(config(servers, gateway));
    gw.start();
    gw.settle(Duration::from_secs(30)).await;
    gw
}

/// A raw JSON-RPC client talking to the gateway through its stdio
/// transport (in-memory pipes).
pub struct Upstream {
    w: DuplexStream,
    r: Lines<BufReader<DuplexStream>>,
    next: u64,
    /// Messages other than the awaited responses (notifications, the
    /// gateway's requests), in order.
    pub seen: Vec<Value>,
}

impl Upstream {
    pub async fn connect(gw: Arc<Gateway>) -> Upstream {
        Upstream::connect_with(gw, 1 << 20, json!({})).await
    }

    /// With `buffer` bytes of pipe from the gateway to the client and
    /// these client capabilities.
    pub async fn connect_with(gw: Arc<Gateway>, buffer: usize, capabilities: Value) -> Upstream {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(buffer);
        tokio::spawn(skarn_gateway::stdio::serve_lines(gw, server_r, server_w));
        let mut up = Upstream {
            w: client_w,
            r: BufReader::new(client_r).lines(),
            next: 0,
            seen: Vec::new(),
        };
        up.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
        up.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        up
    }

    pub async fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.w.write_all(line.as_bytes()).await.unwrap();
    }

    /// Send a request without waiting; its id.
    pub async fn start_request(&mut self, method: &str, params: Value) -> u64 {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// The next message from the gateway.
    pub async fn next_message(&mut self) -> Value {
        let line = self.r.next_line().await.unwrap().expect("gateway closed");
        serde_json::from_str(&line).unwrap()
    }

    /// The whole response (result or error) to one request.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params).await;
        self.response(id).await
    }

    /// The response to request `id`; other messages go to `seen`.
    pub async fn response(&mut self, id: u64) -> Value {
        let wait = async {
            loop {
                let v = self.next_message().await;
                if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                    return v;
                }
                self.seen.push(v);
            }
        };
        tokio::time::timeout(Duration::from_secs(120), wait)
            .await
            .expect("no answer within 120 s")
    }
}

/// Text of a tool call result.
pub fn text(r: &rmcp::model::CallToolResult) -> String {
    skarn_gateway::bridge::result_text(r)
}
