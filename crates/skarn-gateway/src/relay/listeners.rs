//! The open listen streams' update queues (ADR 0086), held by the relay,
//! which hands each resource update to the streams subscribed to it; the
//! streams themselves are served by [`crate::listen`].

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::ResourceUpdatedNotificationParam;
use tokio::sync::mpsc;

use crate::sync_util::lock;

/// Updates queued for one listener before the rest are dropped (a listener
/// that does not read its stream cannot hold the gateway's memory).
const QUEUE: usize = 64;

/// The open listen streams' update queues, by their id in the relay.
#[derive(Default)]
pub struct Listeners {
    queues: Mutex<HashMap<u64, mpsc::Sender<ResourceUpdatedNotificationParam>>>,
}

impl Listeners {
    pub(crate) fn add(&self, id: u64) -> mpsc::Receiver<ResourceUpdatedNotificationParam> {
        let (tx, rx) = mpsc::channel(QUEUE);
        lock(&self.queues).insert(id, tx);
        rx
    }

    pub(crate) fn remove(&self, id: u64) {
        lock(&self.queues).remove(&id);
    }

    /// Hand an update to the listeners among `who` (ids subscribed to it).
    pub fn deliver(
        &self,
        p: &ResourceUpdatedNotificationParam,
        who: &std::collections::HashSet<u64>,
    ) {
        for (id, tx) in lock(&self.queues).iter() {
            if who.contains(id) {
                let _ = tx.try_send(p.clone());
            }
        }
    }
}
