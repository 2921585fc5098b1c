//! Task-augmented calls to 2025-11-25 servers (ADR 0105).
//!
//! A 2025-11-25 server may mark a tool `execution.taskSupport:
//! "required"`: it refuses a plain `tools/call` and runs the tool only as
//! a task (`tools/call` with `task`, answered by a `CreateTaskResult`; the
//! final result comes from `tasks/result`, which waits for it). rmcp keeps
//! neither the tool's `execution` nor the request's `task` field (it models
//! the 2026-07-28 extension), so both are read and sent as raw JSON here.
//!
//! Which tools need a task cannot be read from the listing: rmcp's typed
//! tool list drops `execution` and the gateway sees no raw JSON. So it is
//! learnt from the refusal: a legacy server's plain call that comes back
//! as an error saying the tool "requires task augmentation" (what the
//! official SDKs answer) was refused before the tool ran, so making it
//! again as a task cannot run it twice. The tool is remembered for the
//! connection and its later calls go to the task path directly. The whole
//! exchange stays inside the call's timeout; a call given up is cancelled
//! with `tasks/cancel`.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::{CallToolResult, ClientRequest, CustomRequest, ServerResult};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Map, Value, json};

use crate::sync_util::lock;

/// The tools of one connection known to run only as tasks.
#[derive(Default)]
pub(crate) struct TaskTools {
    known: Mutex<HashSet<String>>,
}

/// Tools remembered per connection at most (a server cannot grow this
/// without bound).
const MAX_KNOWN: usize = 1024;

impl TaskTools {
    /// Whether `tool` is known to need a task.
    pub(crate) fn known_required(&self, tool: &str) -> bool {
        lock(&self.known).contains(tool)
    }

    /// Whether `r`, the answer to a plain call of `tool`, is the refusal of
    /// a tool that runs only as a task; if so, remember the tool.
    pub(crate) fn refused(&self, tool: &str, r: &CallToolResult) -> bool {
        let says = r.is_error == Some(true)
            && r.content.iter().any(|c| {
                c.as_text()
                    .is_some_and(|t| t.text.contains("requires task augmentation"))
            });
        if says {
            let mut known = lock(&self.known);
            if known.len() < MAX_KNOWN {
                known.insert(tool.to_owned());
            }
        }
        says
    }
}

/// One request whose answer is kept as raw JSON.
async fn raw(
    peer: &Peer<RoleClient>,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ServiceError> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, params));
    let answer = peer.send_request(request).await?;
    serde_json::to_value(answer).map_err(|_| ServiceError::UnexpectedResponse)
}

/// Cancels the task when the call is dropped before its result came
/// (timeout, or the client went away).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    task: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.task.take() else { return };
        let peer = self.peer.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = raw(&peer, "tasks/cancel", Some(json!({ "taskId": id }))).await;
            });
        }
    }
}

/// `tools/call` as a task, then `tasks/result` for its final result (the
/// server's questions meanwhile arrive as ordinary requests and go through
/// the relay like those of a plain call).
pub(crate) async fn call_as_task(
    peer: &Peer<RoleClient>,
    tool: &str,
    args: Option<Map<String, Value>>,
    ttl_ms: u64,
) -> Result<CallToolResult, ServiceError> {
    let mut params = json!({ "name": tool, "task": { "ttl": ttl_ms } });
    if let Some(a) = args {
        params["arguments"] = Value::Object(a);
    }
    let created = raw(peer, "tools/call", Some(params)).await?;
    let Some(id) = created
        .pointer("/task/taskId")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        // A server may run the call at once after all.
        return serde_json::from_value(created).map_err(|_| ServiceError::UnexpectedResponse);
    };
    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        task: Some(id.clone()),
    };
    let request = ClientRequest::CustomRequest(CustomRequest::new(
        "tasks/result",
        Some(json!({ "taskId": id })),
    ));
    let answer = peer.send_request(request).await?;
    guard.task = None;
    match answer {
        ServerResult::CallToolResult(r) => Ok(r),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or(ServiceError::UnexpectedResponse),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn only_a_refusal_for_want_of_a_task_is_retried_as_one() {
        let t = TaskTools::default();
        let refusal = CallToolResult::error(vec![ContentBlock::text(
            "MCP error -32601: Tool x requires task augmentation (taskSupport: 'required')",
        )]);
        let other = CallToolResult::error(vec![ContentBlock::text("disk full")]);
        let mut ok =
            CallToolResult::success(vec![ContentBlock::text("requires task augmentation")]);
        assert!(!t.refused("y", &other));
        assert!(!t.refused("z", &ok));
        assert!(!t.known_required("x"));
        assert!(t.refused("x", &refusal));
        assert!(t.known_required("x"));
        assert!(!t.known_required("y") && !t.known_required("z"));
        ok.is_error = None;
        assert!(!t.refused("z", &ok));
    }
}
