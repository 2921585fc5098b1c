//! The way back from downstream servers to the connected clients:
//! sampling and elicitation requests (forwarded to the client whose call is
//! in flight, never answered on the user's behalf), roots, progress of
//! relayed calls (under the client's own progress token), log messages
//! (tagged by server, rate-limited) and resource updates (to the clients
//! that subscribed). Sampling, elicitation and roots requests are bounded
//! per server (`client_asks`) and routed in [`asks`]; notifications go
//! through each client's bounded queue (`outbox`).
// Logging, sampling and roots are deprecated in rmcp (SEP-2577) but are
// part of every protocol revision a client speaks today.
#![allow(deprecated)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorCode, ListRootsRequest, ListRootsResult,
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ResourceUpdatedNotificationParam, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use crate::client_asks::{AskGate, AskLimits};
use crate::downstream::guard::Tripwire;
use crate::outbox::{Note, Outbox, QueueCaps};
use crate::sync_util::lock;

mod asks;
pub(crate) mod listeners;
pub(crate) mod parked;
pub(crate) mod rounds;

/// Log messages one server may send per second before the rest are dropped.
const LOGS_PER_SECOND: u32 = 50;

/// How long an answer waits at most for its progress to reach the client
/// (see [`Relay::settle_progress`]).
const SETTLE_AT_MOST: Duration = Duration::from_secs(2);

/// The client a relayed call came from.
#[derive(Clone)]
pub struct Caller {
    /// The session's id in the relay.
    pub client: u64,
    pub peer: Peer<RoleServer>,
    /// The client's `_meta.progressToken`, if it asked for progress.
    pub progress: Option<ProgressToken>,
    /// For a 2026-07-28 client: where its `input_required` rounds go.
    pub rounds: Option<Arc<rounds::Rounds>>,
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

/// Where one downstream request's progress goes: the client (its id and
/// peer) and its token.
type ProgressTarget = (u64, Peer<RoleServer>, ProgressToken);

/// One connected client and its queue of notifications.
type Client = (u64, Peer<RoleServer>, Arc<Outbox>);

/// Shared by every session and every downstream server of a gateway.
#[derive(Default)]
pub struct Relay {
    next: AtomicU64,
    clients: Mutex<Vec<Client>>,
    /// Bounds of each client's notification queue.
    queue_caps: QueueCaps,
    /// Bounds on sampling, elicitation and roots requests, per server.
    asks: AskGate,
    /// Calls in flight, most recent last: (guard id, server called or
    /// `None` for a whole script, caller).
    callers: Mutex<Vec<(u64, Option<usize>, Caller)>>,
    /// (server, downstream token) → (client, client token).
    progress: Mutex<HashMap<(usize, ProgressToken), ProgressTarget>>,
    /// URI → the server it was subscribed at, and the clients subscribed.
    subs: Mutex<HashMap<String, (usize, HashSet<u64>)>>,
    /// The level each client asked for with `logging/setLevel` (attack
    /// F10: one client's level is its own).
    levels: Mutex<HashMap<u64, LoggingLevel>>,
    logs: Mutex<HashMap<usize, LogWindow>>,
    /// The `subscriptions/listen` streams of 2026-07-28 clients.
    pub(crate) listeners: listeners::Listeners,
    /// Calls of 2026-07-28 clients waiting for their answers.
    pub(crate) parked: parked::Parked,
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
    /// A relay with these bounds.
    pub fn new(queue_caps: QueueCaps, asks: AskLimits) -> Relay {
        Relay {
            queue_caps,
            asks: AskGate::new(asks),
            ..Relay::default()
        }
    }

    /// A new session id.
    pub fn new_client_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A session finished its handshake.
    pub fn add_client(&self, id: u64, peer: Peer<RoleServer>) {
        self.outbox(id, &peer);
    }

