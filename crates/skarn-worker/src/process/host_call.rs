//! The script's host calls, each answered on its own thread through the
//! caller's bridge, the answer capped to what the script may receive.

use std::io::Write;
use std::process::ChildStdin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use skarn_codemode::{BridgeError, ToolBridge};

use crate::protocol::{HostCall, ToWorker, encode};

/// Answer one host call on its own thread (bridge futures are
/// executor-agnostic; several calls may be outstanding at once).
pub(super) fn answer(
    call: HostCall,
    id: u64,
    cap: usize,
    bridge: Arc<dyn ToolBridge>,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
) {
    let work = move || {
        let what = match &call {
            HostCall::CallTool { server, tool, .. } => format!("{server}.{tool}"),
            HostCall::ListTools => "listTools".to_string(),
            HostCall::ReadResource { server, uri } => format!("{server} resource {uri}"),
        };
        let result: Result<Value, BridgeError> = pollster::block_on(async {
            match call {
                HostCall::CallTool { server, tool, args } => {
                    bridge.call_tool(&server, &tool, args).await
                }
                HostCall::ListTools => bridge.list_tools().await,
                HostCall::ReadResource { server, uri } => bridge.read_resource(&server, &uri).await,
            }
        });
        let result = match result {
            Ok(v) if skarn_codemode::json_depth(&v) > skarn_codemode::MAX_RESULT_DEPTH => {
                Err(skarn_codemode::result_too_deep(&what))
            }
            r => r,
        };
        let mut line = encode(&ToWorker::Reply { id, result });
        if line.len() > cap {
            let result = Err(BridgeError::Other {
                message: format!(
                    "the result of {what} is {} bytes, more than the {cap} bytes a script with this memory limit may receive",
                    line.len()
                ),
            });
            line = encode(&ToWorker::Reply { id, result });
        }
        if let Ok(mut guard) = stdin.lock()
            && let Some(s) = guard.as_mut()
        {
            let _ = s.write_all(&line).and_then(|_| s.flush());
        }
    };
    if std::thread::Builder::new()
        .name("skarn-host-call".into())
        .spawn(work)
        .is_err()
    {
        // Could not get a thread: the script's call will see the deadline.
    }
}
