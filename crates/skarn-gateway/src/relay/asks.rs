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

/// Whose call a request of a downstream server belongs to.
pub(crate) enum Pick {
    /// The one client (one session, or one 2026-07-28 request) whose
    /// calls to that server are in flight.
    One(Caller),
    /// Calls of several clients are in flight to that server: a
    /// 2025-11-25 server's request names none of them, so the gateway
    /// does not guess (atk25d F4).
    Several,
    /// No call to that server is in flight: the idle-server rule applies.
    Idle,
}

/// Whether a registered call is still waiting: a stateless (HTTP)
/// request's own stream has closed once its round went out, while its
/// call still waits for the retry.
fn live(c: &Caller) -> bool {
    c.rounds.is_some() || !c.peer.is_transport_closed()
}

/// Whether a request of the call's client is being served now: a
/// 2025-11-25 session's call while its stream is open, a 2026-07-28
/// call while its first request or a retry is served (not while parked).
fn attended(c: &Caller) -> bool {
    match &c.rounds {
        Some(r) => r.attended(),
        None => !c.peer.is_transport_closed(),
    }
}

/// The same client: the same session and, for 2026-07-28 calls, the
/// same request (each has its own rounds).
fn same(a: &Caller, b: &Caller) -> bool {
    a.client == b.client
        && match (&a.rounds, &b.rounds) {
            (Some(x), Some(y)) => Arc::ptr_eq(x, y),
            (None, None) => true,
            _ => false,
        }
}

fn several(what: &str, alias: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        format!(
            "the gateway refused this {what} request of server {alias:?}: calls of several clients to it are in flight, and the request does not say which call it belongs to"
        ),
        None,
    )
}

impl Relay {
    /// The client whose call a request of `server` belongs to: the only
    /// client with calls to `server` in flight (never "the most recent
    /// caller", who may be another user's session).
    pub(crate) fn pick(&self, server: usize) -> Pick {
        let callers = lock(&self.callers);
        let mut mine = callers
            .iter()
            .filter(|(_, s, c)| *s == Some(server) && live(c))
            .map(|(_, _, c)| c);
        let Some(first) = mine.next() else {
            return Pick::Idle;
        };
        if mine.all(|c| same(c, first)) {
            return Pick::One(first.clone());
        }
        // A 2026-07-28 call whose round went out waits, parked, for a
        // retry that may never come; a server that answers calls one
        // question at a time asks only in a call whose client is being
        // served. So when exactly one client's calls to `server` are
        // being served, the request is theirs.
        let open: Vec<&Caller> = callers
            .iter()
            .filter(|(_, s, c)| *s == Some(server) && attended(c))
            .map(|(_, _, c)| c)
            .collect();
        match open.first() {
            Some(f) if open.iter().all(|c| same(c, f)) => Pick::One((*f).clone()),
            _ => Pick::Several,
        }
    }

    /// Who a request of an idle server goes to, when idle servers may ask
    /// (`client_requests_from_idle_servers`): the client of the most
    /// recent call or script in flight, else the most recently connected
    /// client. Never into a 2026-07-28 call's rounds: those belong to the
    /// servers that call reaches (atk25d F1).
    fn idle_target(&self) -> Option<Peer<RoleServer>> {
        let from_call = lock(&self.callers)
            .iter()
            .rev()
            .find(|(_, _, c)| c.rounds.is_none() && !c.peer.is_transport_closed())
            .map(|(_, _, c)| c.peer.clone());
        from_call.or_else(|| self.clients().last().map(|(_, p, _)| p.clone()))
    }

    /// The client a sampling or elicitation request of `server` goes to:
    /// only while the client is calling that server (unless
    /// `client_requests_from_idle_servers`), and only if the client
    /// declared what `has` checks.
    fn target_with(
        &self,
        pick: Pick,
        alias: &str,
        what: &str,
        has: impl Fn(&Peer<RoleServer>) -> bool,
    ) -> Result<Peer<RoleServer>, ErrorData> {
        let peer = match pick {
            Pick::One(c) => Some(c.peer),
            Pick::Several => return Err(several(what, alias)),
            Pick::Idle if !self.asks.limits().from_idle => {
                return Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "the gateway refused this {what} request of server {alias:?}: no call to it is in flight, and only a server the client is calling may ask the client or the user (gateway.client_requests_from_idle_servers = false)"
                    ),
                    None,
                ));
            }
            Pick::Idle => self.idle_target(),
        };
        let peer = peer.ok_or_else(|| {
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
        // A 2026-07-28 client's call in flight to this server: asked in
        // an input_required round of that call.
        let pick = self.pick(server);
        if let Pick::One(Caller {
            rounds: Some(r), ..
        }) = &pick
        {
            return self.sampling_round(server, r, params).await;
        }
        let peer = self.target_with(pick, alias, "sampling", |p| {
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
        // A link holding control or invisible characters can show one
        // host and open another (atk25d F2): refused, not rewritten.
        if let ElicitRequestParams::UrlElicitationParams { url, .. } = &params
            && crate::text_safe::has_hidden(url)
        {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the gateway refused this URL-mode elicitation of server {alias:?}: its URL holds control or invisible characters"
                ),
                None,
            ));
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
        let pick = self.pick(server);
        if let Pick::One(Caller {
            rounds: Some(r), ..
        }) = &pick
        {
            return self.elicitation_round(server, r, params).await;
        }
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        let mode = if url {
            "URL-mode elicitation"
        } else {
            "elicitation"
        };
        let peer = self.target_with(pick, alias, mode, |p| {
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
        let peer = match self.pick(server) {
            Pick::One(Caller {
                rounds: Some(r), ..
            }) => return self.roots_round(server, &r).await,
            Pick::One(c) => Some(c.peer),
            // Which client's roots is not known: none.
            Pick::Several => None,
            Pick::Idle => self.idle_target(),
        };
        let Some(peer) = peer else {
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
