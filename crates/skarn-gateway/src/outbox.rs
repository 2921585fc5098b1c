//! Each client's bounded queue of relayed notifications (log messages,
//! progress, resource updates). One task per client sends them one at a
//! time, each send waiting until the SDK has written it, so a client that
//! stops reading holds at most one of them inside the SDK; the rest wait
//! here up to `max_queued_notifications` / `max_queued_notification_bytes`,
//! and further ones are dropped and counted. The count is logged to stderr
//! when dropping starts and sent to the client, as a warning log message,
//! once its queue has drained. Responses never pass through here, so a
//! response that must follow its notifications (progress: clients drop
//! progress that comes after the answer) waits for [`Outbox::flushed`].
// Logging is deprecated in rmcp (SEP-2577) but part of every protocol
// revision a client speaks today.
#![allow(deprecated)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{Peer, ServiceError};
use serde_json::json;

use crate::config::GatewayConfig;
use crate::sync_util::lock;

/// How much one client's queue may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCaps {
    pub items: usize,
    pub bytes: usize,
}

impl Default for QueueCaps {
    fn default() -> Self {
        QueueCaps::from_config(&GatewayConfig::default())
    }
}

impl QueueCaps {
    pub fn from_config(g: &GatewayConfig) -> QueueCaps {
        QueueCaps {
            items: g.max_queued_notifications,
            bytes: g.max_queued_notification_bytes,
        }
    }
}

/// One notification for the client.
#[derive(Debug)]
pub enum Note {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
    Updated(ResourceUpdatedNotificationParam),
}

impl Note {
    /// About the bytes it takes once serialised.
    fn size(&self) -> usize {
        let json_len = |v: &serde_json::Value| serde_json::to_vec(v).map_or(0, |b| b.len());
        64 + match self {
            Note::Log(m) => json_len(&m.data) + m.logger.as_ref().map_or(0, String::len),
            Note::Progress(p) => p.message.as_ref().map_or(0, String::len) + 32,
            Note::Updated(u) => u.uri.len(),
        }
    }

    async fn send(self, peer: &Peer<RoleServer>) -> Result<(), ServiceError> {
        match self {
            Note::Log(m) => peer.notify_logging_message(m).await,
            Note::Progress(p) => peer.notify_progress(p).await,
            Note::Updated(u) => peer.notify_resource_updated(u).await,
        }
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub logs: u64,
    pub progress: u64,
    pub updates: u64,
}

impl Dropped {
    pub fn total(&self) -> u64 {
        self.logs + self.progress + self.updates
    }
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<(Note, usize)>,
    bytes: usize,
    /// Dropped since the client was last told.
    dropped: Dropped,
    /// Dropped ever (for tests and diagnostics).
    dropped_ever: u64,
    /// Notes ever queued; the mark [`Outbox::flushed`] waits for.
    queued_ever: u64,
    /// Queued notes whose send has finished (written or failed).
    sent_ever: u64,
    closed: bool,
}

/// One client's queue.
#[derive(Debug)]
pub struct Outbox {
    client: u64,
    caps: QueueCaps,
    state: Mutex<State>,
    wake: tokio::sync::Notify,
    /// Told whenever a queued note's send finishes or the queue closes.
    sent: tokio::sync::Notify,
}

impl Outbox {
    /// A queue for `peer` and the task that empties it (until the client
    /// goes away or [`Outbox::close`]). Must run inside a tokio runtime.
    pub fn start(client: u64, peer: Peer<RoleServer>, caps: QueueCaps) -> Arc<Outbox> {
        let o = Arc::new(Outbox {
            client,
            caps,
            state: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            sent: tokio::sync::Notify::new(),
        });
        tokio::spawn(forward(o.clone(), peer));
        o
    }

