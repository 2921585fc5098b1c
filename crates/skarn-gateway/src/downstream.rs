//! One downstream MCP server: its connection, health, restart policy and
//! listings.
//!
//! A server starts in the background with a start timeout. Its health is
//! always one of [`Health`]; every failure keeps its cause. A stdio server
//! that crashed is restarted on the next call that needs it, with
//! exponential backoff between consecutive failures. Child processes run in
//! their own process group; the group is killed when the connection is
//! dropped, and [`ChildRegistry::kill_all`] kills every group still alive
//! when the gateway exits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, Prompt, ReadResourceRequestParams, ReadResourceResult,
    Resource, ResourceTemplate, Tool,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};

pub use crate::children::ChildRegistry;
use crate::config::{ServerConfig, ServerTransport};
use crate::relist::{DownHandler, RelistSignal, list_everything};

/// A change a downstream server announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// What the gateway hears from downstream servers.
#[derive(Debug, Clone)]
pub struct ListChanged {
    pub server: usize,
    pub kind: ListKind,
}

/// Health of one downstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// `enabled = false` in the configuration.
    Disabled,
    /// Connecting; since when.
    Starting { since: Instant },
    /// Connected and listed.
    Ready,
    /// The last start failed.
    Failed { cause: String, at: Instant },
    /// It was ready and then died.
    Crashed { cause: String, at: Instant },
}

