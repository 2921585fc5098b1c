//! The `execute` tool (a Code Mode script run against the downstream
//! tools) and passthrough calls of namespaced downstream tools, for one
//! upstream session ([`GatewayServer`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::bridge::GatewayBridge;
use crate::downstream::DownError;
use crate::exec::run_script;
use crate::gateway::CallError;
use crate::relay::Caller;
use crate::results::{arg_str, text_result};
use crate::server::GatewayServer;

/// The text copy of a returned value: pretty-printed when that stays within
/// the output cap, else compact (the cap was checked on the compact form;
/// indentation of a deeply nested value could multiply it many times).
fn shown_value(v: &Value, cap: usize) -> String {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    if pretty.len() <= cap {
        pretty
    } else {
        serde_json::to_string(v).unwrap_or_default()
    }
}

impl GatewayServer {
    pub(crate) async fn execute(
        &self,
        args: &Option<Map<String, Value>>,
        caller: Caller,
    ) -> CallToolResult {
        let Some(code) = arg_str(args, "code") else {
            return text_result("execute needs a string argument `code`", None, true);
        };
        // Requests the servers send while the script runs go to this client.
        let _calling = self.gw.shared.relay.calling(None, &caller);
        let flush_for = caller.progress.is_some().then(|| caller.clone());
        let stateless = caller.rounds.is_some();
        let bridge = Arc::new(
            GatewayBridge::new(self.gw.clone(), tokio::runtime::Handle::current())
                .for_caller(caller),
        );
        // Bounded concurrency: each running script may hold a worker
        // process. The session's own share first, so that its queued
        // scripts wait there, not in front of other sessions'; the
        // requests of 2026-07-28 clients (each a session of its own over
        // HTTP) share one such share.
        let share = if stateless {
            self.gw.stateless_share.clone()
        } else {
            self.exec_share.clone()
        };
        let _share = share.acquire_owned().await;
        let _slot = self.gw.exec_slots.clone().acquire_owned().await;
        let (outcome, isolation, note) = run_script(
            self.gw.executor().await,
            code.to_owned(),
            bridge,
            self.gw.config.gateway.limits.clone(),
        )
        .await;
        // The script's own progress goes out before its answer.
        if let Some(c) = &flush_for {
            self.gw.shared.relay.flush_client(c).await;
        }
        let mut logs_text = if outcome.logs.is_empty() {
            String::new()
        } else {
            format!("\n\nlogs:\n{}", outcome.logs.join("\n"))
        };
        if let Some(note) = &note {
            logs_text.push_str(&format!("\n\n{note}"));
        }
        match outcome.result {
            Ok(value) if let Some(mut blocks) = crate::results::returned_content(&value) => {
                // Images and resources go out as MCP content, once.
                if !logs_text.is_empty() {
                    blocks.push(ContentBlock::text(logs_text.trim_start().to_owned()));
                }
                let mut r = CallToolResult::success(blocks);
                r.structured_content = Some(json!({
                    "value": crate::results::without_payloads(&value),
                    "logs": outcome.logs,
                    "tool_calls": outcome.tool_calls,
                    "elapsed_ms": outcome.elapsed_ms,
                    "isolation": isolation,
                }));
                r
            }
            Ok(value) => {
                let shown = match &value {
                    Value::String(s) => s.clone(),
                    v => shown_value(v, self.gw.config.gateway.limits.max_output_bytes),
                };
                text_result(
                    format!("{shown}{logs_text}"),
                    Some(json!({
                        "value": value,
                        "logs": outcome.logs,
                        "tool_calls": outcome.tool_calls,
                        "elapsed_ms": outcome.elapsed_ms,
                        "isolation": isolation,
                    })),
                    false,
                )
            }
            Err(mut e) => {
                // The reply carries the error twice (text and structured),
                // each copy within the error cap, whatever ran the script.
                e.bound(self.gw.config.gateway.limits.error_bytes());
                text_result(
                    format!("script failed ({}): {e}{logs_text}", kind_name(e.kind)),
                    Some(json!({
                        "error": e,
                        "logs": outcome.logs,
                        "tool_calls": outcome.tool_calls,
                        "elapsed_ms": outcome.elapsed_ms,
                        "isolation": isolation,
                    })),
                    true,
                )
            }
        }
    }

    pub(crate) async fn passthrough(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        caller: Caller,
    ) -> Option<Result<CallToolResult, ErrorData>> {
        let mut cat = self.gw.catalog();
        if !cat.by_name.contains_key(name) {
            self.gw.wait_for_starts().await;
            cat = self.gw.catalog();
        }
        let (server, tool) = match cat.by_name.get(name) {
            Some(&i) => {
                let t = &cat.tools[i];
                (self.gw.servers[t.server].alias(), t.tool.name.as_ref())
            }
            None => {
                // Name a server that is down rather than "unknown tool".
                let (server, tool) = self.gw.split_name(name)?;
                self.gw.server(server)?;
                (server, tool)
            }
        };
        Some(Ok(
            match self
                .gw
                .call_tool_as(server, tool, args, Some(&caller))
                .await
            {
                Ok(r) => r,
                Err(CallError::Down(DownError::Unavailable { server, reason })) => {
                    text_result(format!("server {server} {reason}"), None, true)
                }
                // 2026-07-28: the client must learn which capability.
                Err(CallError::Down(DownError::MissingCapability { message, data })) => {
                    return Some(Err(ErrorData::new(
                        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        message,
                        data,
                    )));
                }
                Err(e) => text_result(e.to_string(), None, true),
            },
        ))
    }
}

fn kind_name(k: skarn_codemode::ErrorKind) -> &'static str {
    use skarn_codemode::ErrorKind::*;
    match k {
        Rejected => "rejected",
        Syntax => "syntax error",
        Runtime => "runtime error",
        Memory => "memory limit",
        Stack => "stack limit",
        Deadline => "deadline",
        ToolCalls => "tool-call limit",
        Output => "output limit",
        Internal => "internal error",
    }
}

#[cfg(test)]
mod shown_tests {
    use super::shown_value;
    use serde_json::json;

    #[test]
    fn deep_values_are_shown_compact_past_the_cap() {
        let mut v = json!([[], [], []]);
        for _ in 0..200 {
            v = json!([v]);
        }
        let compact = serde_json::to_string(&v).unwrap();
        assert!(serde_json::to_string_pretty(&v).unwrap().len() > 4096);
        assert_eq!(shown_value(&v, 4096), compact);
        // Small values keep the readable form.
        assert_eq!(shown_value(&json!({"a": 1}), 4096), "{\n  \"a\": 1\n}");
    }
}
