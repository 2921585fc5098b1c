//! Requests to one downstream server, each with its per-call timeout;
//! a lost transport marks the server crashed.
// Logging is deprecated in rmcp (SEP-2577) but clients still use it.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, CompleteRequestParams,
    CompleteResult, ReadResourceRequestParams, ReadResourceResult, ServerResult,
    SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde_json::{Map, Value};

use crate::downstream::{Conn, DownError, Downstream};
use crate::relay::Caller;
use crate::sync_util::short;

impl Downstream {
    /// Call one tool with the per-call timeout.
    pub async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, DownError> {
        self.call_tool_as(tool, args, None).await
    }

    /// Call one tool for `caller`: the server's progress notifications go
    /// to the caller under its own progress token, and its sampling,
    /// elicitation and roots requests meanwhile to the caller's client.
    pub async fn call_tool_as(
        self: &Arc<Self>,
        tool: &str,
        args: Option<Map<String, Value>>,
        caller: Option<&Caller>,
    ) -> Result<CallToolResult, DownError> {
        let conn = self.ready().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args;
        params.input_responses = caller
            .and_then(|c| c.rounds.as_ref())
            .and_then(|r| r.take_first_answers());
        let t = self.cfg.call_timeout;
        let relay = &self.shared.relay;
        let _calling = caller.map(|c| relay.calling(Some(self.index), c));
        let peer = conn.service.peer().clone();
        // A 2025-11-25 server's tool may run only as a task (down_tasks).
        let legacy = !crate::downstream::era::is_modern(&peer);
        let ttl = t.as_millis() as u64;
        let call = async {
            if legacy && conn.tasks.known_required(tool) {
                let args = params.arguments.clone();
                return crate::downstream::tasks::call_as_task(&peer, tool, args, ttl).await;
            }
            // A 2026-07-28 server may answer `input_required`: each round
            // is relayed and the call retried (down_rounds).
            for _ in 0..crate::downstream::rounds::MAX_ROUNDS {
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
                let handle = peer
                    .send_request_with_option(
                        request,
                        crate::downstream::rounds::options_for(caller),
                    )
                    .await?;
                let _progress = caller.and_then(|c| {
                    relay.track_progress(self.index, handle.progress_token.clone(), c)
                });
                let answer = handle.await_response().await?;
                if let (Some(_), Some(c)) = (&_progress, caller) {
                    let received = conn.wire.progress_received();
                    relay.settle_progress(&conn.wire, received, c).await;
                }
                match answer {
                    ServerResult::CallToolResult(r) if legacy && conn.tasks.refused(tool, &r) => {
                        let args = params.arguments.clone();
                        return crate::downstream::tasks::call_as_task(&peer, tool, args, ttl)
                            .await;
                    }
                    ServerResult::CallToolResult(r) => return Ok(r),
                    ServerResult::InputRequiredResult(ir) => {
                        let (responses, state) = crate::downstream::rounds::fulfil(
                            relay,
                            self.index,
                            &self.cfg.alias,
                            ir,
                        )
                        .await?;
                        params.input_responses = responses;
                        params.request_state = state;
                    }
                    _ => return Err(ServiceError::UnexpectedResponse),
                }
            }
            Err(ServiceError::InputRequiredRoundsExceeded {
                max_rounds: crate::downstream::rounds::MAX_ROUNDS,
            })
        };
        self.timed(&conn, || format!("{}.{tool}", self.cfg.alias), call)
            .await
    }