impl Health {
    /// Short status word: disabled, starting, ready, failed, crashed.
    pub fn status(&self) -> &'static str {
        match self {
            Health::Disabled => "disabled",
            Health::Starting { .. } => "starting",
            Health::Ready => "ready",
            Health::Failed { .. } => "failed",
            Health::Crashed { .. } => "crashed",
        }
    }

    /// The cause, for failed and crashed servers.
    pub fn cause(&self) -> Option<&str> {
        match self {
            Health::Failed { cause, .. } | Health::Crashed { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// A live connection.
pub struct Conn {
    pub(crate) service: RunningService<RoleClient, DownHandler>,
    _child: Option<crate::stdio_child::StdioChild>,
    pgid: Option<i32>,
    registry: Arc<ChildRegistry>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(g) = self.pgid {
            self.registry.kill(g);
        }
    }
}

impl Conn {
    fn closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    fn last_stderr(&self) -> Option<String> {
        self.stderr_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .back()
            .cloned()
    }
}

/// What a server offers.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

/// Why a downstream operation failed (mapped to the script's and client's
/// errors by the caller).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownError {
    #[error("server {server} {reason}")]
    Unavailable { server: String, reason: String },
    #[error("{what} timed out after {timeout_ms} ms")]
    Timeout { what: String, timeout_ms: u64 },
    #[error("{0}")]
    Rejected(String),
}

struct Restart {
    /// Consecutive failures (failed starts and crashes) since a server was
    /// last ready for at least [`STABLE_AFTER`].
    failures: u32,
    ready_since: Option<Instant>,
}

const STABLE_AFTER: Duration = Duration::from_secs(10);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// One configured downstream server.
pub struct Downstream {
    pub index: usize,
    pub cfg: ServerConfig,
    health: watch::Sender<Health>,
    pub(crate) conn: Mutex<Option<Arc<Conn>>>,
    pub(crate) listing: Mutex<Arc<Listing>>,
    restart: Mutex<Restart>,
    start_lock: tokio::sync::Mutex<()>,
    registry: Arc<ChildRegistry>,
    pub(crate) events: mpsc::UnboundedSender<ListChanged>,
    /// `list_changed` notifications waiting for a re-list.
    pub(crate) relist: Arc<RelistSignal>,
    /// Bumped whenever this server's listing changes (the gateway rebuilds
    /// its catalogue lazily when it is behind).
    pub(crate) dirty: Arc<AtomicU64>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn short(e: impl std::fmt::Display) -> String {
    let s = e.to_string();
    let s = s.trim();
    if s.len() > 400 {
        let mut end = 400;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_owned()
    }
}

impl Downstream {
    pub fn new(
        index: usize,
        cfg: ServerConfig,
        registry: Arc<ChildRegistry>,
        events: mpsc::UnboundedSender<ListChanged>,
        dirty: Arc<AtomicU64>,
    ) -> Downstream {
        let initial = if cfg.enabled {
            Health::Starting {
                since: Instant::now(),
            }
        } else {
            Health::Disabled
        };
        Downstream {
            index,
            cfg,
            health: watch::channel(initial).0,
            conn: Mutex::new(None),
            listing: Mutex::new(Arc::new(Listing::default())),
            restart: Mutex::new(Restart {
                failures: 0,
                ready_since: None,
            }),
            start_lock: tokio::sync::Mutex::new(()),
            registry,
            events,
            relist: Arc::default(),
            dirty,
        }
    }

    pub fn alias(&self) -> &str {
        &self.cfg.alias
    }

    /// Current health (a crashed connection is noticed here).
    pub fn health(&self) -> Health {
        self.notice_crash();
        self.health.borrow().clone()
    }

    /// The current listing (empty until ready).
    pub fn listing(&self) -> Arc<Listing> {
        lock(&self.listing).clone()
    }

    fn notice_crash(&self) {
        let dead = {
            let conn = lock(&self.conn);
            match conn.as_ref() {
                Some(c) if c.closed() => Some(c.clone()),
                _ => None,
            }
        };
        if let Some(c) = dead {
            let cause = match c.last_stderr() {
                Some(line) => format!("the server exited (last stderr line: {line})"),
                None => "the server closed its connection".to_owned(),
            };
            self.mark_crashed(&c, cause);
        }
    }

    fn mark_crashed(&self, conn: &Arc<Conn>, cause: String) {
        let mut slot = lock(&self.conn);
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            *slot = None;
            drop(slot);
            {
                let mut r = lock(&self.restart);
                if r.ready_since.is_some_and(|t| t.elapsed() >= STABLE_AFTER) {
                    r.failures = 0;
                }
                r.failures += 1;
                r.ready_since = None;
            }
            tracing::warn!(server = %self.cfg.alias, %cause, "downstream server crashed");
            self.health.send_replace(Health::Crashed {
                cause,
                at: Instant::now(),
            });
        }
    }

    /// When the next restart may happen after a failure at `at`.
    fn retry_at(&self, at: Instant, crashed: bool) -> Instant {
        let failures = lock(&self.restart).failures.max(1);
        let backoff = if crashed && failures == 1 {
            Duration::ZERO
        } else {
            let exp = failures.saturating_sub(1).min(6);
            Duration::from_secs(1 << exp).min(MAX_BACKOFF)
        };
        at + backoff
    }

    /// Connect (or reconnect), list, and become ready. Concurrent callers
    /// share one attempt.
    pub async fn start(self: &Arc<Self>) {
        if !self.cfg.enabled {
            return;
        }
        let observed = self.health.borrow().clone();
        let _guard = self.start_lock.lock().await;
        // Someone else finished an attempt while we waited.
        let now = self.health.borrow().clone();
        if now != observed && !matches!(now, Health::Starting { .. }) {
            return;
        }
        if matches!(now, Health::Ready) {
            return;
        }
        self.health.send_replace(Health::Starting {
            since: Instant::now(),
        });
        let timeout = self.cfg.start_timeout;
        let result = tokio::time::timeout(timeout, self.connect()).await;
        match result {
            Ok(Ok((conn, listing))) => {
                *lock(&self.listing) = Arc::new(listing);
                // Before the health change: whoever sees "ready" must also
                // see the new listing in the catalogue.
                self.dirty.fetch_add(1, Ordering::AcqRel);
                *lock(&self.conn) = Some(Arc::new(conn));
                lock(&self.restart).ready_since = Some(Instant::now());
                self.health.send_replace(Health::Ready);
                tracing::info!(server = %self.cfg.alias, "downstream server ready");
            }
            Ok(Err(cause)) => self.fail(cause),
            Err(_) => self.fail(format!(
                "no answer within the start timeout ({} ms)",
                timeout.as_millis()
            )),
        }
        // Either way the catalogue may have changed.
        self.dirty.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(ListChanged {
            server: self.index,
            kind: ListKind::Tools,
        });
    }

    pub(crate) fn fail(&self, cause: String) {
        tracing::warn!(server = %self.cfg.alias, %cause, "downstream server failed to start");
        {
            let mut r = lock(&self.restart);
            r.failures += 1;
            r.ready_since = None;
        }
        *lock(&self.listing) = Arc::new(Listing::default());
        self.dirty.fetch_add(1, Ordering::AcqRel);
        self.health.send_replace(Health::Failed {
            cause,
            at: Instant::now(),
        });
    }

    async fn connect(&self) -> Result<(Conn, Listing), String> {
        let handler = DownHandler {
            signal: self.relist.clone(),
        };
        let tail: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let (service, pgid, child) = match &self.cfg.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let spec = crate::stdio_child::Spec {
                    alias: &self.cfg.alias,
                    command,
                    args,
                    env,
                    cwd: cwd.as_ref(),
                };
                let (transport, child) = crate::stdio_child::spawn(&spec, tail.clone())?;
                let pgid = child.pid;
                if let Some(g) = pgid {
                    self.registry.add(g);
                }
                match handler.serve(transport).await {
                    Ok(s) => (s, pgid, Some(child)),
                    Err(e) => {
                        if let Some(g) = pgid {
                            self.registry.kill(g);
                        }
                        // Give the stderr reader a moment to catch the reason.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let last = lock(&tail).back().cloned();
                        return Err(match last {
                            Some(l) => format!("{} (stderr: {l})", short(e)),
                            None => short(e),
                        });
                    }
                }
            }
            ServerTransport::Http { url, auth, headers } => {
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                crate::tls::install_provider();
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(auth) = auth {
                    let token = std::env::var(&auth.bearer_env).map_err(|_| {
                        format!(
                            "environment variable {} (auth.bearer_env) is not set",
                            auth.bearer_env
                        )
                    })?;
                    config = config.auth_header(token);
                }
                let mut map = std::collections::HashMap::new();
                for (k, v) in headers {
                    let name = axum::http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| format!("header {k:?}: {e}"))?;
                    let value = axum::http::HeaderValue::from_str(v)
                        .map_err(|e| format!("header {k:?}: {e}"))?;
                    map.insert(name, value);
                }
                config = config.custom_headers(map);
                let transport = StreamableHttpClientTransport::from_config(config);
                let s = handler.serve(transport).await.map_err(short)?;
                (s, None, None)
            }
        };
        let conn = Conn {
            service,
            _child: child,
            pgid,
            registry: self.registry.clone(),
            stderr_tail: tail,
        };
        let listing = list_everything(conn.service.peer(), self.cfg.list_caps)
            .await
            .map_err(|e| e.to_string())?;
        Ok((conn, listing))
    }

    /// A ready connection, waiting for a start in progress and restarting a
    /// crashed or failed server when its backoff has passed.
    pub async fn ready(self: &Arc<Self>) -> Result<Arc<Conn>, DownError> {
        let unavailable = |reason: String| DownError::Unavailable {
            server: self.cfg.alias.clone(),
            reason,
        };
        for _ in 0..3 {
            self.notice_crash();
            let h = self.health.borrow().clone();
            let crashed = matches!(h, Health::Crashed { .. });
            match h {
                Health::Disabled => return Err(unavailable("is disabled in skarn.toml".into())),
                Health::Ready => {
                    if let Some(c) = lock(&self.conn).clone() {
                        return Ok(c);
                    }
                }
                Health::Starting { .. } => {
                    let mut rx = self.health.subscribe();
                    let wait = self.cfg.start_timeout + Duration::from_secs(1);
                    let _ = tokio::time::timeout(
                        wait,
                        rx.wait_for(|h| !matches!(h, Health::Starting { .. })),
                    )
                    .await;
                    if matches!(*self.health.borrow(), Health::Starting { .. }) {
                        return Err(unavailable("is still starting".into()));
                    }
                }
                Health::Failed { cause, at } | Health::Crashed { cause, at } => {
                    let when = self.retry_at(at, crashed);
                    let now = Instant::now();
                    if now < when {
                        let secs = (when - now).as_secs_f64();
                        let what = if crashed {
                            "crashed"
                        } else {
                            "failed to start"
                        };
                        return Err(unavailable(format!(
                            "{what}: {cause} (next restart attempt in {secs:.1} s)"
                        )));
                    }
                    self.start().await;
                    if let Health::Failed { cause, .. } = &*self.health.borrow() {
                        let what = if crashed {
                            "crashed and could not be restarted"
                        } else {
                            "failed to start"
                        };
                        return Err(unavailable(format!("{what}: {cause}")));
                    }
                }
            }
        }
        Err(unavailable("is not available".into()))
    }

    /// Call one tool with the per-call timeout.
    pub async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, DownError> {
        let conn = self.ready().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args;
        let t = self.cfg.call_timeout;
        match tokio::time::timeout(t, conn.service.peer().call_tool(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{}.{tool}", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    /// Read one resource with the per-call timeout.
    pub async fn read_resource(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<ReadResourceResult, DownError> {
        let conn = self.ready().await?;
        let t = self.cfg.call_timeout;
        let params = ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(t, conn.service.peer().read_resource(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{} resources/read", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    /// Get one prompt with the per-call timeout.
    pub async fn get_prompt(
        self: &Arc<Self>,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, DownError> {
        let conn = self.ready().await?;
        let t = self.cfg.call_timeout;
        let mut params = rmcp::model::GetPromptRequestParams::default();
        params.name = name.to_owned();
        params.arguments = args;
        match tokio::time::timeout(t, conn.service.peer().get_prompt(params)).await {
            Err(_) => Err(DownError::Timeout {
                what: format!("{} prompts/get", self.cfg.alias),
                timeout_ms: t.as_millis() as u64,
            }),
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.service_error(&conn, e)),
        }
    }

    fn service_error(&self, conn: &Arc<Conn>, e: ServiceError) -> DownError {
        match e {
            ServiceError::McpError(data) => DownError::Rejected(data.message.to_string()),
            ServiceError::Timeout { timeout } => DownError::Timeout {
                what: self.cfg.alias.clone(),
                timeout_ms: timeout.as_millis() as u64,
            },
            other => {
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

    /// Drop the connection (its child group is killed).
    pub fn disconnect(&self) {
        let conn = lock(&self.conn).take();
        drop(conn);
    }
}
