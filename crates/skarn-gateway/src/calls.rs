//! Requests to one downstream server, each with its per-call timeout;
//! a lost transport marks the server crashed.

use std::sync::Arc;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ReadResourceRequestParams, ReadResourceResult,
};
use serde_json::{Map, Value};

use crate::downstream::{Conn, DownError, Downstream, short};

impl Downstream {
    /// Call one tool with the per-call timeout.
    pub async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, DownError> {
        let conn = self.ready().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args;
        let t = self.cfg.call_timeout;
        match tokio::time::timeout(t, conn.service.peer().call_tool(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{}.{tool}", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    /// Read one resource with the per-call timeout.
    pub async fn read_resource(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<ReadResourceResult, DownError> {
        let conn = self.ready().await?;
        let t = self.cfg.call_timeout;
        let params = ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(t, conn.service.peer().read_resource(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{} resources/read", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    /// Get one prompt with the per-call timeout.
    pub async fn get_prompt(
        self: &Arc<Self>,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, DownError> {
        let conn = self.ready().await?;
        let t = self.cfg.call_timeout;
        let mut params = rmcp::model::GetPromptRequestParams::default();
        params.name = name.to_owned();
        params.arguments = args;
        match tokio::time::timeout(t, conn.service.peer().get_prompt(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{} prompts/get", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    fn service_error(&self, conn: &Arc<Conn>, e: ServiceError) -> DownError {
        match e {
            ServiceError::McpError(data) if data.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                DownError::InvalidParams(data.message.to_string())
            }
            ServiceError::McpError(data) => DownError::Rejected(data.message.to_string()),
            ServiceError::Timeout { timeout } => DownError::Timeout {
                what: self.cfg.alias.clone(),
                timeout_ms: timeout.as_millis() as u64,
            },
            other => {
                // Transport gone: the server crashed mid-call.
                let mut cause = format!("connection lost during a call ({})", short(&other));
                // Let the service notice the closed pipe and stderr drain.
                std::thread::yield_now();
                if let Some(line) = conn.last_stderr() {
                    cause.push_str(&format!("; last stderr line: {line}"));
                }
                self.mark_crashed(conn, cause.clone());
                DownError::Unavailable {
                    server: self.cfg.alias.clone(),
                    reason: format!("crashed: {cause}"),
                }
            }
        }
    }
}
