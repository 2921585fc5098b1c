//! `input_required` rounds of a 2026-07-28 downstream (ADR 0087): the
//! server's sampling, elicitation and roots requests, embedded in its
//! answer, go through the relay exactly like a 2025-11-25 server's
//! requests (to the client whose call is in flight, within the same
//! per-server bounds), and the call is retried with the answers and the
//! server's opaque state. rmcp's own round driver cannot be used here: it
//! does not report the progress token of each round, which the relay needs.
#![allow(deprecated)]

use rmcp::ServiceError;
use rmcp::model::{InputRequest, InputRequiredResult, InputResponses};

use crate::relay::Relay;

/// Rounds one call may take before the gateway gives up.
pub(crate) const MAX_ROUNDS: usize = 16;

/// The answers to one `input_required` result, and the state to echo.
pub(crate) async fn fulfil(
    relay: &Relay,
    server: usize,
    ir: InputRequiredResult,
) -> Result<(Option<InputResponses>, Option<String>), ServiceError> {
    let requests = ir.input_requests.unwrap_or_default();
    if requests.is_empty() && ir.request_state.is_none() {
        return Err(ServiceError::UnexpectedResponse);
    }
    let mut out = InputResponses::new();
    for (key, request) in requests {
        let value = match request {
            InputRequest::CreateMessage(r) => relay
                .create_message(server, r.params)
                .await
                .map(|v| serde_json::to_value(v).unwrap_or_default()),
            InputRequest::Elicitation(r) => relay
                .create_elicitation(server, r.params)
                .await
                .map(|v| serde_json::to_value(v).unwrap_or_default()),
            InputRequest::ListRoots(_) => relay
                .list_roots(server)
                .await
                .map(|v| serde_json::to_value(v).unwrap_or_default()),
            _ => Err(rmcp::ErrorData::invalid_params(
                "unknown kind of input request",
                None,
            )),
        }
        .map_err(ServiceError::McpError)?;
        out.insert(key, value);
    }
    Ok(((!out.is_empty()).then_some(out), ir.request_state))
}