    /// Read one resource with the per-call timeout.
    pub async fn read_resource(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<ReadResourceResult, DownError> {
        self.read_resource_as(uri, None).await
    }

    /// Read one resource for `caller`: a 2025-11-25 server's questions
    /// during the read go to the caller's client (or its rounds), and a
    /// 2026-07-28 server's `input_required` answers are fulfilled the same
    /// way and the read retried (down_rounds).
    pub async fn read_resource_as(
        self: &Arc<Self>,
        uri: &str,
        caller: Option<&Caller>,
    ) -> Result<ReadResourceResult, DownError> {
        let conn = self.ready().await?;
        let params = ReadResourceRequestParams::new(uri);
        let relay = &self.shared.relay;
        let _calling = caller.map(|c| relay.calling(Some(self.index), c));
        let peer = conn.service.peer().clone();
        let read = self.retried_for_input(
            &peer,
            params,
            |p| ClientRequest::ReadResourceRequest(rmcp::model::ReadResourceRequest::new(p)),
            |answer| match answer {
                ServerResult::ReadResourceResult(r) => Some(r),
                _ => None,
            },
        );
        self.timed(&conn, || format!("{} resources/read", self.cfg.alias), read)
            .await
    }

    /// Get one prompt with the per-call timeout.
    pub async fn get_prompt(
        self: &Arc<Self>,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, DownError> {
        let conn = self.ready().await?;
        let mut params = rmcp::model::GetPromptRequestParams::default();
        params.name = name.to_owned();
        params.arguments = args;
        let peer = conn.service.peer().clone();
        // A 2026-07-28 server may answer `input_required` (down_rounds).
        let get = self.retried_for_input(
            &peer,
            params,
            |p| ClientRequest::GetPromptRequest(rmcp::model::GetPromptRequest::new(p)),
            |answer| match answer {
                ServerResult::GetPromptResult(r) => Some(r),
                _ => None,
            },
        );
        self.timed(&conn, || format!("{} prompts/get", self.cfg.alias), get)
            .await
    }

    /// `completion/complete`, for one of its prompts or templates.
    pub async fn complete(
        self: &Arc<Self>,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, DownError> {
        let conn = self.ready().await?;
        let supported = conn
            .service
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.completions.is_some());
        if !supported {
            return Ok(CompleteResult::default());
        }
        let complete = conn.service.peer().complete(params);
        self.timed(
            &conn,
            || format!("{} completion/complete", self.cfg.alias),
            complete,
        )
        .await
    }

    /// `resources/subscribe` (or unsubscribe) for one of its resources.
    #[allow(deprecated)]
    pub async fn subscribe(self: &Arc<Self>, uri: &str, on: bool) -> Result<(), DownError> {
        let conn = self.ready().await?;
        let supported = conn.service.peer().peer_info().is_some_and(|i| {
            i.capabilities
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true))
        });
        if !supported {
            return Err(DownError::Rejected(format!(
                "server {} does not offer resource subscriptions",
                self.cfg.alias
            )));
        }
        let peer = conn.service.peer();
        if crate::downstream::era::is_modern(peer) {
            // 2026-07-28: one listen stream per subscribed URI.
            let relay = self.shared.relay.clone();
            let listen = conn.listens.set(peer, relay, self.index, uri, on);
            let what = || format!("{} subscriptions/listen", self.cfg.alias);
            return self.timed(&conn, what, listen).await;
        }
        let uri = serde_json::json!({ "uri": uri });
        let bad = |e: serde_json::Error| DownError::Rejected(e.to_string());
        let what = || format!("{} resources/subscribe", self.cfg.alias);
        if on {
            let p: SubscribeRequestParams = serde_json::from_value(uri).map_err(bad)?;
            self.timed(&conn, what, peer.subscribe(p)).await
        } else {
            let p: UnsubscribeRequestParams = serde_json::from_value(uri).map_err(bad)?;
            self.timed(&conn, what, peer.unsubscribe(p)).await
        }
    }