    /// Queue `note`, or drop and count it when the queue is full.
    pub fn push(&self, note: Note) {
        let size = note.size();
        let mut s = lock(&self.state);
        if s.closed {
            return;
        }
        let full = s.queue.len() >= self.caps.items
            || (!s.queue.is_empty() && s.bytes + size > self.caps.bytes);
        if full {
            if s.dropped.total() == 0 {
                tracing::warn!(
                    client = self.client,
                    "the client is not reading: notifications beyond {} queued ({} bytes) are dropped and counted",
                    s.queue.len(),
                    s.bytes
                );
            }
            match note {
                Note::Log(_) => s.dropped.logs += 1,
                Note::Progress(_) => s.dropped.progress += 1,
                Note::Updated(_) => s.dropped.updates += 1,
            }
            s.dropped_ever += 1;
            return;
        }
        s.bytes += size;
        s.queued_ever += 1;
        s.queue.push_back((note, size));
        drop(s);
        self.wake.notify_one();
    }

    /// Stop the task; queued notifications are discarded.
    pub fn close(&self) {
        let mut s = lock(&self.state);
        s.closed = true;
        s.queue.clear();
        s.bytes = 0;
        drop(s);
        self.wake.notify_one();
        self.sent.notify_waiters();
    }

    /// The mark of everything queued so far, for [`Outbox::flushed`].
    pub fn mark(&self) -> u64 {
        lock(&self.state).queued_ever
    }

    /// Wait until every note queued before `mark` has been written to the
    /// client (or the queue closed), at most until `deadline`: a client
    /// that stops reading must not hold the answer forever. True when
    /// flushed.
    pub async fn flushed(&self, mark: u64, deadline: tokio::time::Instant) -> bool {
        loop {
            let told = self.sent.notified();
            tokio::pin!(told);
            // Registered before looking, so a send finishing in between
            // is not missed.
            told.as_mut().enable();
            {
                let s = lock(&self.state);
                if s.closed || s.sent_ever >= mark {
                    return true;
                }
            }
            if tokio::time::timeout_at(deadline, told).await.is_err() {
                return false;
            }
        }
    }

    fn note_sent(&self) {
        lock(&self.state).sent_ever += 1;
        self.sent.notify_waiters();
    }

    /// (queued now, dropped ever).
    pub fn counts(&self) -> (usize, u64) {
        let s = lock(&self.state);
        (s.queue.len(), s.dropped_ever)
    }

    /// The next note to send and whether it came from the queue (else it
    /// is the report of what was dropped); `Err` once closed.
    fn next(&self) -> Result<Option<(Note, bool)>, ()> {
        let mut s = lock(&self.state);
        if s.closed {
            return Err(());
        }
        if let Some((n, size)) = s.queue.pop_front() {
            s.bytes -= size;
            return Ok(Some((n, true)));
        }
        let d = std::mem::take(&mut s.dropped);
        if d.total() == 0 {
            return Ok(None);
        }
        tracing::warn!(
            client = self.client,
            "the client is reading again; {} notifications were dropped meanwhile ({} log messages, {} progress, {} resource updates)",
            d.total(),
            d.logs,
            d.progress,
            d.updates
        );
        let mut m = LoggingMessageNotificationParam::new(
            LoggingLevel::Warning,
            json!(format!(
                "{} notifications for this client were dropped because it was not reading them ({} log messages, {} progress, {} resource updates; at most {} are queued, gateway.max_queued_notifications)",
                d.total(),
                d.logs,
                d.progress,
                d.updates,
                self.caps.items
            )),
        );
        m.logger = Some("skarn".into());
        Ok(Some((Note::Log(m), false)))
    }
}

async fn forward(o: Arc<Outbox>, peer: Peer<RoleServer>) {
    loop {
        match o.next() {
            Err(()) => return,
            Ok(Some((note, queued))) => {
                let failed = note.send(&peer).await.is_err();
                if queued {
                    o.note_sent();
                }
                if failed && peer.is_transport_closed() {
                    o.close();
                    return;
                }
            }
            // A wake-up sent since `next` looked is kept by `Notify`.
            Ok(None) => o.wake.notified().await,
        }
    }
}
