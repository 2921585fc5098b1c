//! The POST of one message to an HTTP downstream, with every JSON body of
//! the answer (a plain JSON answer, a JSON-RPC error sent with an error
//! status) held to [`crate::json_budget`] while it arrives and before it
//! is decoded, and every SSE event to its byte limit. rmcp's own reqwest
//! client decodes a JSON body of up to 16 MiB as it is: 16 MiB of `[1,1,…]`
//! would cost the gateway about a GiB. This follows that client's answer
//! handling (status, session, content type) otherwise.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt, TryStreamExt};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::SseStream;

use crate::json_budget::JsonBudget;

type Error = StreamableHttpError<reqwest::Error>;
/// Headers a configured server adds to each request.
pub(crate) type Headers =
    std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>;
/// The SSE events of one answer.
pub(crate) type Events = futures::stream::BoxStream<
    'static,
    Result<sse_stream::Sse, rmcp::transport::streamable_http_client::SseError>,
>;

/// Headers the transport sets itself; a configured header may not replace
/// them (rmcp's worker passes `MCP-Protocol-Version` and the 2026-07-28
/// routing headers as custom headers).
const RESERVED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// One message to post and where.
pub(crate) struct Post {
    pub uri: Arc<str>,
    pub message: ClientJsonRpcMessage,
    pub session_id: Option<Arc<str>>,
    pub auth_header: Option<String>,
    pub custom_headers: Headers,
}

impl Post {
    pub(crate) fn new(
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Post {
        Post {
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
        }
    }
}

fn media_type_is(value: &str, expected: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|e| e.trim_matches([' ', '\t']).eq_ignore_ascii_case(expected))
}

/// Why a JSON body was not read to the end.
enum Refused {
    Bytes(usize),
    Budget(String),
}

