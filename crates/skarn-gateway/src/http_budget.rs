//! The budgets of a stdio downstream's answers (bytes, JSON values,
//! nesting, string length, content blocks: see [`crate::json_budget`])
//! applied to an HTTP downstream. A POST's answer is read by
//! [`crate::http_post`], which holds a plain JSON body to the budget while
//! it arrives, before anything decodes it; every SSE event (of a POST's
//! answer or of the GET stream) is counted here before rmcp decodes it, and
//! one over the budget is replaced by a JSON-RPC error for its id, so the
//! caller gets one clear error and the gateway never builds the oversized
//! value. Redirects are followed as rmcp's own client does: same origin,
//! 307/308 only, at most 10 hops.

use std::sync::Arc;

use futures::StreamExt;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::http_post::{Events, Headers, Post};
use crate::json_budget::over_budget_items;
use crate::oversize::{IdScanner, too_large};

type Answer = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// rmcp's default bound on one SSE event (16 MiB).
const MAX_SSE_EVENT: usize = 16 << 20;

/// A reqwest client whose answers are held to the gateway's budgets.
#[derive(Clone)]
pub(crate) struct BudgetedClient {
    inner: reqwest::Client,
    server: Arc<str>,
    /// Most items of one listing page (`gateway.max_list_items`).
    max_items: usize,
}

impl BudgetedClient {
    /// A client for server `server`, whose listing pages hold at most
    /// `max_items` items.
    pub(crate) fn new(server: &str, max_items: usize) -> Result<Self, String> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| format!("http client: {e}"))?;
        Ok(Self {
            inner,
            server: server.into(),
            max_items,
        })
    }

    async fn post(&self, p: Post, limits: StreamableHttpResponseLimits) -> Answer {
        let r =
            crate::http_post::post(&self.inner, &self.server, p, limits, self.max_items).await?;
        Ok(match r {
            StreamableHttpPostResponse::Sse(events, sid) => StreamableHttpPostResponse::Sse(
                budget_events(events, self.server.clone(), self.max_items),
                sid,
            ),
            other => other,
        })
    }
}

/// Follows a 307/308 to the same origin, up to 10 hops; returns any other.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt.previous().first().is_some_and(|first| {
            first.scheme() == attempt.url().scheme()
                && first.host_str() == attempt.url().host_str()
                && first.port_or_known_default() == attempt.url().port_or_known_default()
        });
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        if same && keeps_body && attempt.previous().len() <= 10 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// The event, or an error answer for its id in its place when over budget
/// (its data dropped when it has no id).
fn budget_event(mut sse: Sse, server: &str, max_items: usize) -> Sse {
    let Some(data) = sse.data.as_deref() else {
        return sse;
    };
    let Some(over) = over_budget_items(data.as_bytes(), max_items) else {
        return sse;
    };
    let mut scan = IdScanner::default();
    scan.feed(data.as_bytes());
    match scan.id() {
        Some(id) => {
            tracing::warn!(server = %server, "an answer that {over} discarded");
            let line = too_large(id, server, &over);
            sse.data = Some(String::from_utf8_lossy(line.trim_ascii()).into_owned());
        }
        None => {
            tracing::warn!(server = %server, "a message that {over} discarded");
            sse.data = None;
        }
    }
    sse
}

fn budget_events(events: Events, server: Arc<str>, max_items: usize) -> Events {
    events
        .map(move |e| e.map(|sse| budget_event(sse, &server, max_items)))
        .boxed()
}

impl StreamableHttpClient for BudgetedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Answer {
        let p = Post::new(uri, message, session_id, auth_header, custom_headers);
        self.post(p, StreamableHttpResponseLimits::default()).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Answer {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        let p = Post::new(uri, message, session_id, auth_header, custom_headers);
        self.post(p, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Answer {
        let p = Post::new(uri, message, session_id, auth_header, custom_headers);
        self.post(p, limits).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_SSE_EVENT,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(budget_events(events, self.server.clone(), self.max_items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content_blocks::MAX_CONTENT_BLOCKS;
    use crate::json_budget::MAX_VALUES;

    fn event(data: String) -> Sse {
        Sse {
            data: Some(data),
            ..Sse::default()
        }
    }

    #[test]
    fn events_with_too_many_values_become_errors_for_their_id() {
        let many = vec!["1"; MAX_VALUES + 1].join(",");
        let data = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"x":[{many}]}}}}"#);
        let out = budget_event(event(data), "hostile", usize::MAX);
        let v: serde_json::Value = serde_json::from_str(out.data.as_deref().unwrap()).unwrap();
        assert_eq!(v["id"], 7);
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("hostile") && msg.contains("JSON values"),
            "{msg}"
        );
    }

    #[test]
    fn events_with_too_many_blocks_become_errors_for_their_id() {
        let blocks = vec![r#"{"type":"text","text":"x"}"#; MAX_CONTENT_BLOCKS + 1].join(",");
        let data = format!(r#"{{"jsonrpc":"2.0","id":"a","result":{{"content":[{blocks}]}}}}"#);
        let out = budget_event(event(data), "s", usize::MAX);
        let v: serde_json::Value = serde_json::from_str(out.data.as_deref().unwrap()).unwrap();
        assert_eq!(v["id"], "a");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("content blocks")
        );
    }

    #[test]
    fn events_within_budget_pass_unchanged() {
        let data = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#.to_owned();
        let out = budget_event(event(data.clone()), "s", usize::MAX);
        assert_eq!(out.data.as_deref(), Some(data.as_str()));
    }
}