    /// Pass the clients' log level on, if the server logs.
    #[allow(deprecated)]
    pub async fn set_level(self: &Arc<Self>, level: rmcp::model::LoggingLevel) {
        let Some(conn) = crate::sync_util::lock(&self.conn).clone() else {
            return;
        };
        let peer = conn.service.peer();
        let logs = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.logging.is_some());
        if logs
            && let Ok(p) = serde_json::from_value::<SetLevelRequestParams>(
                serde_json::json!({ "level": level }),
            )
        {
            let _ = tokio::time::timeout(self.cfg.call_timeout, peer.set_level(p)).await;
        }
    }

    /// `request` under the per-call timeout; a server's error is turned
    /// into the gateway's (a lost transport marks the server crashed).
    async fn timed<R>(
        &self,
        conn: &Arc<Conn>,
        what: impl FnOnce() -> String,
        request: impl std::future::Future<Output = Result<R, ServiceError>>,
    ) -> Result<R, DownError> {
        let t = self.cfg.call_timeout;
        match tokio::time::timeout(t, request).await {
            Err(_) => Err(DownError::Timeout {
                what: what(),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(conn, e)),
        }
    }

    /// Send one request, and again after each `input_required` answer of
    /// a 2026-07-28 server with the answers and its state (down_rounds),
    /// at most `MAX_ROUNDS` times; `pick` takes the expected result.
    async fn retried_for_input<P: Clone + InputRound, R>(
        &self,
        peer: &rmcp::Peer<rmcp::RoleClient>,
        mut params: P,
        request: impl Fn(P) -> ClientRequest,
        pick: impl Fn(ServerResult) -> Option<R>,
    ) -> Result<R, ServiceError> {
        let relay = &self.shared.relay;
        for _ in 0..crate::downstream::rounds::MAX_ROUNDS {
            match peer.send_request(request(params.clone())).await? {
                ServerResult::InputRequiredResult(ir) => {
                    let (responses, state) =
                        crate::downstream::rounds::fulfil(relay, self.index, &self.cfg.alias, ir)
                            .await?;
                    params.answered(responses, state);
                }
                other => return pick(other).ok_or(ServiceError::UnexpectedResponse),
            }
        }
        Err(ServiceError::InputRequiredRoundsExceeded {
            max_rounds: crate::downstream::rounds::MAX_ROUNDS,
        })
    }

    /// A server's error as the gateway's: its message escaped (atk25d
    /// F2), since the gateway's own error lines quote it.
    pub(crate) fn service_error(&self, conn: &Arc<Conn>, e: ServiceError) -> DownError {
        let e = match e {
            ServiceError::McpError(mut data) => {
                data.message = crate::text_safe::visible(&data.message).into();
                ServiceError::McpError(data)
            }
            other => other,
        };
        match e {
            ServiceError::McpError(data) if data.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                DownError::InvalidParams(data.message.to_string())
            }
            ServiceError::McpError(data)
                if data.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND =>
            {
                DownError::NotFound(data.message.to_string())
            }
            ServiceError::McpError(data)
                if data.code == rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                DownError::MissingCapability {
                    message: data.message.to_string(),
                    data: data.data,
                }
            }
            ServiceError::McpError(data) => DownError::Rejected(data.message.to_string()),
            ServiceError::Timeout { timeout } => DownError::Timeout {
                what: self.cfg.alias.clone(),
                timeout_ms: timeout.as_millis() as u64,
            },
            other => {
                if let Some(cause) = conn.cut_off() {
                    self.mark_crashed(conn, cause.clone());
                    return DownError::Unavailable {
                        server: self.cfg.alias.clone(),
                        reason: format!("was {cause}"),
                    };
                }
                // Transport gone: the server crashed mid-call.
                let mut cause = format!("connection lost during a call ({})", short(&other));
                // Let the service notice the closed pipe and stderr drain.
                std::thread::yield_now();
                if let Some(line) = conn.last_stderr() {
                    cause.push_str(&format!("; last stderr line: {line}"));
                }
                self.mark_crashed(conn, cause.clone());
                DownError::Unavailable {
                    server: self.cfg.alias.clone(),
                    reason: format!("crashed: {cause}"),
                }
            }
        }
    }
}

/// Request parameters a 2026-07-28 server's `input_required` answer is
/// echoed into when the request is sent again.
trait InputRound {
    fn answered(&mut self, responses: Option<rmcp::model::InputResponses>, state: Option<String>);
}

impl InputRound for ReadResourceRequestParams {
    fn answered(&mut self, responses: Option<rmcp::model::InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
}

impl InputRound for rmcp::model::GetPromptRequestParams {
    fn answered(&mut self, responses: Option<rmcp::model::InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
}
