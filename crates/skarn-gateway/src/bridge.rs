//! [`ToolBridge`] over the gateway: how a script's `skarn.callTool`,
//! `skarn.listTools` and `skarn.readResource` reach downstream servers.
//!
//! The engine polls the returned futures on its own thread, so every call
//! is spawned onto the gateway's tokio runtime and answered through a
//! oneshot channel.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use skarn_codemode::{BridgeError, BridgeFuture, ToolBridge};
use tokio::runtime::Handle;

use crate::downstream::DownError;
use crate::gateway::{CallError, Gateway};
use crate::relay::Caller;

/// The gateway as a script sees it.
#[derive(Clone)]
pub struct GatewayBridge {
    gw: Arc<Gateway>,
    rt: Handle,
    /// The client whose `execute` runs the script: it gets progress (one
    /// step per finished tool call) and the servers' requests.
    caller: Option<Caller>,
    calls_done: Arc<AtomicU64>,
}

impl GatewayBridge {
    pub fn new(gw: Arc<Gateway>, rt: Handle) -> GatewayBridge {
        GatewayBridge {
            gw,
            rt,
            caller: None,
            calls_done: Arc::default(),
        }
    }

    /// Run the script's calls on behalf of `caller`.
    pub fn for_caller(mut self, caller: Caller) -> GatewayBridge {
        self.caller = Some(caller);
        self
    }

    fn spawn<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, BridgeError>> + Send + 'static,
    ) -> BridgeFuture<'static, T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.rt.spawn(async move {
            let _ = tx.send(fut.await);
        });
        Box::pin(async move {
            rx.await.unwrap_or_else(|_| {
                Err(BridgeError::Other {
                    message: "the gateway is shutting down".into(),
                })
            })
        })
    }
}

fn down_to_bridge(server: &str, tool: &str, e: DownError) -> BridgeError {
    match e {
        DownError::Unavailable { server, reason } => {
            BridgeError::ServerUnavailable { server, reason }
        }
        DownError::Timeout { timeout_ms, .. } => BridgeError::Timeout {
            server: server.to_owned(),
            tool: tool.to_owned(),
            timeout_ms,
        },
        DownError::InvalidParams(message) => BridgeError::InvalidArguments {
            message: format!("{server}.{tool}: {message}"),
        },
        DownError::MissingCapability { message, .. } => BridgeError::ToolFailed {
            server: server.to_owned(),
            tool: tool.to_owned(),
            message,
        },
        DownError::Rejected(message) | DownError::NotFound(message) => BridgeError::ToolFailed {
            server: server.to_owned(),
            tool: tool.to_owned(),
            message,
        },
    }
}

/// Text of every text block, joined.
pub fn result_text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value a script receives for a tool result (rules in [`crate::results`]).
pub fn result_value(r: &CallToolResult) -> Value {
    crate::results::tool_value(r)
}

impl ToolBridge for GatewayBridge {
    fn call_tool(&self, server: &str, tool: &str, args: Value) -> BridgeFuture<'_, Value> {
        let (server, tool) = (server.to_owned(), tool.to_owned());
        let gw = self.gw.clone();
        let caller = self.caller.clone();
        let done = self.calls_done.clone();
        self.spawn(async move {
            let args = match args {
                Value::Object(m) => Some(m),
                Value::Null => None,
                other => {
                    return Err(BridgeError::InvalidArguments {
                        message: format!(
                            "arguments of {server}.{tool} must be an object, not {}",
                            kind(&other)
                        ),
                    });
                }
            };
            let r = gw.call_tool_as(&server, &tool, args, caller.as_ref()).await;
            if let Some(c) = &caller {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                let relay = &gw.shared.relay;
                relay.own_progress(
                    c,
                    n as f64,
                    format!("{n} tool calls done (last: {server}.{tool})"),
                );
            }
            match r {
                Ok(r) if r.is_error == Some(true) => Err(BridgeError::ToolFailed {
                    message: {
                        let t = result_text(&r);
                        if t.is_empty() {
                            "the tool reported an error".into()
                        } else {
                            // The gateway's own failure line quotes it.
                            crate::text_safe::visible_block(&t)
                        }
                    },
                    server,
                    tool,
                }),
                Ok(r) => Ok(result_value(&r)),
                Err(CallError::NoSuchServer(s)) => Err(BridgeError::NoSuchServer { server: s }),
                Err(CallError::NoSuchTool { server, tool }) => {
                    Err(BridgeError::NoSuchTool { server, tool })
                }
                Err(CallError::Down(e)) => Err(down_to_bridge(&server, &tool, e)),
            }
        })
    }

    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        let gw = self.gw.clone();
        self.spawn(async move {
            gw.wait_for_starts().await;
            let cat = gw.catalog();
            Ok(Value::Array(
                cat.tools
                    .iter()
                    .map(|t| {
                        json!({
                            "server": gw.servers[t.server].alias(),
                            "name": t.tool.name,
                            "description": t.tool.description.as_deref().unwrap_or(""),
                        })
                    })
                    .collect(),
            ))
        })
    }

    fn read_resource(&self, server: &str, uri: &str) -> BridgeFuture<'_, Value> {
        let (server, uri) = (server.to_owned(), uri.to_owned());
        let gw = self.gw.clone();
        self.spawn(async move {
            let Some(s) = gw.server(&server).cloned() else {
                return Err(BridgeError::NoSuchServer { server });
            };
            match s.read_resource(&uri).await {
                Ok(r) => Ok(crate::results::resource_value(&r.contents)),
                Err(e) => Err(down_to_bridge(&server, "readResource", e)),
            }
        })
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
