//! The gateway core shared by every upstream session: the downstream
//! servers, the aggregated catalogue and its search index, and change
//! announcements.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc};

use crate::config::Config;
use crate::downstream::{ChildRegistry, DownError, Downstream, ListChanged, ListKind};
use crate::search::SearchIndex;

/// One tool in the aggregated catalogue.
#[derive(Debug, Clone)]
pub struct CatalogTool {
    /// Index of its server in [`Gateway::servers`].
    pub server: usize,
    /// `<alias><sep><tool>`.
    pub qualified: String,
    pub tool: Tool,
}

/// Everything the ready servers offer, indexed for search.
#[derive(Debug)]
pub struct Catalog {
    /// The listing generation it was built from.
    pub generation: u64,
    pub tools: Vec<CatalogTool>,
    pub by_name: HashMap<String, usize>,
    pub index: SearchIndex,
    /// (server, resource)
    pub resources: Vec<(usize, Resource)>,
    pub templates: Vec<(usize, ResourceTemplate)>,
    /// (server, prompt) as the server lists it.
    pub prompts: Vec<(usize, Prompt)>,
    /// The name each prompt is offered under upstream (same order).
    pub prompt_names: Vec<String>,
    /// Upstream prompt name → index in `prompts`.
    pub prompt_by_name: HashMap<String, usize>,
}

impl Catalog {
    fn empty() -> Catalog {
        Catalog {
            generation: 0,
            tools: Vec::new(),
            by_name: HashMap::new(),
            index: SearchIndex::build(&[]),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            prompt_names: Vec::new(),
            prompt_by_name: HashMap::new(),
        }
    }
}

/// One server's health, for search results, `skarn doctor` and errors.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServerHealth {
    pub name: String,
    /// "stdio" or "http".
    pub transport: &'static str,
    /// disabled, starting, ready, failed, crashed.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub tools: usize,
    /// Stdio servers: `sandboxed (net ...)` or `not sandboxed: why`
    /// (empty before the first start).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sandbox: String,
    /// Hosts its sandbox refused, each with the line that allows it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub net_denied: Vec<crate::sandbox_state::Denial>,
}

/// The gateway.
pub struct Gateway {
    pub config: Config,
    pub servers: Vec<Arc<Downstream>>,
    by_alias: HashMap<String, usize>,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    /// Announces catalogue changes to upstream sessions.
    pub changes: broadcast::Sender<ListKind>,
    /// The receiver made with `changes`, for the first session: it holds
    /// what changed before that session was set up.
    pub(crate) first_changes: Mutex<Option<broadcast::Receiver<ListKind>>>,
    pub registry: Arc<ChildRegistry>,
    events_rx: Mutex<Option<mpsc::UnboundedReceiver<ListChanged>>>,
    /// Listing generation: bumped by servers on every listing change.
    pub(crate) dirty: Arc<AtomicU64>,
    /// Serialises rebuilds.
    pub(crate) rebuilding: Mutex<()>,
    /// How `execute` runs scripts (built in the background at start).
    executor: tokio::sync::OnceCell<Result<Arc<skarn_worker::Executor>, String>>,
    /// One permit per script allowed to run at once.
    pub exec_slots: Arc<tokio::sync::Semaphore>,
    /// The share of those slots that 2026-07-28 requests hold together
    /// (half): each such request is a session of its own, so a per-session
    /// share would not bound many of them (atk25d F9).
    pub(crate) stateless_share: Arc<tokio::sync::Semaphore>,
    worker_command: Mutex<skarn_worker::WorkerCommand>,
    pub started_at: Instant,
    /// Start slots and the relay back to the clients.
    pub shared: Arc<crate::downstream::shared::Shared>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("servers", &self.by_alias.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why a gateway-level call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("no server named {0:?}")]
    NoSuchServer(String),
    #[error("server {server:?} has no tool named {tool:?}")]
    NoSuchTool { server: String, tool: String },
    #[error(transparent)]
    Down(#[from] DownError),
}

/// Why a resource URI could not be routed to one server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("no server offers resource {0:?}")]
    NotFound(String),
    #[error("resource {uri:?} is offered by more than one server ({}); refusing to guess", servers.join(", "))]
    Ambiguous { uri: String, servers: Vec<String> },
}

