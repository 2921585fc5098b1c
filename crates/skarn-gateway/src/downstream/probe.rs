//! A stdio server that says nothing to `server/discover` starts fast
//! (ADR 0106).
//!
//! rmcp's `Auto` lifecycle falls back to `initialize` only when the
//! server answers `server/discover` with an error, or after 10 s without
//! an answer, a delay every such legacy server paid at each start. This
//! transport layer sends `initialize` itself once `server/discover` has
//! gone unanswered for `gateway.discover_timeout` (default 1 s):
//! - the server answers `initialize` first: rmcp gets a "method not found"
//!   for its discover (so it goes the legacy way) and then, for its own
//!   `initialize`, the answer the server already gave (nothing is sent
//!   twice);
//! - the server answers `server/discover` first: that answer goes to rmcp
//!   as it is, and the answer to the early `initialize` is dropped (a
//!   legacy server's error makes rmcp send `initialize`, which then gets
//!   the early one's answer).
//!
//! Late answers to a request rmcp no longer waits for are dropped. Once
//! the handshake is over, messages pass through untouched.

use std::collections::VecDeque;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, InitializeRequest,
    InitializeRequestParams, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use tokio::time::Instant;

/// The id of the gateway's own early `initialize`.
const PROBE_ID: &str = "skarn-early-initialize";

pub(crate) struct EarlyInitialize<T> {
    inner: T,
    /// What rmcp would send as `initialize`.
    params: InitializeRequestParams,
    wait: Duration,
    /// The `server/discover` waiting for an answer, and since when.
    discover: Option<(RequestId, Instant)>,
    /// Discover ids rmcp no longer waits for (answered for it here).
    stale: Vec<RequestId>,
    /// The early `initialize` was sent.
    probed: bool,
    /// Its answer, until rmcp asks for it.
    answer: Option<ServerJsonRpcMessage>,
    /// rmcp's own `initialize`, waiting for the early one's answer.
    rmcp_init: Option<RequestId>,
    /// The early answer is no longer wanted (the server is modern).
    drop_answer: bool,
    queue: VecDeque<ServerJsonRpcMessage>,
    done: bool,
}

impl<T> EarlyInitialize<T> {
    pub(crate) fn new(inner: T, params: InitializeRequestParams, wait: Duration) -> Self {
        EarlyInitialize {
            inner,
            params,
            wait,
            discover: None,
            stale: Vec::new(),
            probed: false,
            answer: None,
            rmcp_init: None,
            drop_answer: false,
            queue: VecDeque::new(),
            done: false,
        }
    }
}

fn probe_id() -> RequestId {
    RequestId::String(PROBE_ID.into())
}

