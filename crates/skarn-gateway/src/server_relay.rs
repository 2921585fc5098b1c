//! The upstream requests that are relayed to the owning downstream server:
//! resources, prompts, completions, subscriptions and the log level. Every
//! listing waits for the servers that are still starting first, so that a
//! client's first look sees the whole catalogue.
#![allow(deprecated)]

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, LoggingLevel, Reference,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::downstream::{DownError, ListKind};
use crate::gateway::RouteError;
use crate::relay::Caller;
use crate::server::GatewayServer;

fn down(e: DownError) -> ErrorData {
    match e {
        DownError::Rejected(m) => ErrorData::invalid_params(m, None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

fn route(e: RouteError) -> ErrorData {
    match e {
        RouteError::NotFound(ref uri) => crate::era::resource_not_found(e.to_string(), uri),
        e => ErrorData::invalid_params(e.to_string(), None),
    }
}

impl GatewayServer {
    /// The client of this request, for relaying.
    pub(crate) fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            client: self.client,
            peer: context.peer.clone(),
            progress: context.meta.get_progress_token(),
            rounds: None,
        }
    }

    pub(crate) async fn resources_now(&self) -> ListResourcesResult {
        self.gw.wait_for_starts().await;
        let cat = self.gw.catalog();
        let sep = &self.gw.config.gateway.namespace_separator;
        // A URI holding hidden characters is not listed (escaping it would
        // name another resource: atk25d F2).
        let items = cat
            .resources
            .iter()
            .filter(|(_, r)| !crate::text_safe::has_hidden(&r.uri))
            .map(|(s, r)| {
                let mut r = r.clone();
                let alias = self.gw.servers[*s].alias();
                r.name = format!("{alias}{sep}{}", r.name);
                if let Some(t) = &r.title {
                    r.title = Some(format!("{alias}: {t}"));
                }
                r
            })
            .collect();
        let mut r = ListResourcesResult::with_all_items(items);
        (r.ttl_ms, r.cache_scope) = crate::era::list_hints(false);
        r
    }

    pub(crate) async fn templates_now(&self) -> ListResourceTemplatesResult {
        self.gw.wait_for_starts().await;
        let cat = self.gw.catalog();
        let sep = &self.gw.config.gateway.namespace_separator;
        let items = cat
            .templates
            .iter()
            .filter(|(_, r)| !crate::text_safe::has_hidden(&r.uri_template))
            .map(|(s, r)| {
                let mut r = r.clone();
                let alias = self.gw.servers[*s].alias();
                r.name = format!("{alias}{sep}{}", r.name);
                if let Some(t) = &r.title {
                    r.title = Some(format!("{alias}: {t}"));
                }
                r
            })
            .collect();
        let mut r = ListResourceTemplatesResult::with_all_items(items);
        (r.ttl_ms, r.cache_scope) = crate::era::list_hints(false);
        r
    }

    pub(crate) async fn prompts_now(&self) -> ListPromptsResult {
        self.gw.wait_for_starts().await;
        let cat = self.gw.catalog();
        let items = cat
            .prompts
            .iter()
            .zip(&cat.prompt_names)
            .map(|((s, p), name)| {
                let mut p = p.clone();
                p.name = name.clone();
                if let Some(t) = &p.title {
                    p.title = Some(format!("{}: {t}", self.gw.servers[*s].alias()));
                }
                p
            })
            .collect();
        let mut r = ListPromptsResult::with_all_items(items);
        (r.ttl_ms, r.cache_scope) = crate::era::list_hints(false);
        r
    }

    /// The server and its own name for an upstream prompt name.
    async fn prompt_owner(&self, name: &str) -> Result<(usize, String), ErrorData> {
        let mut cat = self.gw.catalog();
        if !cat.prompt_by_name.contains_key(name) {
            self.gw.wait_for_starts().await;
            cat = self.gw.catalog();
        }
        match cat.prompt_by_name.get(name) {
            Some(&i) => {
                let (s, p) = &cat.prompts[i];
                Ok((*s, p.name.clone()))
            }
            None => {
                let mut msg = format!("unknown prompt {name:?}");
                if let Some((server, _)) = self.gw.split_name(name)
                    && let Some(s) = self.gw.server(server)
                    && let Some(cause) = s.health().cause()
                {
                    msg.push_str(&format!(": server {server} is unavailable: {cause}"));
                }
                Err(ErrorData::invalid_params(msg, None))
            }
        }
    }

    pub(crate) async fn get_prompt_now(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if crate::era::is_modern(&context) {
            return self.prompt_in_rounds(request, context).await;
        }
        let caller = self.caller(&context);
        let r = self.get_prompt_for(request, Some(caller)).await?;
        Ok(GetPromptResponse::Complete(crate::era::prompt_complete(r)))
    }

    /// `prompts/get` at the owning server; its questions go to `caller`.
    pub(crate) async fn get_prompt_for(
        &self,
        request: GetPromptRequestParams,
        caller: Option<Caller>,
    ) -> Result<rmcp::model::GetPromptResult, ErrorData> {
        let (i, name) = self.prompt_owner(&request.name).await?;
        let s = self.gw.servers[i].clone();
        let relay = &self.gw.shared.relay;
        let _calling = caller.as_ref().map(|c| relay.calling(Some(i), c));
        let mut r = s.get_prompt(&name, request.arguments).await.map_err(down)?;
        // Shown to the user as the prompt's text (atk25d F2).
        crate::text_safe::visible_typed(&mut r, &[]);
        Ok(r)
    }

    /// `resources/read` at the owning server; its questions go to `caller`.
    pub(crate) async fn read_resource_for(
        &self,
        uri: &str,
        caller: Option<Caller>,
    ) -> Result<rmcp::model::ReadResourceResult, ErrorData> {
        let i = self.resource_owner(uri).await?;
        let s = self.gw.servers[i].clone();
        match s.read_resource_as(uri, caller.as_ref()).await {
            Ok(r) => Ok(r),
            Err(DownError::NotFound(m)) => Err(crate::era::resource_not_found(m, uri)),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    /// The server owning a URI (waiting for starts when nobody owns it yet).
    pub(crate) async fn resource_owner(&self, uri: &str) -> Result<usize, ErrorData> {
        match self.route_off_runtime(uri).await {
            Err(RouteError::NotFound(_)) => {
                self.gw.wait_for_starts().await;
                self.route_off_runtime(uri).await.map_err(route)
            }
            other => other.map_err(route),
        }
    }

    /// [`crate::gateway::Gateway::resource_server`] on a blocking thread:
    /// matching a URI against many templates is bounded work but can take
    /// a while, and must not hold a runtime thread that other requests
    /// (a `ping`) need (attack atk25c F7).
    async fn route_off_runtime(&self, uri: &str) -> Result<usize, RouteError> {
        let (gw, u) = (self.gw.clone(), uri.to_owned());
        match tokio::task::spawn_blocking(move || gw.resource_server(&u)).await {
            Ok(r) => r,
            Err(_) => Err(RouteError::NotFound(uri.to_owned())),
        }
    }

    /// `completion/complete`: to the server owning the prompt or template.
    pub(crate) async fn complete_now(
        &self,
        mut request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let server = match &mut request.r#ref {
            Reference::Prompt(p) => {
                let (i, name) = self.prompt_owner(&p.name).await?;
                p.name = name;
                i
            }
            Reference::Resource(r) => {
                self.gw.wait_for_starts().await;
                let cat = self.gw.catalog();
                let owners: Vec<usize> = cat
                    .templates
                    .iter()
                    .filter(|(_, t)| t.uri_template == r.uri)
                    .map(|(s, _)| *s)
                    .collect();
                match owners.as_slice() {
                    [one] => *one,
                    [] => self.resource_owner(&r.uri).await?,
                    many => {
                        return Err(route(RouteError::Ambiguous {
                            uri: r.uri.clone(),
                            servers: many
                                .iter()
                                .map(|&i| self.gw.servers[i].alias().to_owned())
                                .collect(),
                        }));
                    }
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete: unknown kind of reference",
                    None,
                ));
            }
        };
        let s = self.gw.servers[server].clone();
        let mut r = s.complete(request).await.map_err(down)?;
        // Suggestions the client shows (atk25d F2).
        crate::text_safe::visible_typed(&mut r, &[]);
        Ok(crate::era::completion_complete(r))
    }

    /// `resources/subscribe` and `unsubscribe`: to the owning server (once
    /// for all clients), updates back to the clients that subscribed.
    pub(crate) async fn subscribe_now(&self, uri: &str, on: bool) -> Result<(), ErrorData> {
        self.subscribe_for(self.client, uri, on).await
    }

    /// [`Self::subscribe_now`] for `client` (a session or a listen stream).
    pub(crate) async fn subscribe_for(
        &self,
        client: u64,
        uri: &str,
        on: bool,
    ) -> Result<(), ErrorData> {
        let i = self.resource_owner(uri).await?;
        let relay = &self.gw.shared.relay;
        let tell = if on {
            relay.subscribe(client, uri, i)
        } else {
            relay.unsubscribe(client, uri)
        };
        if tell {
            let s = self.gw.servers[i].clone();
            if let Err(e) = s.subscribe(uri, on).await {
                if on {
                    relay.unsubscribe(client, uri);
                }
                return Err(down(e));
            }
        }
        Ok(())
    }

    /// `logging/setLevel`: this client's own level (the relay filters what
    /// it gets by it); servers are asked for the most verbose level any
    /// client wants, now and as they start.
    pub(crate) async fn set_level_now(&self, level: LoggingLevel) {
        let relay = &self.gw.shared.relay;
        relay.set_level(self.client, level);
        let level = relay.level().unwrap_or(level);
        let all = self.gw.servers.iter().map(|s| s.set_level(level));
        futures::future::join_all(all).await;
    }

    /// Forward catalogue changes to this client until it goes away.
    pub(crate) fn announce_changes(&self, peer: rmcp::service::Peer<RoleServer>) {
        // Forward catalogue changes to this client until it goes away.
        let taken = self
            .changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let mut rx = taken.unwrap_or_else(|| self.gw.changes.subscribe());
        let passthrough = self.gw.config.gateway.passthrough;
        tokio::spawn(async move {
            loop {
                let kind = match rx.recv().await {
                    Ok(k) => k,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => ListKind::Tools,
                    Err(_) => break,
                };
                let sent = match kind {
                    ListKind::Tools if passthrough => peer.notify_tool_list_changed().await,
                    ListKind::Tools => Ok(()),
                    ListKind::Resources => peer.notify_resource_list_changed().await,
                    ListKind::Prompts => peer.notify_prompt_list_changed().await,
                };
                if sent.is_err() || peer.is_transport_closed() {
                    break;
                }
            }
        });
    }

    /// `notifications/roots/list_changed`: passed on to every server.
    pub(crate) async fn roots_changed(&self) {
        for s in &self.gw.servers {
            let conn = crate::sync_util::lock(&s.conn).clone();
            if let Some(c) = conn {
                let _ = c.service.peer().notify_roots_list_changed().await;
            }
        }
    }
}
