//! The gateway core shared by every upstream session: the downstream
//! servers, the aggregated catalogue and its search index, and change
//! announcements.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::config::Config;
use crate::downstream::{ChildRegistry, DownError, Downstream, Health, ListChanged, ListKind};
use crate::search::{SearchDoc, SearchIndex};

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
    /// (server, prompt) — names are namespaced when listed upstream.
    pub prompts: Vec<(usize, Prompt)>,
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
    catalog: RwLock<Arc<Catalog>>,
    /// Announces catalogue changes to upstream sessions.
    pub changes: broadcast::Sender<ListKind>,
    pub registry: Arc<ChildRegistry>,
    events_rx: Mutex<Option<mpsc::UnboundedReceiver<ListChanged>>>,
    /// Listing generation: bumped by servers on every listing change.
    dirty: Arc<AtomicU64>,
    /// Serialises rebuilds.
    rebuilding: Mutex<()>,
    /// How `execute` runs scripts (built in the background at start).
    executor: tokio::sync::OnceCell<Result<Arc<skarn_worker::Executor>, String>>,
    /// One permit per script allowed to run at once.
    pub exec_slots: Arc<tokio::sync::Semaphore>,
    worker_command: Mutex<skarn_worker::WorkerCommand>,
    pub started_at: Instant,
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
            changes: broadcast::channel(64).0,
            registry,
            events_rx: Mutex::new(Some(rx)),
            dirty,
            rebuilding: Mutex::new(()),
            executor: tokio::sync::OnceCell::new(),
            exec_slots: Arc::new(tokio::sync::Semaphore::new(slots)),
            worker_command: Mutex::new(skarn_worker::WorkerCommand::current_exe()),
            started_at: Instant::now(),
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

    /// Rebuild the catalogue and index from every server's listing.
    pub fn rebuild(&self) {
        let _one_at_a_time = self.rebuilding.lock().unwrap_or_else(|e| e.into_inner());
        let generation = self.dirty.load(Ordering::Acquire);
        let sep = &self.config.gateway.namespace_separator;
        let mut tools = Vec::new();
        let mut resources = Vec::new();
        let mut templates = Vec::new();
        let mut prompts = Vec::new();
        for s in &self.servers {
            let l = s.listing();
            for t in &l.tools {
                tools.push(CatalogTool {
                    server: s.index,
                    qualified: format!("{}{sep}{}", s.alias(), t.name),
                    tool: t.clone(),
                });
            }
            resources.extend(l.resources.iter().map(|r| (s.index, r.clone())));
            templates.extend(l.templates.iter().map(|r| (s.index, r.clone())));
            prompts.extend(l.prompts.iter().map(|p| (s.index, p.clone())));
        }
        let docs: Vec<SearchDoc> = tools
            .iter()
            .map(|t| SearchDoc {
                server: self.servers[t.server].alias().to_owned(),
                tool: t.tool.name.to_string(),
                description: t.tool.description.as_deref().unwrap_or("").to_owned(),
                params: t
                    .tool
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default(),
            })
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.qualified.clone(), i))
            .collect();
        let catalog = Catalog {
            generation,
            index: SearchIndex::build(&docs),
            tools,
            by_name,
            resources,
            templates,
            prompts,
        };
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(catalog);
    }

    /// The current catalogue (rebuilt first if a listing changed).
    pub fn catalog(&self) -> Arc<Catalog> {
        let current = self
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if current.generation >= self.dirty.load(Ordering::Acquire) {
            return current;
        }
        self.rebuild();
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
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

    /// Health of every configured server.
    pub fn health(&self) -> Vec<ServerHealth> {
        self.servers
            .iter()
            .map(|s| {
                let h = s.health();
                ServerHealth {
                    name: s.alias().to_owned(),
                    transport: match s.cfg.transport {
                        crate::config::ServerTransport::Stdio { .. } => "stdio",
                        crate::config::ServerTransport::Http { .. } => "http",
                    },
                    status: h.status(),
                    cause: h.cause().map(str::to_owned),
                    tools: if matches!(h, Health::Ready) {
                        s.listing().tools.len()
                    } else {
                        0
                    },
                    sandbox: s.sandbox.mode(),
                    net_denied: s.sandbox.denials(),
                }
            })
            .collect()
    }

    /// Wait until no server is starting, or `max` passes.
    pub async fn settle(&self, max: Duration) {
        let deadline = tokio::time::Instant::now() + max;
        loop {
            if !self
                .servers
                .iter()
                .any(|s| matches!(s.health(), Health::Starting { .. }))
            {
                // Let the refresh task fold the last listing in.
                self.rebuild();
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
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
        Ok(s.call_tool(tool, args).await?)
    }

    /// Which server serves resource `uri`: the server that lists exactly
    /// this URI, else the server with a resource template that matches it
    /// (RFC 6570 matching, [`crate::uri_template`]). When more than one
    /// server qualifies at the same step the read is refused rather than
    /// guessed.
    pub fn resource_server(&self, uri: &str) -> Result<usize, RouteError> {
        let cat = self.catalog();
        let pick = |mut found: Vec<usize>| -> Option<Result<usize, RouteError>> {
            found.sort_unstable();
            found.dedup();
            match found.as_slice() {
                [] => None,
                [one] => Some(Ok(*one)),
                many => Some(Err(RouteError::Ambiguous {
                    uri: uri.to_owned(),
                    servers: many
                        .iter()
                        .map(|&i| self.servers[i].alias().to_owned())
                        .collect(),
                })),
            }
        };
        let exact = cat
            .resources
            .iter()
            .filter(|(_, r)| r.uri == uri)
            .map(|(s, _)| *s)
            .collect();
        if let Some(r) = pick(exact) {
            return r;
        }
        let by_template = cat
            .templates
            .iter()
            .filter(|(_, t)| crate::uri_template::matches(&t.uri_template, uri))
            .map(|(s, _)| *s)
            .collect();
        pick(by_template).unwrap_or_else(|| Err(RouteError::NotFound(uri.to_owned())))
    }

    /// Health of servers that are not ready, as a JSON array and one line of
    /// text (empty when everything is ready).
    pub fn not_ready(&self) -> (Vec<Value>, Vec<Value>, String) {
        let mut starting = Vec::new();
        let mut unavailable = Vec::new();
        let mut text = Vec::new();
        for h in self.health() {
            match h.status {
                "starting" => starting.push(json!(h.name)),
                "failed" | "crashed" => {
                    let what = if h.status == "failed" {
                        "failed to start"
                    } else {
                        "crashed"
                    };
                    let cause = h.cause.clone().unwrap_or_default();
                    text.push(format!("server {} {what}: {cause}", h.name));
                    unavailable.push(json!({"server": h.name, "status": h.status, "cause": cause}));
                }
                _ => {}
            }
            for d in &h.net_denied {
                text.push(format!(
                    "server {} was denied network access to {} ({}); to allow it: \
                     [servers.{}.sandbox] {}",
                    h.name, d.host, d.reason, h.name, d.allow_line
                ));
            }
        }
        if !starting.is_empty() {
            let names: Vec<String> = starting
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            text.insert(
                0,
                format!(
                    "still starting (their tools are not searchable yet): {}",
                    names.join(", ")
                ),
            );
        }
        (starting, unavailable, text.join("\n"))
    }

    /// Stop every downstream server and kill every child process group.
    pub fn shutdown(&self) {
        for s in &self.servers {
            s.disconnect();
        }
        self.registry.kill_all(Duration::from_millis(300));
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.registry.kill_all(Duration::from_millis(100));
    }
}
