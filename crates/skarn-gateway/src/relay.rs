//! The way back from downstream servers to the connected clients:
//! sampling and elicitation requests (forwarded to the client whose call is
//! in flight, never answered on the user's behalf), roots, progress of
//! relayed calls (under the client's own progress token), log messages
//! (tagged by server, rate-limited) and resource updates (to the clients
//! that subscribed).
// Logging, sampling and roots are deprecated in rmcp (SEP-2577) but are
// part of every protocol revision a client speaks today.
#![allow(deprecated)]

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorCode,
    ListRootsResult, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, ResourceUpdatedNotificationParam,
};
use rmcp::service::{Peer, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use crate::downstream::lock;

/// Log messages one server may send per second before the rest are dropped.
const LOGS_PER_SECOND: u32 = 50;

/// The client a relayed call came from.
#[derive(Clone)]
pub struct Caller {
    /// The session's id in the relay.
    pub client: u64,
    pub peer: Peer<RoleServer>,
    /// The client's `_meta.progressToken`, if it asked for progress.
    pub progress: Option<ProgressToken>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("client", &self.client)
            .field("progress", &self.progress)
            .finish()
    }
}

#[derive(Default)]
struct LogWindow {
    start: Option<Instant>,
    sent: u32,
    dropped: u32,
}

/// Where one downstream request's progress goes: the client and its token.
type ProgressTarget = (Peer<RoleServer>, ProgressToken);

/// Shared by every session and every downstream server of a gateway.
#[derive(Default)]
pub struct Relay {
    next: AtomicU64,
    clients: Mutex<Vec<(u64, Peer<RoleServer>)>>,
    /// Calls in flight, most recent last: (guard id, server called or
    /// `None` for a whole script, caller).
    callers: Mutex<Vec<(u64, Option<usize>, Caller)>>,
    /// (server, downstream token) → (client, client token).
    progress: Mutex<HashMap<(usize, ProgressToken), ProgressTarget>>,
    /// URI → clients subscribed to it.
    subs: Mutex<HashMap<String, HashSet<u64>>>,
    level: Mutex<Option<LoggingLevel>>,
    logs: Mutex<HashMap<usize, LogWindow>>,
    /// Progress notifications being forwarded right now.
    forwarding: AtomicU64,
    /// Progress notifications whose forwarding has started, ever.
    progress_seen: AtomicU64,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("clients", &lock(&self.clients).len())
            .finish()
    }
}

/// Removes its entry from the relay when dropped.
pub struct Registration<'a> {
    relay: &'a Relay,
    what: Entry,
}

enum Entry {
    Caller(u64),
    Progress(usize, ProgressToken),
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        match &self.what {
            Entry::Caller(id) => lock(&self.relay.callers).retain(|(i, _, _)| i != id),
            Entry::Progress(s, t) => {
                lock(&self.relay.progress).remove(&(*s, t.clone()));
            }
        }
    }
}

fn forwarded(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    }
}

fn rank(l: LoggingLevel) -> u8 {
    use LoggingLevel::*;
    match l {
        Debug => 0,
        Info => 1,
        Notice => 2,
        Warning => 3,
        Error => 4,
        Critical => 5,
        Alert => 6,
        Emergency => 7,
    }
}

impl Relay {
    /// A new session id.
    pub fn new_client_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A session finished its handshake.
    pub fn add_client(&self, id: u64, peer: Peer<RoleServer>) {
        let mut c = lock(&self.clients);
        c.retain(|(_, p)| !p.is_transport_closed());
        c.push((id, peer));
    }

    /// The connected clients.
    pub fn clients(&self) -> Vec<(u64, Peer<RoleServer>)> {
        let mut c = lock(&self.clients);
        c.retain(|(_, p)| !p.is_transport_closed());
        c.clone()
    }

