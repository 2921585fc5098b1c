//! `input_required` rounds of a 2026-07-28 downstream (ADR 0087): the
//! server's sampling, elicitation and roots requests, embedded in its
//! answer, go through the relay exactly like a 2025-11-25 server's
//! requests (to the client whose call is in flight, within the same
//! per-server bounds), and the call is retried with the answers and the
//! server's opaque state. rmcp's own round driver cannot be used here: it
//! does not report the progress token of each round, which the relay needs.
#![allow(deprecated)]

use rmcp::ServiceError;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequiredResult, InputResponses, RequestMetaObject,
};
use rmcp::service::PeerRequestOptions;

use crate::relay::Relay;

tokio::task_local! {
    /// The downstream's key of the question being asked, kept for the
    /// client's round (relay::rounds) so that a server that names its
    /// questions sees its own names in the answers' place.
    pub(crate) static INPUT_KEY: String;
}

/// Rounds one call may take before the gateway gives up.
pub(crate) const MAX_ROUNDS: usize = 16;

/// The answers to one `input_required` result, and the state to echo.
pub(crate) async fn fulfil(
    relay: &Relay,
    server: usize,
    alias: &str,
    ir: InputRequiredResult,
) -> Result<(Option<InputResponses>, Option<String>), ServiceError> {
    let requests = ir.input_requests.unwrap_or_default();
    if requests.is_empty() && ir.request_state.is_none() {
        return Err(ServiceError::UnexpectedResponse);
    }
    // All at once: a 2026-07-28 client then gets them in one round.
    let asks = requests.into_iter().map(|(key, request)| {
        let k = key.clone();
        let ask = async move {
            match request {
                InputRequest::CreateMessage(r) => relay
                    .create_message(server, alias, r.params)
                    .await
                    .map(|v| serde_json::to_value(v).unwrap_or_default()),
                InputRequest::Elicitation(r) => relay
                    .create_elicitation(server, alias, r.params)
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
        };
        async move { (k, INPUT_KEY.scope(key, ask).await) }
    });
    let mut out = InputResponses::new();
    for (key, answer) in futures::future::join_all(asks).await {
        out.insert(key, answer.map_err(ServiceError::McpError)?);
    }
    Ok(((!out.is_empty()).then_some(out), ir.request_state))
}

/// The request options of a downstream call made for `caller`: for a
/// 2026-07-28 client, the capabilities the downstream sees in `_meta` are
/// that client's (those the gateway can relay: sampling, elicitation,
/// roots, the MCP Apps extension), so that the server asks only what the
/// client can answer. Otherwise the connection's own (the gateway's).
pub(crate) fn options_for(caller: Option<&crate::relay::Caller>) -> PeerRequestOptions {
    let mut options = PeerRequestOptions::no_options();
    let Some(rounds) = caller.and_then(|c| c.rounds.as_ref()) else {
        return options;
    };
    let mut caps = serde_json::Map::new();
    if let Ok(serde_json::Value::Object(all)) = serde_json::to_value(&rounds.caps) {
        for (k, v) in all {
            match k.as_str() {
                "sampling" | "elicitation" | "roots" => {
                    caps.insert(k, v);
                }
                "extensions" => {
                    if let Some(ui) = v.get(UI_EXTENSION) {
                        caps.insert(k, serde_json::json!({ UI_EXTENSION: ui }));
                    }
                }
                _ => {}
            }
        }
    }
    if let Ok(caps) = serde_json::from_value::<ClientCapabilities>(caps.into()) {
        let mut meta = RequestMetaObject::default();
        meta.set_client_capabilities(caps);
        options.meta = Some(meta);
    }
    options
}

/// The MCP Apps extension's identifier.
pub(crate) const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";
