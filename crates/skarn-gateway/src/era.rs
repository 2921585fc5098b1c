//! What each protocol revision's client is owed (ADR 0085).
//!
//! rmcp shapes most of a 2026-07-28 answer itself (it fills missing cache
//! hints and strips `resultType` again for 2025-11-25 peers), but results
//! relayed from a downstream arrive without `resultType` when that server
//! speaks 2025-11-25, and modern clients reject them. Everything relayed is
//! stamped complete here; lists say how long they truly stay fresh; a
//! missing resource names its URI; and the discover answer leaves out the
//! deprecated `logging` capability (log messages reach a 2026-07-28 client
//! only through the per-request opt-in).
#![allow(deprecated)]

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult, ResultType,
    ServerCapabilities,
};
use serde_json::json;

/// How long a list that cannot change while the gateway runs stays fresh:
/// one hour (a restarted gateway with another configuration may answer
/// differently, so not forever).
pub(crate) const CONSTANT_TTL_MS: u64 = 3_600_000;

pub(crate) fn call_complete(mut r: CallToolResult) -> CallToolResult {
    r.result_type.get_or_insert(ResultType::COMPLETE);
    r
}

pub(crate) fn prompt_complete(mut r: GetPromptResult) -> GetPromptResult {
    r.result_type.get_or_insert(ResultType::COMPLETE);
    r
}

pub(crate) fn read_complete(mut r: ReadResourceResult) -> ReadResourceResult {
    r.result_type.get_or_insert(ResultType::COMPLETE);
    // A downstream's own hints stand; without them the SDK says "fresh for
    // 0 ms, private", which is true of content the gateway cannot vouch for.
    r
}

pub(crate) fn completion_complete(mut r: CompleteResult) -> CompleteResult {
    r.result_type.get_or_insert(ResultType::COMPLETE);
    r
}

/// The cache hints of a list: constant lists (the three meta-tools when
/// passthrough is off) are fresh for [`CONSTANT_TTL_MS`]; lists made of
/// downstream catalogues change whenever a server does (announced through
/// `subscriptions/listen`), so they are fresh for 0 ms. Every client of a
/// gateway sees the same lists (one token, one catalogue): public.
pub(crate) fn list_hints(constant: bool) -> (Option<u64>, Option<CacheScope>) {
    let ttl = if constant { CONSTANT_TTL_MS } else { 0 };
    (Some(ttl), Some(CacheScope::Public))
}

/// The capabilities a 2026-07-28 client is told of at `server/discover`.
pub(crate) fn modern_capabilities(mut caps: ServerCapabilities) -> ServerCapabilities {
    caps.logging = None;
    caps
}

/// A resource nobody offers: the error names the URI in `data.uri`, as
/// 2026-07-28 asks (rmcp turns the code into "invalid params" for modern
/// clients and keeps -32002 for older ones).
pub(crate) fn resource_not_found(message: impl Into<String>, uri: &str) -> ErrorData {
    ErrorData::resource_not_found(message.into(), Some(json!({ "uri": uri })))
}

/// Whether this request speaks 2026-07-28 or later.
pub(crate) fn is_modern(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, ServerResult};

    #[test]
    fn relayed_results_carry_result_type_only_for_modern_clients() {
        let mut legacy: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": "x"}]})).unwrap();
        assert!(legacy.result_type.is_none());
        legacy = call_complete(legacy);
        let modern = serde_json::to_value(ServerResult::CallToolResult(legacy.clone())).unwrap();
        assert_eq!(modern["resultType"], "complete");
        let mut old = ServerResult::CallToolResult(legacy);
        old.strip_result_type_for_legacy_peer();
        assert!(
            serde_json::to_value(old)
                .unwrap()
                .get("resultType")
                .is_none()
        );
        let _ = ContentBlock::text("");
    }

    #[test]
    fn not_found_names_the_uri() {
        let e = resource_not_found("no such resource", "a://b");
        assert_eq!(e.data.unwrap()["uri"], "a://b");
    }
}
