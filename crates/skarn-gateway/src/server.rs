//! The upstream MCP server: the constant Code Mode surface (`search`,
//! `read_tool_docs`, `execute`), optional passthrough of namespaced
//! downstream tools, and aggregated resources and prompts.

use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::downstream::ListKind;
use crate::gateway::Gateway;
use crate::relay::Caller;

/// The instructions sent at `initialize`: constant, whatever the catalogue.
pub const INSTRUCTIONS: &str = "\
Skarn gateway: the tools of many MCP servers behind three tools.
1. search {query, limit?}: find tools for a task. Returns namespaced names \
<server>__<tool> with one-line descriptions, best first, and says which servers are still starting or unavailable.
2. read_tool_docs {name}: one tool's input/output schema and its TypeScript call signature. Read it before calling a tool.
3. execute {code}: run a JavaScript/TypeScript async function body. Call tools with \
`await skarn.callTool(\"<server>\", \"<tool>\", {args})` (or `await skarn.server(\"<server>\").<tool>({args})`), \
read resources with `await skarn.readResource(\"<server>\", uri)`, log with `skarn.log(...)`, and `return` a \
JSON value. A call resolves to the tool's structured content, else its text (parsed when it is JSON), else an \
array of its content blocks (images...). Only the returned value and the log lines come back, so filter, join and summarise data inside \
the script instead of returning it raw. Chain several calls in one script. No network, filesystem or \
timers besides the tools. A failed script returns an error naming the line.";

/// One upstream session (cheap: shares the gateway).
#[derive(Clone)]
pub struct GatewayServer {
    pub(crate) gw: Arc<Gateway>,
    /// This session's id in the relay.
    pub(crate) client: u64,
    /// Catalogue changes since this session was made (announced once the
    /// client has initialized, so that growth during the handshake is not
    /// lost).
    pub(crate) changes: Arc<Mutex<Option<broadcast::Receiver<ListKind>>>>,
    /// This session's share of the execute slots (atk25d F9): half of
    /// them (at least one), so that one session's scripts cannot hold
    /// every slot while another session waits.
    pub(crate) exec_share: Arc<tokio::sync::Semaphore>,
}

pub use crate::limits::session_share;

impl GatewayServer {
    pub fn new(gw: Arc<Gateway>) -> GatewayServer {
        let client = gw.shared.relay.new_client_id();
        let first = gw
            .first_changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let rx = first.unwrap_or_else(|| gw.changes.subscribe());
        let share = session_share(gw.config.gateway.max_concurrent_executes);
        GatewayServer {
            gw,
            client,
            changes: Arc::new(Mutex::new(Some(rx))),
            exec_share: Arc::new(tokio::sync::Semaphore::new(share)),
        }
    }
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": schema,
    }))
    .expect("static tool definition")
}

/// The three meta-tools.
pub fn meta_tools() -> Vec<Tool> {
    vec![
        tool(
            "search",
            "Find downstream tools for a task. Returns ranked namespaced tool names with one-line descriptions.",
            json!({"type":"object","properties":{
                "query":{"type":"string","description":"What you want to do, in words"},
                "limit":{"type":"integer","minimum":1,"maximum":50,"description":"Maximum results (default 8)"}
            },"required":["query"]}),
        ),
        tool(
            "read_tool_docs",
            "Full input/output schema and TypeScript signature of one tool found by search.",
            json!({"type":"object","properties":{
                "name":{"type":"string","description":"Namespaced tool name, e.g. github__create_issue"}
            },"required":["name"]}),
        ),
        tool(
            "execute",
            "Run a JS/TS async function body that calls tools via skarn.callTool(server, tool, args); returns only its return value and skarn.log lines.",
            json!({"type":"object","properties":{
                "code":{"type":"string","description":"Script body; use await and return"}
            },"required":["code"]}),
        ),
    ]
}

impl GatewayServer {
    /// One `tools/call`, whichever revision the client speaks.
    pub(crate) async fn dispatch_call(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        caller: Caller,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match name {
            "search" => self.search(&args).await,
            "read_tool_docs" => self.read_tool_docs(&args).await,
            "execute" => self.execute(&args, caller).await,
            crate::shell_tool::NAME if self.gw.config.gateway.shell => {
                let roots = crate::shell_tool::client_roots(&caller.peer).await;
                crate::shell_tool::call(&args, &self.gw.config, &roots).await
            }
            other if self.gw.config.gateway.passthrough => {
                match self.passthrough(other, args, caller).await {
                    Some(r) => r?,
                    None => {
                        return Err(ErrorData::invalid_params(
                            format!("unknown tool {other:?}"),
                            None,
                        ));
                    }
                }
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {other:?}: this gateway offers search, read_tool_docs and execute"
                    ),
                    None,
                ));
            }
        })
    }
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {},
        }))
        .expect("static capabilities");
        let mut info = ServerConfig::new(caps);
        info.server_info = Implementation::new("skarn", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.to_owned());
        info
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.capabilities = crate::era::modern_capabilities(info.capabilities);
        // What discover says never changes while the gateway runs.
        Ok(DiscoverResult::from_server_info(
            ServerHandler::supported_protocol_versions(self).into_owned(),
            info,
        )
        .with_ttl_ms(crate::era::CONSTANT_TTL_MS)
        .with_cache_scope(rmcp::model::CacheScope::Public))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.accept_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_now(context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.gw
            .shared
            .relay
            .add_client(self.client, context.peer.clone());
        self.announce_changes(context.peer.clone());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = meta_tools();
        if self.gw.config.gateway.shell {
            tools.push(crate::shell_tool::tool());
        }
        if self.gw.config.gateway.passthrough {
            self.gw.wait_for_starts().await;
            let cat = self.gw.catalog();
            for t in &cat.tools {
                let mut tool = t.tool.clone();
                tool.name = t.qualified.clone().into();
                // A display title names its server: clients show it in
                // place of the name (atk25c F5).
                let alias = self.gw.servers[t.server].alias();
                if let Some(title) = &tool.title {
                    tool.title = Some(format!("{alias}: {title}"));
                }
                if let Some(a) = tool.annotations.as_mut()
                    && let Some(title) = &a.title
                {
                    a.title = Some(format!("{alias}: {title}"));
                }
                tools.push(tool);
            }
        }
        let mut r = ListToolsResult::with_all_items(tools);
        (r.ttl_ms, r.cache_scope) = crate::era::list_hints(!self.gw.config.gateway.passthrough);
        Ok(r)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if crate::era::is_modern(&context) {
            return self.call_in_rounds(request, context).await;
        }
        let caller = self.caller(&context);
        let r = self
            .dispatch_call(&request.name, request.arguments, caller)
            .await?;
        Ok(CallToolResponse::Complete(crate::era::call_complete(r)))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.resources_now().await)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(self.templates_now().await)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if crate::era::is_modern(&context) {
            return self.read_in_rounds(request, context).await;
        }
        let caller = self.caller(&context);
        let r = self.read_resource_for(&request.uri, Some(caller)).await?;
        Ok(ReadResourceResponse::Complete(crate::era::read_complete(r)))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.prompts_now().await)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.get_prompt_now(request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.complete_now(request).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.set_level_now(request.level).await;
        Ok(())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_now(&request.uri, true).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_now(&request.uri, false).await
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_changed().await;
    }
}
