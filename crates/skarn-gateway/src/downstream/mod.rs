//! One downstream MCP server: its connection, health, restart policy and
//! listings.
//!
//! A server starts in the background with a start timeout. Its health is
//! always one of [`Health`]; every failure keeps its cause. A stdio server
//! that crashed is restarted on the next call that needs it, with
//! exponential backoff between consecutive failures. Child processes run in
//! their own process group; the group and its descendants are killed when
//! the connection is dropped, and [`ChildRegistry::kill_all`] ends what is
//! left when the gateway exits. Connecting is in `connect.rs`, requests in
//! `calls.rs`, re-listing in `relist.rs`.

pub(crate) mod calls;
pub(crate) mod connect;
pub(crate) mod era;
pub(crate) mod guard;
pub(crate) mod handler;
pub(crate) mod probe;
pub(crate) mod relist;
pub(crate) mod rounds;
pub(crate) mod shared;
pub(crate) mod starting;
pub(crate) mod tasks;
pub(crate) mod types;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::sync_util::lock;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::service::RunningService;
use tokio::sync::{mpsc, watch};

pub use crate::children::ChildRegistry;
use crate::config::ServerConfig;
use crate::downstream::handler::{DownHandler, RelistSignal};
pub use crate::downstream::types::{Health, ListChanged, ListKind, Listing};

/// A live connection.
pub struct Conn {
    pub(crate) service: RunningService<RoleClient, DownHandler>,
    pub(crate) _child: Option<crate::stdio_child::StdioChild>,
    pub(crate) pgid: Option<i32>,
    pub(crate) registry: Arc<ChildRegistry>,
    pub(crate) stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Why the gateway cut this connection off, once it did.
    pub(crate) wire: Arc<crate::downstream::guard::Tripwire>,
    /// A 2026-07-28 server's resource subscriptions.
    pub(crate) listens: crate::downstream::era::ResourceListens,
    /// A 2025-11-25 server's tools that run only as tasks.
    pub(crate) tasks: crate::downstream::tasks::TaskTools,
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
        self.wire.cause().is_some()
            || self.service.is_closed()
            || self.service.peer().is_transport_closed()
    }

    /// Why the gateway cut this connection off, if it did.
    pub(crate) fn cut_off(&self) -> Option<String> {
        self.wire.cause().map(str::to_owned)
    }

    pub(crate) fn last_stderr(&self) -> Option<String> {
        self.stderr_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .back()
            .cloned()
    }
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
    /// The server refused the arguments (JSON-RPC "invalid params").
    #[error("{0}")]
    InvalidParams(String),
    /// The server has no such resource (JSON-RPC "resource not found").
    #[error("{0}")]
    NotFound(String),
    /// The client did not declare a capability the server needs
    /// (2026-07-28 `-32021`): passed on to the client as that error.
    #[error("{message}")]
    MissingCapability {
        message: String,
        data: Option<serde_json::Value>,
    },
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
    pub(crate) health: watch::Sender<Health>,
    pub(crate) conn: Mutex<Option<Arc<Conn>>>,
    pub(crate) listing: Mutex<Arc<Listing>>,
    restart: Mutex<Restart>,
    start_lock: tokio::sync::Mutex<()>,
    pub(crate) registry: Arc<ChildRegistry>,
    pub(crate) events: mpsc::UnboundedSender<ListChanged>,
    /// `list_changed` notifications waiting for a re-list.
    pub(crate) relist: Arc<RelistSignal>,
    /// Bumped whenever this server's listing changes (the gateway rebuilds
    /// its catalogue lazily when it is behind).
    pub(crate) dirty: Arc<AtomicU64>,
    /// What the servers share: start slots and the relay to the clients.
    pub(crate) shared: Arc<crate::downstream::shared::Shared>,
    /// Its sandbox: confined or not, hosts refused (issue 12).
    pub sandbox: Arc<crate::sandbox_state::SandboxState>,
}

