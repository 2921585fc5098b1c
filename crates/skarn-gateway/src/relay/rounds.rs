//! The relay's side of `input_required` rounds (ADR 0088): a downstream's
//! sampling, elicitation or roots request during the call of a 2026-07-28
//! client cannot be sent to that client (it has no session to receive
//! requests on); it is handed instead to the call's [`Rounds`], which the
//! upstream handler turns into an `input_required` result, and waits for
//! the answer the client sends with its retry. Which call gets it, the
//! per-server bounds and the answer timeout are the same as for a
//! 2025-11-25 client; whether the client can answer is read from the
//! capabilities in the request's own `_meta`.
#![allow(deprecated)]

use rmcp::model::{ClientCapabilities, InputRequest};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::*;

/// One request raised during a call, waiting for the client's answer.
pub struct Ask {
    /// The downstream's name for the question, if it gave one.
    pub key: Option<String>,
    pub request: InputRequest,
    pub reply: oneshot::Sender<Value>,
}

/// The rounds of one call of a 2026-07-28 client.
pub struct Rounds {
    /// What the client declared in the request's `_meta`.
    pub caps: ClientCapabilities,
    asks: mpsc::UnboundedSender<Ask>,
    /// Answers the client sent with its first request (no `requestState`):
    /// given to the first downstream call, which may complete with them.
    first_answers: Mutex<Option<rmcp::model::InputResponses>>,
    /// Whether a request of the client is being served for this call now
    /// (the first one, or a retry), rather than the call waiting parked
    /// for a retry that may never come: a server's question then belongs
    /// to it (`Relay::pick`).
    attended: std::sync::atomic::AtomicBool,
}

impl Rounds {
    pub fn new(
        caps: ClientCapabilities,
        first_answers: Option<rmcp::model::InputResponses>,
    ) -> (Arc<Rounds>, mpsc::UnboundedReceiver<Ask>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let first_answers = Mutex::new(first_answers);
        (
            Arc::new(Rounds {
                caps,
                asks: tx,
                first_answers,
                attended: std::sync::atomic::AtomicBool::new(true),
            }),
            rx,
        )
    }

    /// The client's unsolicited answers, once.
    pub fn take_first_answers(&self) -> Option<rmcp::model::InputResponses> {
        lock(&self.first_answers).take()
    }

    /// Note whether a request of the client is being served for the call.
    pub fn set_attended(&self, now: bool) {
        self.attended
            .store(now, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a request of the client is being served for the call.
    pub fn attended(&self) -> bool {
        self.attended.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Relay {
    /// Ask the client of `rounds` through an `input_required` round,
    /// within the per-server bounds and timeout of every client request.
    pub(crate) async fn ask_in_round(
        &self,
        server: usize,
        what: &'static str,
        rounds: &Rounds,
        request: InputRequest,
    ) -> Result<Value, ErrorData> {
        // The rate applies as to any request of the server; the in-flight
        // cap does not: a question waits for a client that may never come
        // back (a stateless client may abandon a round), and the waiting
        // calls are bounded by the parked-call cap instead.
        drop(
            self.asks
                .admit(server, what, Instant::now())
                .map_err(|e| ErrorData::new(ErrorCode::INTERNAL_ERROR, e.to_string(), None))?,
        );
        let (reply, answer) = oneshot::channel();
        let key = crate::downstream::rounds::INPUT_KEY
            .try_with(Clone::clone)
            .ok();
        rounds
            .asks
            .send(Ask {
                key,
                request,
                reply,
            })
            .map_err(|_| {
                ErrorData::internal_error("the client's call ended before this request", None)
            })?;
        let timeout = self.asks.limits().timeout;
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(ErrorData::internal_error(
                format!("the client did not answer this {what} request"),
                None,
            )),
            Err(_) => Err(ErrorData::internal_error(
                format!(
                    "the client did not answer this {what} request within {timeout:?} (gateway.client_request_timeout)"
                ),
                None,
            )),
        }
    }

    /// `what` cannot be forwarded: the client did not declare it.
    pub(crate) fn undeclared(what: &str) -> ErrorData {
        ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "the client did not declare the {what} capability, so the gateway cannot forward this request (it never answers on the user's behalf)"
            ),
            None,
        )
    }
}

/// An answer of the client, as the type the server asked for.
pub(crate) fn answer<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| {
        ErrorData::invalid_params(format!("the client's answer is malformed: {e}"), None)
    })
}

impl Relay {
    pub(crate) async fn sampling_round(
        &self,
        server: usize,
        rounds: &Rounds,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampling) = &rounds.caps.sampling else {
            return Err(Relay::undeclared("sampling"));
        };
        // As on the 2025-11-25 path: tools only to a client that declared
        // sampling tools (attack finding F7b).
        if (params.tools.is_some() || params.tool_choice.is_some()) && sampling.tools.is_none() {
            return Err(Relay::undeclared("sampling tools"));
        }
        params
            .validate()
            .map_err(|e| ErrorData::invalid_params(e, None))?;
        let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
        answer(
            self.ask_in_round(server, "sampling", rounds, request)
                .await?,
        )
    }

    pub(crate) async fn elicitation_round(
        &self,
        server: usize,
        rounds: &Rounds,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(e) = &rounds.caps.elicitation else {
            return Err(Relay::undeclared("elicitation"));
        };
        // The mode must be one the client declared (attack finding F7):
        // URL mode only with `url`; `{}` is form mode (2025-06-18).
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        if url && e.url.is_none() {
            return Err(Relay::undeclared("URL-mode elicitation"));
        }
        if !url && e.form.is_none() && e.url.is_some() {
            return Err(Relay::undeclared("form-mode elicitation"));
        }
        let request = InputRequest::Elicitation(ElicitRequest::new(params));
        answer(
            self.ask_in_round(server, "elicitation", rounds, request)
                .await?,
        )
    }

    /// No roots when the client offers none, as for 2025-11-25 clients.
    pub(crate) async fn roots_round(
        &self,
        server: usize,
        rounds: &Rounds,
    ) -> Result<ListRootsResult, ErrorData> {
        if rounds.caps.roots.is_none() {
            return Ok(ListRootsResult::default());
        }
        let request = InputRequest::ListRoots(ListRootsRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        answer(self.ask_in_round(server, "roots", rounds, request).await?)
    }
}