fn id_of(m: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match m {
        JsonRpcMessage::Response(r) => Some(&r.id),
        JsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

fn with_id(m: ServerJsonRpcMessage, id: RequestId) -> ServerJsonRpcMessage {
    match m {
        JsonRpcMessage::Response(mut r) => {
            r.id = id;
            JsonRpcMessage::Response(r)
        }
        JsonRpcMessage::Error(mut e) => {
            e.id = Some(id);
            JsonRpcMessage::Error(e)
        }
        other => other,
    }
}

impl<T: Transport<RoleClient>> EarlyInitialize<T> {
    /// Sort one message from the server: `None` when it is kept back.
    fn sort(&mut self, m: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let Some(id) = id_of(&m).cloned() else {
            return Some(m);
        };
        if id == probe_id() {
            if self.drop_answer {
                return None;
            }
            if let Some(rmcp_id) = self.rmcp_init.take() {
                self.done = true;
                return Some(with_id(m, rmcp_id));
            }
            self.answer = Some(m);
            // rmcp still waits for its discover: tell it the server is legacy.
            if let Some((d, _)) = self.discover.take() {
                self.stale.push(d.clone());
                let e = ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "no answer to server/discover; the server answered initialize",
                    None,
                );
                return Some(JsonRpcMessage::error(e, Some(d)));
            }
            return None;
        }
        if self.stale.contains(&id) {
            return None;
        }
        if self.discover.as_ref().is_some_and(|(d, _)| *d == id) {
            self.discover = None;
            if matches!(m, JsonRpcMessage::Response(_)) {
                // A modern server: the early initialize's answer is not wanted.
                self.drop_answer = true;
                self.done = !self.probed;
            }
        }
        Some(m)
    }
}

impl<T> Transport<RoleClient> for EarlyInitialize<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        use futures::FutureExt;
        if !self.done
            && let JsonRpcMessage::Request(r) = &item
        {
            match &r.request {
                ClientRequest::DiscoverRequest(_) => {
                    self.discover = Some((r.id.clone(), Instant::now()));
                }
                ClientRequest::InitializeRequest(_) if self.probed => {
                    // Answered by the early one (now or when it comes).
                    match self.answer.take() {
                        Some(a) => {
                            self.queue.push_back(with_id(a, r.id.clone()));
                            self.done = true;
                        }
                        None => {
                            self.drop_answer = false;
                            self.rmcp_init = Some(r.id.clone());
                        }
                    }
                    return futures::future::ready(Ok(())).left_future();
                }
                ClientRequest::InitializeRequest(_) => self.done = true,
                _ => {}
            }
        }
        self.inner.send(item).right_future()
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(m) = self.queue.pop_front() {
                return Some(m);
            }
            let due = match &self.discover {
                Some((_, since)) if !self.probed && !self.done => Some(*since + self.wait),
                _ => None,
            };
            let m = match due {
                None => self.inner.receive().await?,
                Some(at) => {
                    tokio::select! {
                        m = self.inner.receive() => m?,
                        _ = tokio::time::sleep_until(at) => {
                            self.probed = true;
                            let init = ClientJsonRpcMessage::request(
                                ClientRequest::InitializeRequest(InitializeRequest::new(
                                    self.params.clone(),
                                )),
                                probe_id(),
                            );
                            if self.inner.send(init).await.is_err() {
                                return None;
                            }
                            continue;
                        }
                    }
                }
            };
            if self.done && self.stale.is_empty() && !self.probed {
                return Some(m);
            }
            if let Some(m) = self.sort(m) {
                return Some(m);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{InitializeResult, ServerResult};

    struct Nothing;
    impl Transport<RoleClient> for Nothing {
        type Error = std::io::Error;
        fn send(
            &mut self,
            _item: ClientJsonRpcMessage,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            futures::future::ready(Ok(()))
        }
        async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
            None
        }
        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn init_answer(id: RequestId) -> ServerJsonRpcMessage {
        let r: InitializeResult = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "legacy", "version": "1"}
        }))
        .unwrap();
        JsonRpcMessage::response(ServerResult::InitializeResult(r), id)
    }

    #[test]
    fn a_server_that_answers_only_initialize_is_taken_as_legacy() {
        let mut t = EarlyInitialize::new(Nothing, Default::default(), Duration::ZERO);
        let d = RequestId::Number(1);
        t.discover = Some((d.clone(), Instant::now()));
        t.probed = true;
        // The early initialize is answered: rmcp's discover gets -32601.
        let m = t.sort(init_answer(probe_id())).unwrap();
        let (e, id) = m.into_error().unwrap();
        assert_eq!(id, Some(d.clone()));
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        // rmcp's own initialize is answered from it, under its own id.
        let own = RequestId::Number(2);
        let init = ClientJsonRpcMessage::request(
            ClientRequest::InitializeRequest(InitializeRequest::new(Default::default())),
            own.clone(),
        );
        drop(t.send(init));
        let (r, id) = t.queue.pop_front().unwrap().into_response().unwrap();
        assert_eq!(id, own);
        assert!(matches!(r, ServerResult::InitializeResult(_)));
        // A late answer to the discover is dropped.
        assert!(t.sort(init_answer(d)).is_none());
    }

    #[test]
    fn a_modern_answer_wins_and_the_early_answer_is_dropped() {
        let mut t = EarlyInitialize::new(Nothing, Default::default(), Duration::ZERO);
        let d = RequestId::Number(1);
        t.discover = Some((d.clone(), Instant::now()));
        t.probed = true;
        let discovered = init_answer(d.clone());
        assert!(t.sort(discovered).is_some());
        assert!(t.sort(init_answer(probe_id())).is_none());
    }
}