    /// The connected clients, forgetting (and closing the queues of)
    /// those that went away.
    pub fn clients(&self) -> Vec<Client> {
        let mut c = lock(&self.clients);
        let mut gone = Vec::new();
        c.retain(|(id, p, o)| {
            let live = !p.is_transport_closed();
            if !live {
                o.close();
                gone.push(*id);
            }
            live
        });
        if !gone.is_empty() {
            lock(&self.levels).retain(|id, _| !gone.contains(id));
        }
        c.clone()
    }

    /// The notification queue of client `id` (made on first use).
    fn outbox(&self, id: u64, peer: &Peer<RoleServer>) -> Arc<Outbox> {
        if let Some((_, _, o)) = self.clients().into_iter().find(|(i, _, _)| *i == id) {
            return o;
        }
        let mut c = lock(&self.clients);
        if let Some((_, _, o)) = c.iter().find(|(i, _, _)| *i == id) {
            return o.clone();
        }
        let o = Outbox::start(id, peer.clone(), self.queue_caps);
        c.push((id, peer.clone(), o.clone()));
        o
    }

    /// (notifications queued now, dropped ever) for client `id`.
    pub fn queue_counts(&self, id: u64) -> (usize, u64) {
        lock(&self.clients)
            .iter()
            .find(|(i, _, _)| *i == id)
            .map_or((0, 0), |(_, _, o)| o.counts())
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
        lock(&self.progress).insert(
            (server, downstream.clone()),
            (caller.client, caller.peer.clone(), token),
        );
        Some(Registration {
            relay: self,
            what: Entry::Progress(server, downstream),
        })
    }

    /// A downstream progress notification, queued for its client under
    /// the client's token.
    pub fn progress(&self, server: usize, mut p: ProgressNotificationParam) {
        let to = lock(&self.progress)
            .get(&(server, p.progress_token.clone()))
            .cloned();
        if let Some((client, peer, token)) = to {
            p.progress_token = token;
            // Shown to the user as the server's words (atk25d F2).
            if let Some(m) = p.message.as_deref() {
                p.message = Some(crate::text_safe::visible_block(m));
            }
            self.outbox(client, &peer).push(Note::Progress(p));
        }
    }

    /// Called when a relayed call's answer arrived, before it goes back:
    /// clients drop progress that comes after the answer, so wait until
    /// the `received` progress notifications `server`'s transport had
    /// taken in by then have been handled (rmcp hands each notification
    /// to a task of its own, which may not even have started yet on a busy
    /// machine), and then until the caller's queue has written what it
    /// held. Counts, not quiet periods, decide; the bound only serves a
    /// client that stopped reading (or a notification rmcp never handed
    /// over).
    pub async fn settle_progress(&self, wire: &Tripwire, received: u64, caller: &Caller) {
        let deadline = tokio::time::Instant::now() + SETTLE_AT_MOST;
        if !wire.progress_settled(received, deadline).await {
            tracing::debug!(received, "progress not all handled in time");
            return;
        }
        self.flush_until(caller, deadline).await;
    }

    /// Wait until what the caller's queue holds now has been written to
    /// the client (at most [`SETTLE_AT_MOST`]), e.g. before the answer of
    /// a script that reported its own progress.
    pub async fn flush_client(&self, caller: &Caller) {
        let deadline = tokio::time::Instant::now() + SETTLE_AT_MOST;
        self.flush_until(caller, deadline).await;
    }

    async fn flush_until(&self, caller: &Caller, deadline: tokio::time::Instant) {
        let o = self.outbox(caller.client, &caller.peer);
        let mark = o.mark();
        o.flushed(mark, deadline).await;
    }

    /// Progress of the client's own call (e.g. a long `execute`), queued.
    pub fn own_progress(&self, caller: &Caller, progress: f64, message: String) {
        if let Some(token) = caller.progress.clone() {
            let mut p = ProgressNotificationParam::new(token, progress);
            p.message = Some(message);
            self.outbox(caller.client, &caller.peer)
                .push(Note::Progress(p));
        }
    }

