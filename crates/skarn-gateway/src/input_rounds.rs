//! `input_required` rounds for 2026-07-28 clients (ADR 0088).
//!
//! A modern client's `tools/call` (and `prompts/get`, `resources/read`)
//! runs as a task of its own. When a
//! downstream server asks something only the client can answer
//! (elicitation, sampling, roots; see `relay::rounds`), the call is parked
//! under a random `requestState` and the client gets an `input_required`
//! result carrying the questions; its retry with `inputResponses` and that
//! state hands the answers to the waiting server and resumes waiting, for
//! the final result or the next round. A legacy (2025-11-25) client is
//! asked directly over its session, as before.
//!
//! A parked call lives in this gateway instance only: behind a load
//! balancer, the retry must reach the same instance (docs/gateway.md,
//! "Several instances"); elsewhere it gets an error that says so. Parked
//! calls are bounded in number and dropped after the client-request
//! timeout, which also fails the server's waiting request.

use std::collections::HashMap;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InputRequests, InputRequiredResult, InputResponses, ReadResourceRequestParams,
    ReadResourceResponse,
};
use rmcp::service::RequestContext;
use tokio::sync::oneshot;

use crate::relay::Caller;
use crate::relay::parked::{Finished, ParkedCall};
use crate::relay::rounds::Rounds;
use crate::server::GatewayServer;
use futures::future::BoxFuture;

/// A round's answer to the client: the end, or more questions.
enum Outcome {
    Done(Finished),
    Ask(InputRequiredResult),
}

type Start = Box<dyn FnOnce(Caller) -> BoxFuture<'static, Result<Finished, ErrorData>> + Send>;

impl GatewayServer {
    /// `tools/call` of a 2026-07-28 client: run or resume the call, and
    /// answer with its result or with the next round of questions.
    pub(crate) async fn call_in_rounds(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let me = self.clone();
        let name = request.name.to_string();
        let args = request.arguments;
        let start: Start = Box::new(move |caller| {
            Box::pin(async move {
                me.dispatch_call(&name, args, caller)
                    .await
                    .map(Finished::Tool)
            })
        });
        let what = format!("tools/call {}", request.name);
        let state = request.request_state;
        match self
            .rounds(what, request.input_responses, state, &context, start)
            .await?
        {
            Outcome::Done(Finished::Tool(r)) => {
                Ok(CallToolResponse::Complete(crate::era::call_complete(r)))
            }
            Outcome::Ask(ir) => Ok(CallToolResponse::InputRequired(ir)),
            Outcome::Done(_) => Err(ErrorData::internal_error("unexpected result", None)),
        }
    }

    /// `prompts/get` of a 2026-07-28 client, in rounds like a tool call.
    pub(crate) async fn prompt_in_rounds(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let what = format!("prompts/get {}", request.name);
        let answers = request.input_responses.clone();
        let state = request.request_state.clone();
        let me = self.clone();
        let mut fresh = request;
        fresh.input_responses = None;
        fresh.request_state = None;
        let start: Start = Box::new(move |caller| {
            Box::pin(async move {
                me.get_prompt_for(fresh, Some(caller))
                    .await
                    .map(Finished::Prompt)
            })
        });
        match self.rounds(what, answers, state, &context, start).await? {
            Outcome::Done(Finished::Prompt(r)) => {
                Ok(GetPromptResponse::Complete(crate::era::prompt_complete(r)))
            }
            Outcome::Ask(ir) => Ok(GetPromptResponse::InputRequired(ir)),
            Outcome::Done(_) => Err(ErrorData::internal_error("unexpected result", None)),
        }
    }

    /// `resources/read` of a 2026-07-28 client, in rounds like a tool call
    /// (the owning server may ask during the read).
    pub(crate) async fn read_in_rounds(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let what = format!("resources/read {}", request.uri);
        let answers = request.input_responses.clone();
        let state = request.request_state.clone();
        let me = self.clone();
        let uri = request.uri;
        let start: Start = Box::new(move |caller| {
            Box::pin(async move {
                me.read_resource_for(&uri, Some(caller))
                    .await
                    .map(Finished::Resource)
            })
        });
        match self.rounds(what, answers, state, &context, start).await? {
            Outcome::Done(Finished::Resource(r)) => {
                Ok(ReadResourceResponse::Complete(crate::era::read_complete(r)))
            }
            Outcome::Ask(ir) => Ok(ReadResourceResponse::InputRequired(ir)),
            Outcome::Done(_) => Err(ErrorData::internal_error("unexpected result", None)),
        }
    }

    async fn rounds(
        &self,
        what: String,
        answers: Option<InputResponses>,
        request_state: Option<String>,
        context: &RequestContext<RoleServer>,
        start: Start,
    ) -> Result<Outcome, ErrorData> {
        let relay = self.gw.shared.relay.clone();
        let mut call = match request_state.as_deref() {
            Some(state) => {
                let mut c = relay.parked.take(state).ok_or_else(|| {
                    ErrorData::invalid_params(
                        "unknown requestState: the call it continues was made on another gateway instance, or its answers came too late",
                        None,
                    )
                })?;
                if c.what != what {
                    return Err(ErrorData::invalid_params(
                        "requestState belongs to another request",
                        None,
                    ));
                }
                c.rounds.set_attended(true);
                let mut answers = answers.unwrap_or_default();
                // A question left unanswered is asked again.
                let asked = std::mem::take(&mut c.pending);
                for (key, (question, reply)) in asked {
                    match answers.remove(&key) {
                        Some(v) => {
                            let _ = reply.send(v);
                        }
                        None => {
                            c.pending.insert(key, (question, reply));
                        }
                    }
                }
                c
            }
            None => {
                let caps = context.client_capabilities().unwrap_or_default();
                let (rounds, asks) = Rounds::new(caps, answers);
                let mut caller = self.caller(context);
                caller.rounds = Some(rounds.clone());
                let (tx, result) = oneshot::channel();
                tokio::spawn(async move {
                    let _ = tx.send(start(caller).await);
                });
                ParkedCall {
                    what,
                    result,
                    asks,
                    rounds,
                    pending: HashMap::new(),
                    next_key: 0,
                }
            }
        };
        if call.pending.is_empty() {
            tokio::select! {
                r = &mut call.result => {
                    return match r {
                        Ok(r) => r.map(Outcome::Done),
                        Err(_) => Err(ErrorData::internal_error("the call ended without a result", None)),
                    };
                }
                Some(first) = call.asks.recv() => call.add(first),
            }
        }
        // Questions asked together go out in one round.
        for _ in 0..4 {
            tokio::task::yield_now().await;
            while let Ok(more) = call.asks.try_recv() {
                call.add(more);
            }
        }
        let requests: InputRequests = call
            .pending
            .iter()
            .map(|(k, (q, _))| (k.clone(), q.clone()))
            .collect();
        call.rounds.set_attended(false);
        let state = relay.parked.park(call)?;
        // Dropped after the answer timeout (which has failed the server's
        // waiting requests by then).
        let timeout = std::time::Duration::from_secs_f64(
            self.gw.config.gateway.client_request_timeout.max(0.0),
        );
        let later = relay.clone();
        let s2 = state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            later.parked.take(&s2);
        });
        Ok(Outcome::Ask(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }
}