impl Gateway {
    /// Build the gateway (nothing starts until [`Gateway::start`]).
    pub fn new(config: Config) -> Arc<Gateway> {
        let slots = config.gateway.max_concurrent_executes;
        let registry = Arc::new(ChildRegistry::default());
        let (tx, rx) = mpsc::unbounded_channel();
        let dirty = Arc::new(AtomicU64::new(0));
        let relay = crate::relay::Relay::new(
            crate::outbox::QueueCaps::from_config(&config.gateway),
            crate::client_asks::AskLimits::from_config(&config.gateway),
        );
        let shared = Arc::new(
            crate::downstream::shared::Shared::by_cores(Arc::new(relay))
                .with_guard(crate::downstream::guard::GuardLimits::from_config(
                    &config.gateway,
                ))
                .with_config_file(config.path.clone()),
        );
        let (changes, first_changes) = broadcast::channel(64);
        let servers: Vec<Arc<Downstream>> = config
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Arc::new(Downstream::new(
                    i,
                    s.clone(),
                    registry.clone(),
                    tx.clone(),
                    dirty.clone(),
                    shared.clone(),
                ))
            })
            .collect();
        let by_alias = servers
            .iter()
            .map(|s| (s.alias().to_owned(), s.index))
            .collect();
        Arc::new(Gateway {
            config,
            servers,
            by_alias,
            catalog: RwLock::new(Arc::new(Catalog::empty())),
            changes,
            first_changes: Mutex::new(Some(first_changes)),
            registry,
            events_rx: Mutex::new(Some(rx)),
            dirty,
            rebuilding: Mutex::new(()),
            executor: tokio::sync::OnceCell::new(),
            exec_slots: Arc::new(tokio::sync::Semaphore::new(slots)),
            stateless_share: Arc::new(tokio::sync::Semaphore::new(crate::limits::session_share(
                slots,
            ))),
            worker_command: Mutex::new(skarn_worker::WorkerCommand::current_exe()),
            started_at: Instant::now(),
            shared,
        })
    }

    /// Start every enabled server in the background, in parallel, one
    /// re-list task per server (`list_changed`, coalesced), and the task
    /// that rebuilds the catalogue and announces changes. Must run inside a tokio
    /// runtime; returns at once.
    pub fn start(self: &Arc<Self>) {
        let rx = self
            .events_rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut rx) = rx {
            let gw = Arc::downgrade(self);
            tokio::spawn(async move {
                while let Some(ev) = rx.recv().await {
                    let Some(gw) = gw.upgrade() else { break };
                    // Coalesce a burst of notifications.
                    let mut evs = vec![ev];
                    while let Ok(e) = rx.try_recv() {
                        evs.push(e);
                    }
                    gw.rebuild();
                    let mut kinds: Vec<ListKind> = Vec::new();
                    for e in &evs {
                        if !kinds.contains(&e.kind) {
                            kinds.push(e.kind);
                        }
                    }
                    for k in kinds {
                        let _ = gw.changes.send(k);
                    }
                }
            });
        }
        for s in &self.servers {
            tokio::spawn(s.clone().refresh_loop());
            tokio::spawn(s.clone().supervise());
            let s = s.clone();
            tokio::spawn(async move { s.start().await });
        }
    }

    /// Build the script executor now, in the background (probe and warm
    /// pool), so that the first `execute` does not wait for it. `skarn
    /// serve` calls this; embedders that run scripts with their own
    /// executor (e.g. `skarn exec` through [`crate::bridge_from_config`])
    /// do not, and no worker is started for them.
    pub fn prepare_executor(self: &Arc<Self>) {
        let gw = self.clone();
        tokio::spawn(async move {
            let _ = gw.executor().await;
        });
    }

    /// Use another program as the Code Mode worker (tests, embedders whose
    /// binary has no `__codemode-worker` entry). Call before [`Gateway::start`].
    pub fn set_worker_command(&self, cmd: skarn_worker::WorkerCommand) {
        *self
            .worker_command
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = cmd;
    }

    /// The script executor (built once, off the async threads).
    pub async fn executor(&self) -> Result<Arc<skarn_worker::Executor>, String> {
        self.executor
            .get_or_init(|| async {
                let g = &self.config.gateway;
                let (iso, warm, limits) = (g.isolation, g.worker_pool, g.limits.clone());
                let cmd = self
                    .worker_command
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                let built = tokio::task::spawn_blocking(move || {
                    crate::exec::build_executor(iso, warm, &limits, cmd)
                })
                .await
                .unwrap_or_else(|e| Err(format!("cannot start the script executor: {e}")));
                match &built {
                    Ok(e) if e.isolation() == skarn_worker::IsolationUsed::InProcess => {
                        tracing::warn!(
                            "code mode isolation: in_process: scripts run without the confined worker ({})",
                            e.reason()
                        )
                    }
                    Ok(e) => {
                        tracing::info!("code mode isolation: {} ({})", e.isolation(), e.reason())
                    }
                    Err(e) => tracing::warn!("code mode unavailable: {e}"),
                }
                built.map(Arc::new)
            })
            .await
            .clone()
    }

    /// The server with this alias.
    pub fn server(&self, alias: &str) -> Option<&Arc<Downstream>> {
        self.by_alias.get(alias).map(|&i| &self.servers[i])
    }

    /// Split a namespaced name into (server, tool).
    pub fn split_name<'a>(&self, name: &'a str) -> Option<(&'a str, &'a str)> {
        let sep = self.config.gateway.namespace_separator.as_str();
        let (a, t) = name.split_once(sep)?;
        Some((a, t))
    }

    /// Call `tool` on `server`. Unknown tools of a ready server are refused
    /// here; tools of a server that is not ready yet go through so that the
    /// caller gets the server's health as the reason.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::CallToolResult, CallError> {
        self.call_tool_as(server, tool, args, None).await
    }

    /// [`Gateway::call_tool`] on behalf of a client (progress, sampling,
    /// elicitation and roots are relayed to it).
    pub async fn call_tool_as(
        &self,
        server: &str,
        tool: &str,
        args: Option<Map<String, Value>>,
        caller: Option<&crate::relay::Caller>,
    ) -> Result<rmcp::model::CallToolResult, CallError> {
        let s = self
            .server(server)
            .ok_or_else(|| CallError::NoSuchServer(server.to_owned()))?
            .clone();
        // Make sure it is up (this may wait for a start or restart).
        s.ready().await?;
        if !s.listing().tools.iter().any(|t| t.name == tool) {
            return Err(CallError::NoSuchTool {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        Ok(s.call_tool_as(tool, args, caller).await?)
    }

    /// Which server serves resource `uri`: the one server that either lists
    /// exactly this URI or has a resource template that matches it (RFC
    /// 6570 matching, [`crate::uri_template`]). When more than one server
    /// qualifies, by either way, the read is refused rather than guessed: a
    /// server that lists another server's URI must not take its reads (and
    /// its subscriptions). Each server's templates are matched within a
    /// budget of their own, so one server's huge templates cannot keep
    /// another's from being considered.
    pub fn resource_server(&self, uri: &str) -> Result<usize, RouteError> {
        let cat = self.catalog();
        let mut found: Vec<usize> = cat
            .resources
            .iter()
            .filter(|(_, r)| r.uri == uri)
            .map(|(s, _)| *s)
            .collect();
        let mut budgets = vec![crate::uri_template::MAX_ROUTE_WORK; self.servers.len()];
        for (s, t) in &cat.templates {
            if found.contains(s) {
                continue;
            }
            let Some(budget) = budgets.get_mut(*s) else {
                continue;
            };
            if crate::uri_template::matches_within(&t.uri_template, uri, budget) {
                found.push(*s);
            }
        }
        found.sort_unstable();
        found.dedup();
        match found.as_slice() {
            [] => Err(RouteError::NotFound(uri.to_owned())),
            [one] => Ok(*one),
            many => Err(RouteError::Ambiguous {
                uri: uri.to_owned(),
                servers: many
                    .iter()
                    .map(|&i| self.servers[i].alias().to_owned())
                    .collect(),
            }),
        }
    }

    /// Stop every downstream server and kill every child process group.
    pub fn shutdown(&self) {
        self.shared.stop();
        for s in &self.servers {
            s.disconnect();
        }
        self.registry.kill_all(Duration::from_millis(300));
        // Killed helpers cleaned nothing up.
        crate::state_dirs::sweep_used();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.registry.kill_all(Duration::from_millis(100));
    }
}
