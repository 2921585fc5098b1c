//! Requests of downstream servers that only the client can answer
//! (sampling, elicitation, roots): which client gets them, and the
//! per-server bound (`client_asks`) they pass first.
// Sampling and roots are deprecated in rmcp (SEP-2577) but are part of
// every protocol revision a client speaks today.
#![allow(deprecated)]

use super::*;
use rmcp::model::{ContextInclusion, RequestMetaObject};

fn forwarded(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    }
}

/// `_meta` key naming the downstream server a request comes from.
pub const SERVER_META_KEY: &str = "io.skarn/server";

fn name_server(meta: &mut RequestMetaObject, alias: &str) {
    meta.0
        .0
        .insert(SERVER_META_KEY.into(), serde_json::Value::from(alias));
}

impl Relay {
    /// Who a request of `server` goes to: the client of the most recent
    /// call in flight to that server, else of the most recent call or
    /// script in flight, else the most recently connected client.
    fn target(&self, server: usize) -> Option<Peer<RoleServer>> {
        let from_call = {
            let callers = lock(&self.callers);
            let live = |c: &&(u64, Option<usize>, Caller)| !c.2.peer.is_transport_closed();
            let mine = callers
                .iter()
                .rev()
                .filter(live)
                .find(|(_, s, _)| *s == Some(server));
            mine.or_else(|| callers.iter().rev().find(live))
                .map(|(_, _, c)| c.peer.clone())
        };
        from_call.or_else(|| self.clients().last().map(|(_, p, _)| p.clone()))
    }

    /// Whether a call to `server` is in flight (directly or from a script).
    fn busy(&self, server: usize) -> bool {
        lock(&self.callers)
            .iter()
            .any(|(_, s, c)| *s == Some(server) && !c.peer.is_transport_closed())
    }