impl Downstream {
    pub fn new(
        index: usize,
        cfg: ServerConfig,
        registry: Arc<ChildRegistry>,
        events: mpsc::UnboundedSender<ListChanged>,
        dirty: Arc<AtomicU64>,
        shared: Arc<crate::downstream::shared::Shared>,
    ) -> Downstream {
        let initial = if cfg.enabled {
            Health::Queued {
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
            shared,
            sandbox: Arc::default(),
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

    pub(crate) fn notice_crash(&self) {
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

    /// Forget a connection that died (or was cut off by the gateway: then
    /// the server is marked failed with that cause, already logged).
    pub(crate) fn mark_crashed(&self, conn: &Arc<Conn>, cause: String) {
        let cut_off = conn.cut_off();
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
            let cause = self.with_give_up(cause);
            let at = Instant::now();
            // Its listing stays, so that its tools answer with the cause.
            if let Some(cause) = cut_off {
                let cause = self.with_give_up(cause);
                self.health.send_replace(Health::Failed { cause, at });
                return;
            }
            tracing::warn!(server = %self.cfg.alias, cause = %crate::text_safe::visible(&cause), "downstream server crashed");
            self.health.send_replace(Health::Crashed { cause, at });
        }
    }

    /// Whether the server failed `start_attempts` times in a row and is
    /// no longer retried (until `skarn serve` restarts).
    pub(crate) fn gave_up(&self) -> bool {
        lock(&self.restart).failures >= self.cfg.start_attempts
    }

    /// The cause of a failure, saying so when it was the last attempt.
    fn with_give_up(&self, cause: String) -> String {
        if !self.gave_up() {
            return cause;
        }
        let n = self.cfg.start_attempts;
        tracing::error!(
            server = %self.cfg.alias,
            "downstream server given up after {n} failed attempt(s); fix it and restart skarn serve"
        );
        format!(
            "{cause}; given up after {n} failed attempt(s) (start_attempts): fix the server and restart skarn serve"
        )
    }

    /// When the next restart may happen after a failure at `at`.
    pub(crate) fn retry_at(&self, at: Instant, crashed: bool) -> Instant {
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
    /// share one attempt. The attempt first waits for a start slot; its
    /// start timeout counts from when it has one. A retry after a failure
    /// keeps the failure visible until it succeeds or fails anew.
    pub async fn start(self: &Arc<Self>) {
        if !self.cfg.enabled || self.shared.stopped() {
            return;
        }
        let observed = self.health.borrow().clone();
        let _guard = self.start_lock.lock().await;
        // Someone else finished an attempt while we waited.
        let now = self.health.borrow().clone();
        if now != observed && !now.is_pending() {
            return;
        }
        if matches!(now, Health::Ready) {
            return;
        }
        let retry = now.cause().is_some();
        if !retry && !matches!(now, Health::Queued { .. }) {
            self.health.send_replace(Health::Queued {
                since: Instant::now(),
            });
        }
        let Some(_slot) = self.shared.start_slot().await else {
            // Shutting down: nobody should wait for this start any more.
            self.health.send_replace(Health::Failed {
                cause: "the gateway is shutting down".into(),
                at: Instant::now(),
            });
            return;
        };
        if !retry {
            self.health.send_replace(Health::Starting {
                since: Instant::now(),
            });
        }
        let timeout = self.cfg.start_timeout;
        let result = tokio::time::timeout(timeout, self.connect()).await;
        drop(_slot);
        match result {
            Ok(Ok((conn, listing))) => {
                let kinds = crate::downstream::types::offered(&listing);
                *lock(&self.listing) = Arc::new(listing);
                // Before the health change: whoever sees "ready" must also
                // see the new listing in the catalogue.
                self.dirty.fetch_add(1, Ordering::AcqRel);
                let conn = Arc::new(conn);
                *lock(&self.conn) = Some(conn.clone());
                lock(&self.restart).ready_since = Some(Instant::now());
                self.health.send_replace(Health::Ready);
                if conn.cut_off().is_some() {
                    // Cut off between its listing and now.
                    self.notice_crash();
                    return;
                }
                tracing::info!(server = %self.cfg.alias, "downstream server ready");
                if let Some(level) = self.shared.relay.level() {
                    let me = self.clone();
                    tokio::spawn(async move { me.set_level(level).await });
                }
                self.dirty.fetch_add(1, Ordering::AcqRel);
                for kind in kinds {
                    let _ = self.events.send(ListChanged {
                        server: self.index,
                        kind,
                    });
                }
                return;
            }
            Ok(Err(cause)) => self.fail(cause),
            Err(_) => self.fail(format!(
                "no answer within the start timeout ({} ms)",
                timeout.as_millis()
            )),
        }
        // The catalogue may have lost this server's entries.
        self.dirty.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(ListChanged {
            server: self.index,
            kind: ListKind::Tools,
        });
    }

    pub(crate) fn fail(&self, cause: String) {
        tracing::warn!(server = %self.cfg.alias, cause = %crate::text_safe::visible(&cause), "downstream server failed to start");
        {
            let mut r = lock(&self.restart);
            r.failures += 1;
            r.ready_since = None;
        }
        // The cause reaches the model (`search`): the fact, not the advice
        // to widen, which the log line above keeps for the user (ADR 0240).
        let cause = self.with_give_up(skarn_sandbox::report::advice::fact_only(&cause));
        *lock(&self.listing) = Arc::new(Listing::default());
        self.dirty.fetch_add(1, Ordering::AcqRel);
        self.health.send_replace(Health::Failed {
            cause,
            at: Instant::now(),
        });
    }

    /// Drop the connection (its child group is killed).
    pub fn disconnect(&self) {
        let conn = lock(&self.conn).take();
        drop(conn);
    }
}

impl DownHandler {
    /// The handler of a connection of `d` over `wire`.
    pub(crate) fn new(
        d: &Downstream,
        wire: Arc<crate::downstream::guard::Tripwire>,
    ) -> DownHandler {
        DownHandler {
            signal: d.relist.clone(),
            server: d.index,
            alias: d.cfg.alias.as_str().into(),
            relay: d.shared.relay.clone(),
            wire,
        }
    }
}