/// Read a JSON body, checking its budget chunk by chunk; stops reading at
/// the first excess.
async fn read_json<S>(
    body: S,
    max_bytes: usize,
    max_items: usize,
) -> Result<Result<Vec<u8>, Refused>, Error>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>>,
{
    futures::pin_mut!(body);
    let mut out = Vec::new();
    let mut budget = JsonBudget::with_items(max_items);
    while let Some(chunk) = body.try_next().await.map_err(Error::Client)? {
        if chunk.len() > max_bytes - out.len() {
            return Ok(Err(Refused::Bytes(max_bytes)));
        }
        budget.feed(&chunk);
        if let Some(why) = budget.over() {
            return Ok(Err(Refused::Budget(why.to_owned())));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(Ok(out))
}

impl Refused {
    fn why(&self) -> String {
        match self {
            Refused::Bytes(n) => format!("is larger than {n} bytes"),
            Refused::Budget(why) => why.clone(),
        }
    }
}

/// The error answer that replaces a refused body: for the request's id
/// when the message was a request, else the message is taken as accepted.
fn refused(server: &str, message: &ClientJsonRpcMessage, why: &str) -> StreamableHttpPostResponse {
    tracing::warn!(server = %server, "an answer that {why} discarded");
    match message {
        ClientJsonRpcMessage::Request(r) => StreamableHttpPostResponse::Json(
            ServerJsonRpcMessage::error(
                ErrorData::internal_error(
                    format!("the answer of server {server} {why} and was discarded"),
                    None,
                ),
                Some(r.id.clone()),
            ),
            None,
        ),
        _ => StreamableHttpPostResponse::Accepted,
    }
}

/// A `server/discover` rejected by a status (not a session's, not auth):
/// the lifecycle tells the eras apart by the error for its id.
fn discover_rejected(
    p: &Post,
    status: StatusCode,
    body: Option<ServerJsonRpcMessage>,
) -> Option<StreamableHttpPostResponse> {
    if p.session_id.is_some()
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(r) = &p.message else {
        return None;
    };
    if !matches!(r.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match body {
        Some(ServerJsonRpcMessage::Error(e)) => e.error,
        _ => {
            ErrorData::invalid_request(format!("server/discover rejected with HTTP {status}"), None)
        }
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(r.id.clone())),
        None,
    ))
}

/// Post `p` with `client`; answers of server `server` held to its budgets
/// (a listing page to `max_items` items, counted before decoding).
pub(crate) async fn post(
    client: &reqwest::Client,
    server: &str,
    p: Post,
    limits: StreamableHttpResponseLimits,
    max_items: usize,
) -> Result<StreamableHttpPostResponse, Error> {
    let mut req = client.post(p.uri.as_ref()).header(
        ACCEPT,
        format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
    );
    if let Some(token) = &p.auth_header {
        req = req.bearer_auth(token);
    }
    for (name, value) in &p.custom_headers {
        if RESERVED.contains(&name.as_str()) {
            return Err(Error::ReservedHeaderConflict(name.to_string()));
        }
        req = req.header(name, value);
    }
    if let Some(sid) = &p.session_id {
        req = req.header(HEADER_SESSION_ID, sid.as_ref());
    }
    let resp = req.json(&p.message).send().await?;
    let status = resp.status();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    if let Some(challenge) = header(WWW_AUTHENTICATE.as_str()) {
        if status == StatusCode::UNAUTHORIZED {
            return Err(Error::AuthRequired(AuthRequiredError::new(challenge)));
        }
        if status == StatusCode::FORBIDDEN {
            return Err(Error::InsufficientScope(InsufficientScopeError::new(
                challenge, None,
            )));
        }
    }
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && p.session_id.is_some() {
        return Err(Error::SessionExpired);
    }
    let content_type = header(CONTENT_TYPE.as_str());
    let is_json = content_type
        .as_deref()
        .is_some_and(|c| media_type_is(c, JSON_MIME_TYPE));
    let status_error = (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error())
        .then(|| HttpStatusError::new(status.as_u16(), header(RETRY_AFTER.as_str())));
    if let Some(e) = &status_error
        && (!is_json || status == StatusCode::TOO_MANY_REQUESTS)
    {
        return Err(HttpStatusError::new(e.status, e.retry_after.clone()).into());
    }
    let session = header(HEADER_SESSION_ID);
    let awaits_nothing = !matches!(p.message, ClientJsonRpcMessage::Request(_));
    if status.is_success() && resp.content_length() == Some(0) && awaits_nothing {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    let max = limits.max_json_response_size;
    if resp.content_length().is_some_and(|n| n > max as u64) && (is_json || !status.is_success()) {
        return match status.is_success() {
            true => Ok(refused(server, &p.message, &Refused::Bytes(max).why())),
            false => {
                Err(status_error.map_or(Error::ResponseBodyTooLarge { max_size: max }, Error::from))
            }
        };
    }
    if !status.is_success() {
        let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let parsed = if is_json && !auth {
            match read_json(resp.bytes_stream(), max, max_items).await? {
                Ok(body) => serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok(),
                Err(why) => {
                    tracing::warn!(server = %server, "an error answer that {} discarded", why.why());
                    None
                }
            }
        } else {
            None
        };
        if let Some(r) = discover_rejected(&p, status, parsed.clone()) {
            return Ok(r);
        }
        if let Some(e @ ServerJsonRpcMessage::Error(_)) = parsed {
            return Ok(StreamableHttpPostResponse::Json(e, session));
        }
        if let Some(e) = status_error {
            return Err(e.into());
        }
        return Err(Error::UnexpectedServerResponse(Cow::Owned(format!(
            "HTTP {status}"
        ))));
    }
    match content_type.as_deref() {
        Some(c) if media_type_is(c, EVENT_STREAM_MIME_TYPE) => Ok(StreamableHttpPostResponse::Sse(
            bounded_events(resp.bytes_stream(), limits.max_sse_event_size),
            session,
        )),
        Some(_) if is_json => match read_json(resp.bytes_stream(), max, max_items).await? {
            Err(why) => Ok(refused(server, &p.message, &why.why())),
            Ok(body) => match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(m) => Ok(StreamableHttpPostResponse::Json(m, session)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(Error::UnexpectedServerResponse(Cow::Owned(format!(
                    "could not parse the JSON answer of server {server}: {e}"
                )))),
            },
        },
        _ if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
        _ => Err(Error::UnexpectedContentType(content_type)),
    }
}

/// Why an SSE stream of a POST's answer ended.
#[derive(Debug, thiserror::Error)]
enum EventError {
    #[error("reading the stream: {0}")]
    Read(#[from] reqwest::Error),
    #[error("an SSE event of the server is larger than {0} bytes")]
    TooLarge(usize),
}

/// Bytes of the event being read (lines since the last blank one).
#[derive(Default)]
struct EventSize {
    event: usize,
    line: usize,
    after_cr: bool,
}

impl EventSize {
    fn feed(&mut self, chunk: &[u8]) -> usize {
        for &b in chunk {
            let crlf = self.after_cr && b == b'\n';
            self.after_cr = b == b'\r';
            match b {
                b'\r' | b'\n' if crlf => {}
                b'\r' | b'\n' if self.line == 0 => self.event = 0,
                b'\r' | b'\n' => self.line = 0,
                _ => {
                    self.line += 1;
                    self.event += 1;
                }
            }
        }
        self.event
    }
}

/// The SSE events of `body`, ending with an error at the first event over
/// `max` bytes.
fn bounded_events<S>(body: S, max: usize) -> Events
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    let bytes = body.scan(
        (EventSize::default(), false),
        move |(size, failed), chunk| {
            if *failed {
                return std::future::ready(None);
            }
            let item = match chunk {
                Err(e) => Err(EventError::from(e)),
                Ok(c) if size.feed(&c) > max => Err(EventError::TooLarge(max)),
                Ok(c) => Ok(c),
            };
            *failed = item.is_err();
            std::future::ready(Some(item))
        },
    );
    SseStream::from_bytes_stream(bytes).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_size_resets_at_blank_lines_of_every_ending() {
        for sep in ["\n\n", "\r\n\r\n", "\r\r"] {
            let mut s = EventSize::default();
            assert_eq!(s.feed(format!("data: abc\ndata: d{sep}").as_bytes()), 0);
            assert_eq!(s.feed(b"data: x"), 7);
        }
        let mut s = EventSize::default();
        assert_eq!(s.feed(b"data: abc\r\ndata: de\r\n"), 17);
    }

    #[test]
    fn media_types_match_by_essence() {
        assert!(media_type_is(
            "Application/JSON; charset=utf-8",
            JSON_MIME_TYPE
        ));
        assert!(!media_type_is("application/json-seq", JSON_MIME_TYPE));
    }
}