    /// The client a sampling or elicitation request of `server` goes to:
    /// only while the client is calling that server (unless
    /// `client_requests_from_idle_servers`), and only if the client
    /// declared what `has` checks.
    fn target_with(
        &self,
        server: usize,
        alias: &str,
        what: &str,
        has: impl Fn(&Peer<RoleServer>) -> bool,
    ) -> Result<Peer<RoleServer>, ErrorData> {
        if !self.asks.limits().from_idle && !self.busy(server) {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the gateway refused this {what} request of server {alias:?}: no call to it is in flight, and only a server the client is calling may ask the client or the user (gateway.client_requests_from_idle_servers = false)"
                ),
                None,
            ));
        }
        let peer = self.target(server).ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("no client is connected to the gateway to answer {what}"),
                None,
            )
        })?;
        if !has(&peer) {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the client did not declare the {what} capability, so the gateway cannot forward this request (it never answers on the user's behalf)"
                ),
                None,
            ));
        }
        Ok(peer)
    }

    /// Send `request` (a `what` request of `server`) to `peer`, within the
    /// per-server bounds: refused at once past the in-flight cap or the
    /// rate, and after the timeout the server gets an error while the SDK
    /// sends the client `notifications/cancelled` for it.
    async fn ask(
        &self,
        server: usize,
        what: &'static str,
        peer: &Peer<RoleServer>,
        request: ServerRequest,
    ) -> Result<ClientResult, ErrorData> {
        let _permit = self
            .asks
            .admit(server, what, Instant::now())
            .map_err(|e| ErrorData::new(ErrorCode::INTERNAL_ERROR, e.to_string(), None))?;
        let timeout = self.asks.limits().timeout;
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await
            .map_err(forwarded)?;
        handle.await_response().await.map_err(|e| match e {
            ServiceError::Timeout { .. } => ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "the client did not answer this {what} request within {:?} (gateway.client_request_timeout); the gateway cancelled it",
                    timeout
                ),
                None,
            ),
            other => forwarded(other),
        })
    }

    /// `sampling/createMessage` from downstream server `alias`: named in
    /// `_meta` and in the system prompt, and never given other servers'
    /// context (`includeContext` becomes `none`: to the client, every
    /// downstream server is this gateway).
    pub async fn create_message(
        &self,
        server: usize,
        alias: &str,
        mut params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        if params.include_context.is_some() {
            params.include_context = Some(ContextInclusion::None);
        }
        let by = format!("(Requested by the MCP server {alias:?} through skarn.)");
        params.system_prompt = Some(match params.system_prompt.take() {
            Some(p) => format!("{by}\n{}", crate::text_safe::visible_block(&p)),
            None => by,
        });
        // The messages are shown for approval too (atk25c F2).
        crate::text_safe::visible_typed(&mut params.messages, &[]);
        name_server(params.meta.get_or_insert_with(Default::default), alias);
        // A 2026-07-28 client's call in flight for this server: asked in
        // an input_required round of that call.
        if let Some(r) = self.rounds_for(server) {
            return self.sampling_round(server, &r, params).await;
        }
        let peer = self.target_with(server, alias, "sampling", |p| {
            p.peer_info()
                .is_some_and(|i| i.capabilities.sampling.is_some())
        })?;
        // The checks rmcp's `Peer::create_message` makes.
        if (params.tools.is_some() || params.tool_choice.is_some())
            && !peer.supports_sampling_tools()
        {
            return Err(ErrorData::invalid_params(
                "tools or toolChoice provided but the client does not support the sampling tools capability",
                None,
            ));
        }
        params
            .validate()
            .map_err(|e| ErrorData::invalid_params(e, None))?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.ask(server, "sampling", &peer, request).await? {
            ClientResult::CreateMessageResult(r) => Ok(*r),
            _ => Err(forwarded(ServiceError::UnexpectedResponse)),
        }
    }

    /// `elicitation/create` from downstream server `alias`: its message
    /// starts with the server's name (and `_meta` names it); a mode the
    /// client did not declare (URL mode, unless it declared `url`) is
    /// refused.
    pub async fn create_elicitation(
        &self,
        server: usize,
        alias: &str,
        mut params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let shown = format!("[MCP server {alias:?} asks, through skarn] ");
        // The form's labels are shown too (atk25c F1): every string of
        // the requested schema, escaped as the message is.
        if let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = &mut params
        {
            crate::text_safe::visible_typed(requested_schema, &[]);
        }
        match &mut params {
            ElicitRequestParams::FormElicitationParams { meta, message, .. }
            | ElicitRequestParams::UrlElicitationParams { meta, message, .. } => {
                *message = format!("{shown}{}", crate::text_safe::visible_block(message));
                name_server(meta.get_or_insert_with(Default::default), alias);
            }
            // A mode this gateway does not know: not forwarded.
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    "the gateway does not forward this kind of elicitation",
                    None,
                ));
            }
        }
        if let Some(r) = self.rounds_for(server) {
            return self.elicitation_round(server, &r, params).await;
        }
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        let mode = if url {
            "URL-mode elicitation"
        } else {
            "elicitation"
        };
        let peer = self.target_with(server, alias, mode, |p| {
            p.peer_info().is_some_and(|i| {
                i.capabilities.elicitation.as_ref().is_some_and(|e| {
                    if url {
                        e.url.is_some()
                    } else {
                        // `{}` is form mode (2025-06-18).
                        e.form.is_some() || e.url.is_none()
                    }
                })
            })
        })?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self.ask(server, "elicitation", &peer, request).await? {
            ClientResult::ElicitResult(r) => Ok(r),
            _ => Err(forwarded(ServiceError::UnexpectedResponse)),
        }
    }

    /// `roots/list` from a downstream server: the client's roots, or none
    /// when no client offers roots; forwarded within the same per-server
    /// bounds as sampling and elicitation.
    pub async fn list_roots(&self, server: usize) -> Result<ListRootsResult, ErrorData> {
        if let Some(r) = self.rounds_for(server) {
            return self.roots_round(server, &r).await;
        }
        let Some(peer) = self.target(server) else {
            return Ok(ListRootsResult::default());
        };
        if peer
            .peer_info()
            .is_none_or(|i| i.capabilities.roots.is_none())
        {
            return Ok(ListRootsResult::default());
        }
        let request = ServerRequest::ListRootsRequest(ListRootsRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        match self.ask(server, "roots", &peer, request).await? {
            ClientResult::ListRootsResult(r) => Ok(r),
            _ => Err(forwarded(ServiceError::UnexpectedResponse)),
        }
    }
}
