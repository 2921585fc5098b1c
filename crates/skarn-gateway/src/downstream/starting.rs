//! Scheduling server starts: at most as many servers start at once as there
//! are cores (each start timeout counts from when that server's start
//! begins), waiting for pending servers, and retrying failed starts and
//! crashed servers in the background with backoff.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::downstream::{Conn, DownError, Downstream, Health};
use crate::gateway::{Gateway, ServerHealth};
use crate::sync_util::lock;

impl Downstream {
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
                Health::Queued { .. } | Health::Starting { .. } => {
                    self.settled().await;
                    if self.health.borrow().is_pending() {
                        return Err(unavailable("is still starting".into()));
                    }
                }
                Health::Failed { cause, at } | Health::Crashed { cause, at } => {
                    if self.gave_up() {
                        return Err(unavailable(format!("failed: {cause}")));
                    }
                    let when = self.retry_at(at, crashed);
                    let now = Instant::now();
                    if now < when {
                        let secs = (when - now).as_secs_f64();
                        let what = if crashed {
                            "crashed"
                        } else if cause.starts_with(crate::downstream::guard::CUT_OFF) {
                            "was"
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

    /// Wait while this server is queued or starting: while it is queued,
    /// for as long as it takes to get a slot; once started, at most its
    /// start timeout (plus a second).
    pub async fn settled(&self) {
        let mut rx = self.health.subscribe();
        loop {
            let h = rx.borrow_and_update().clone();
            match h {
                Health::Queued { .. } => {
                    if rx.changed().await.is_err() {
                        return;
                    }
                }
                Health::Starting { since } => {
                    let end = since + self.cfg.start_timeout + Duration::from_secs(1);
                    let left = end.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(left, rx.changed()).await {
                        Ok(Ok(())) => {}
                        _ => return,
                    }
                }
                _ => return,
            }
        }
    }

    /// Retry a failed start, or restart a crashed server, in the
    /// background once its backoff has passed (1 s, 2 s … 60 s while
    /// failures repeat); until the gateway is gone.
    pub async fn supervise(self: Arc<Self>) {
        let mut rx = self.health.subscribe();
        let weak = Arc::downgrade(&self);
        drop(self);
        loop {
            let (at, crashed) = match &*rx.borrow_and_update() {
                Health::Failed { at, .. } => (*at, false),
                Health::Crashed { at, .. } => (*at, true),
                _ => (Instant::now(), false),
            };
            let due = {
                let Some(me) = weak.upgrade() else { return };
                let h = me.health.borrow().clone();
                if h.cause().is_some() && !me.gave_up() {
                    Some(me.retry_at(at, crashed))
                } else {
                    None
                }
            };
            match due {
                None => {
                    if rx.changed().await.is_err() {
                        return;
                    }
                }
                Some(when) => {
                    let sleep = tokio::time::sleep_until(when.into());
                    tokio::select! {
                        _ = sleep => {
                            let Some(me) = weak.upgrade() else { return };
                            let still = matches!(
                                &*me.health.borrow(),
                                Health::Failed { at: a, .. } | Health::Crashed { at: a, .. } if *a == at
                            );
                            if still {
                                me.start().await;
                            }
                        }
                        r = rx.changed() => if r.is_err() { return },
                    }
                }
            }
        }
    }
}

impl Gateway {
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
            if !self.servers.iter().any(|s| s.health().is_pending()) {
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

    /// Wait for every server that is queued or starting (each bounded by
    /// its own start timeout once it has started), so that an answer built
    /// afterwards covers the whole catalogue.
    pub async fn wait_for_starts(&self) {
        let pending: Vec<_> = self
            .servers
            .iter()
            .filter(|s| s.health().is_pending())
            .map(|s| s.settled())
            .collect();
        if !pending.is_empty() {
            futures::future::join_all(pending).await;
        }
    }

    /// Health of servers that are not ready, as JSON arrays (still
    /// starting; unavailable with cause) and lines of text (empty when
    /// everything is ready).
    pub fn not_ready(&self) -> (Vec<Value>, Vec<Value>, String) {
        let mut starting = Vec::new();
        let mut unavailable = Vec::new();
        let mut text = Vec::new();
        for s in &self.servers {
            let h = s.health();
            let name = s.alias();
            match &h {
                Health::Queued { .. } | Health::Starting { .. } => starting.push(json!(name)),
                Health::Failed { cause, .. } | Health::Crashed { cause, .. } if s.gave_up() => {
                    text.push(format!("server {name} failed: {cause}"));
                    unavailable.push(json!({
                        "server": name,
                        "status": h.status(),
                        "cause": crate::text_safe::visible(cause),
                        "given_up": true,
                    }));
                }
                Health::Failed { cause, at } | Health::Crashed { cause, at } => {
                    let crashed = matches!(h, Health::Crashed { .. });
                    let what = if crashed {
                        "crashed"
                    } else {
                        "failed to start"
                    };
                    let retry = s
                        .retry_at(*at, crashed)
                        .saturating_duration_since(Instant::now());
                    text.push(format!(
                        "server {name} {what}: {cause} (retrying in {:.0} s)",
                        retry.as_secs_f64().ceil()
                    ));
                    unavailable.push(json!({
                        "server": name,
                        "status": h.status(),
                        "cause": crate::text_safe::visible(cause),
                        "retry_in_ms": retry.as_millis() as u64,
                    }));
                }
                _ => {}
            }
            // The fact only: the hosts (which the server chose) and the
            // line that would allow them go to the user (the gateway's log,
            // `skarn doctor`), never into text the model reads.
            let denied = s.sandbox.denials().len();
            if denied > 0 {
                text.push(format!(
                    "server {name} was denied network access ({denied} destination(s)); the \
                     sandbox policy is the user's to change (see `skarn doctor`)"
                ));
            }
        }
        if !starting.is_empty() {
            let names: Vec<&str> = starting.iter().filter_map(Value::as_str).collect();
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
}