    /// The level servers are asked to log at (forwarded to servers as they
    /// start): the most verbose one a connected client asked for, so each
    /// client can get what it asked for; the relay filters per client.
    pub fn level(&self) -> Option<LoggingLevel> {
        let _ = self.clients();
        lock(&self.levels)
            .values()
            .copied()
            .min_by_key(|l| rank(*l))
    }

    /// Client `client`'s `logging/setLevel`: its own level only.
    pub fn set_level(&self, client: u64, level: LoggingLevel) {
        lock(&self.levels).insert(client, level);
    }

    /// Who gets server `server`'s log messages (attack F10): the clients
    /// with a call in flight to it; when it serves none, the clients that
    /// asked for logs with `logging/setLevel`. Never the others: a
    /// server's logs may describe another client's call.
    fn log_recipients(&self, server: usize) -> HashSet<u64> {
        let serving: HashSet<u64> = lock(&self.callers)
            .iter()
            .filter(|(_, s, _)| *s == Some(server))
            .map(|(_, _, c)| c.client)
            .collect();
        if !serving.is_empty() {
            return serving;
        }
        lock(&self.levels).keys().copied().collect()
    }

    /// A downstream log message: tagged with the server's alias, at most
    /// [`LOGS_PER_SECOND`] per server, queued for its recipients
    /// ([`Relay::log_recipients`]), each filtered by that client's level.
    pub fn log(&self, server: usize, alias: &str, mut m: LoggingMessageNotificationParam) {
        let to = self.log_recipients(server);
        let levels = lock(&self.levels).clone();
        let wants = |id: &u64| {
            to.contains(id) && levels.get(id).is_none_or(|min| rank(m.level) >= rank(*min))
        };
        let clients: Vec<Client> = self
            .clients()
            .into_iter()
            .filter(|(id, _, _)| wants(id))
            .collect();
        if clients.is_empty() {
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
        // The logger carries the attribution: a server's part of it, and
        // its data, cannot hold escapes or invisible text (atk25d F2).
        m.logger = Some(match m.logger.take() {
            Some(l) => format!("{alias}/{}", crate::text_safe::visible(&l)),
            None => alias.to_owned(),
        });
        crate::text_safe::visible_json(&mut m.data, &[]);
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
        for (_, _, outbox) in clients {
            for n in &notes {
                outbox.push(Note::Log(n.clone()));
            }
        }
    }

    /// Record a client's subscription to `uri` at server `owner`; true when
    /// it is the first one for this URI (so the owning server must be
    /// told). Only `owner`'s updates of it reach the client.
    pub fn subscribe(&self, client: u64, uri: &str, owner: usize) -> bool {
        let mut s = lock(&self.subs);
        let (at, set) = s.entry(uri.to_owned()).or_insert((owner, HashSet::new()));
        let first = set.is_empty();
        *at = owner;
        set.insert(client);
        first
    }

    /// Drop a client's subscription; true when no client is left on it.
    pub fn unsubscribe(&self, client: u64, uri: &str) -> bool {
        let mut s = lock(&self.subs);
        let Some((_, set)) = s.get_mut(uri) else {
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

    /// `notifications/resources/updated` from `server`, queued for the
    /// subscribers of that URI; dropped unless the subscription went to
    /// that server (a server cannot announce another's resources).
    pub fn resource_updated(&self, server: usize, p: ResourceUpdatedNotificationParam) {
        let who = match lock(&self.subs).get(&p.uri) {
            Some((owner, set)) if *owner == server => set.clone(),
            Some(_) => {
                tracing::debug!(server, uri = %p.uri, "dropped an update of another server's resource");
                return;
            }
            None => return,
        };
        self.listeners.deliver(&p, &who);
        for (id, _, outbox) in self.clients() {
            if who.contains(&id) {
                outbox.push(Note::Updated(p.clone()));
            }
        }
    }
}