    /// Note a relayed call in flight to `server` (or a whole script, for
    /// `None`) until the registration is dropped: requests a downstream
    /// server sends meanwhile go to its client.
    pub fn calling(&self, server: Option<usize>, caller: &Caller) -> Registration<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.callers).push((id, server, caller.clone()));
        Registration {
            relay: self,
            what: Entry::Caller(id),
        }
    }

    /// Relay progress of a downstream request under the client's token.
    pub fn track_progress(
        &self,
        server: usize,
        downstream: ProgressToken,
        caller: &Caller,
    ) -> Option<Registration<'_>> {
        let token = caller.progress.clone()?;
        lock(&self.progress).insert((server, downstream.clone()), (caller.peer.clone(), token));
        Some(Registration {
            relay: self,
            what: Entry::Progress(server, downstream),
        })
    }

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
        from_call.or_else(|| self.clients().last().map(|(_, p)| p.clone()))
    }

    fn target_with(
        &self,
        server: usize,
        what: &str,
        has: impl Fn(&Peer<RoleServer>) -> bool,
    ) -> Result<Peer<RoleServer>, ErrorData> {
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

    /// `sampling/createMessage` from a downstream server.
    pub async fn create_message(
        &self,
        server: usize,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let peer = self.target_with(server, "sampling", |p| {
            p.peer_info()
                .is_some_and(|i| i.capabilities.sampling.is_some())
        })?;
        peer.create_message(params).await.map_err(forwarded)
    }

    /// `elicitation/create` from a downstream server.
    pub async fn create_elicitation(
        &self,
        server: usize,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let peer = self.target_with(server, "elicitation", |p| {
            p.peer_info()
                .is_some_and(|i| i.capabilities.elicitation.is_some())
        })?;
        peer.create_elicitation(params).await.map_err(forwarded)
    }

    /// `roots/list` from a downstream server: the client's roots, or none
    /// when no client offers roots.
    pub async fn list_roots(&self, server: usize) -> Result<ListRootsResult, ErrorData> {
        let Some(peer) = self.target(server) else {
            return Ok(ListRootsResult::default());
        };
        if peer
            .peer_info()
            .is_none_or(|i| i.capabilities.roots.is_none())
        {
            return Ok(ListRootsResult::default());
        }
        peer.list_roots().await.map_err(forwarded)
    }

    /// A downstream progress notification, under its client's token.
    pub async fn progress(&self, server: usize, mut p: ProgressNotificationParam) {
        self.forwarding.fetch_add(1, Ordering::AcqRel);
        self.progress_seen.fetch_add(1, Ordering::AcqRel);
        let to = lock(&self.progress)
            .get(&(server, p.progress_token.clone()))
            .cloned();
        if let Some((peer, token)) = to {
            p.progress_token = token;
            let _ = peer.notify_progress(p).await;
        }
        self.forwarding.fetch_sub(1, Ordering::AcqRel);
    }

    /// Called when a relayed call's answer arrived: rmcp hands each
    /// notification to its own task, so progress the server sent just
    /// before its answer may still be on its way, and on a busy machine
    /// such a task may not even have started yet. Wait (at most 100 ms)
    /// until no forwarding is in flight and none has started for three
    /// 1 ms ticks, so that the client gets the progress before the answer:
    /// clients drop progress that comes after it.
    pub async fn settle_progress(&self) {
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let deadline = Instant::now() + Duration::from_millis(100);
        let mut seen = self.progress_seen.load(Ordering::Acquire);
        let mut quiet = 0;
        while Instant::now() < deadline {
            if self.forwarding.load(Ordering::Acquire) > 0 {
                quiet = 0;
            } else if quiet >= 3 {
                break;
            } else {
                quiet += 1;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            let now = self.progress_seen.load(Ordering::Acquire);
            if now != seen {
                seen = now;
                quiet = 0;
            }
        }
    }

    /// Progress of the client's own call (e.g. a long `execute`).
    pub async fn own_progress(&self, caller: &Caller, progress: f64, message: String) {
        if let Some(token) = caller.progress.clone() {
            let mut p = ProgressNotificationParam::new(token, progress);
            p.message = Some(message);
            let _ = caller.peer.notify_progress(p).await;
        }
    }

    /// The level the clients asked for (forwarded to servers as they start).
    pub fn level(&self) -> Option<LoggingLevel> {
        *lock(&self.level)
    }

    pub fn set_level(&self, level: LoggingLevel) {
        *lock(&self.level) = Some(level);
    }

    /// A downstream log message: tagged with the server's alias, filtered
    /// by the clients' level, at most [`LOGS_PER_SECOND`] per server.
    pub async fn log(&self, server: usize, alias: &str, mut m: LoggingMessageNotificationParam) {
        if let Some(min) = self.level()
            && rank(m.level) < rank(min)
        {
            return;
        }
        let dropped = {
            let mut logs = lock(&self.logs);
            let w = logs.entry(server).or_default();
            let now = Instant::now();
            let mut dropped = 0;
            if w.start.is_none_or(|s| now - s >= Duration::from_secs(1)) {
                dropped = w.dropped;
                *w = LogWindow {
                    start: Some(now),
                    sent: 0,
                    dropped: 0,
                };
            }
            if w.sent >= LOGS_PER_SECOND {
                w.dropped += 1;
                return;
            }
            w.sent += 1;
            dropped
        };
        m.logger = Some(match m.logger.take() {
            Some(l) => format!("{alias}/{l}"),
            None => alias.to_owned(),
        });
        let mut notes = Vec::new();
        if dropped > 0 {
            let mut n = LoggingMessageNotificationParam::new(
                LoggingLevel::Warning,
                json!(format!(
                    "{dropped} log messages of server {alias} were dropped (more than {LOGS_PER_SECOND} a second)"
                )),
            );
            n.logger = Some("skarn".into());
            notes.push(n);
        }
        notes.push(m);
        for (_, peer) in self.clients() {
            for n in &notes {
                let _ = peer.notify_logging_message(n.clone()).await;
            }
        }
    }

    /// Record a client's subscription; true when it is the first one for
    /// this URI (so the owning server must be told).
    pub fn subscribe(&self, client: u64, uri: &str) -> bool {
        let mut s = lock(&self.subs);
        let set = s.entry(uri.to_owned()).or_default();
        let first = set.is_empty();
        set.insert(client);
        first
    }

    /// Drop a client's subscription; true when no client is left on it.
    pub fn unsubscribe(&self, client: u64, uri: &str) -> bool {
        let mut s = lock(&self.subs);
        let Some(set) = s.get_mut(uri) else {
            return false;
        };
        set.remove(&client);
        if set.is_empty() {
            s.remove(uri);
            true
        } else {
            false
        }
    }

    /// `notifications/resources/updated` from a server, to its subscribers.
    pub async fn resource_updated(&self, p: ResourceUpdatedNotificationParam) {
        let who = lock(&self.subs).get(&p.uri).cloned().unwrap_or_default();
        for (id, peer) in self.clients() {
            if who.contains(&id) {
                let _ = peer.notify_resource_updated(p.clone()).await;
            }
        }
    }
}
