//! Re-reading a downstream server's listings after its `list_changed`
//! notifications, coalesced per server: a notification only marks the
//! list as stale and wakes that server's own refresh task, so whatever the
//! number of notifications there is at most one re-list in flight and one
//! pending per server, and a slow server delays no one else's refresh.
//! Re-lists of one server are at least [`RELIST_GAP`] apart (atk25d F6:
//! a server sending `list_changed` 50 times a second kept the gateway
//! re-reading and re-indexing a 15 MB listing back to back); what changes
//! meanwhile is read in the next one.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::RoleClient;
use rmcp::service::Peer;

use crate::downstream::{Downstream, Health, ListChanged, ListKind, Listing};
use crate::listing::{self, ListCaps, ListError};
use crate::sync_util::lock;

/// Shortest time between two re-list rounds of one server.
pub const RELIST_GAP: std::time::Duration = std::time::Duration::from_secs(1);

/// Everything a server offers, read at start.
pub async fn list_everything(
    peer: &Peer<RoleClient>,
    caps: ListCaps,
) -> Result<Listing, ListError> {
    let caps_of = peer.peer_info().map(|i| i.capabilities.clone());
    let mut l = Listing::default();
    let (has_tools, has_resources, has_prompts) = match &caps_of {
        Some(c) => (
            c.tools.is_some(),
            c.resources.is_some(),
            c.prompts.is_some(),
        ),
        None => (true, false, false),
    };
    if has_tools {
        l.tools = listing::tools(peer, caps).await?;
    }
    // Resources and prompts are optional extras: a server that lists them
    // badly still serves its tools, unless it breaks a cap.
    if has_resources {
        l.resources = soft(listing::resources(peer, caps).await)?;
        l.templates = soft(listing::templates(peer, caps).await)?;
    }
    if has_prompts {
        l.prompts = soft(listing::prompts(peer, caps).await)?;
    }
    Ok(l)
}

fn soft<T>(r: Result<Vec<T>, ListError>) -> Result<Vec<T>, ListError> {
    match r {
        Err(e) if !e.is_cap() => Ok(Vec::new()),
        other => other,
    }
}

impl Downstream {
    /// Re-read one list. A list that breaks a cap fails the server (its
    /// connection is dropped and the cause kept); any other error keeps
    /// the previous list.
    pub async fn refresh(&self, kind: ListKind) {
        let Some(conn) = lock(&self.conn).clone() else {
            return;
        };
        let peer = conn.service.peer().clone();
        let caps = self.cfg.list_caps;
        let mut l = (*self.listing()).clone();
        let read = async {
            match kind {
                ListKind::Tools => l.tools = listing::tools(&peer, caps).await?,
                ListKind::Resources => {
                    l.resources = listing::resources(&peer, caps).await?;
                    l.templates = listing::templates(&peer, caps).await?;
                }
                ListKind::Prompts => l.prompts = listing::prompts(&peer, caps).await?,
            }
            Ok::<(), ListError>(())
        };
        let result = tokio::time::timeout(self.cfg.call_timeout, read).await;
        // A restart while re-listing: this answer belongs to the old connection.
        let current = lock(&self.conn)
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, &conn));
        drop(conn);
        if !current {
            return;
        }
        match result {
            Ok(Ok(())) => {
                *lock(&self.listing) = Arc::new(l);
                self.dirty.fetch_add(1, Ordering::AcqRel);
            }
            Ok(Err(e)) if e.is_cap() => {
                self.disconnect();
                self.fail(e.to_string());
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %self.cfg.alias, "re-list failed: {e}");
            }
            Err(_) => tracing::warn!(server = %self.cfg.alias, "re-list timed out"),
        }
    }

    /// This server's refresh task: wait for a stale list, re-read it,
    /// tell the gateway; until the gateway is gone.
    pub async fn refresh_loop(self: Arc<Self>) {
        let signal = self.relist.clone();
        let weak = Arc::downgrade(&self);
        drop(self);
        loop {
            signal.wake.notified().await;
            let Some(me) = weak.upgrade() else { return };
            for kind in signal.take() {
                if matches!(me.health(), Health::Ready) {
                    me.refresh(kind).await;
                }
                if me
                    .events
                    .send(ListChanged {
                        server: me.index,
                        kind,
                    })
                    .is_err()
                {
                    return;
                }
            }
            // Not holding the server meanwhile: a notification during the
            // gap is kept (one wake-up) and read after it.
            drop(me);
            tokio::time::sleep(RELIST_GAP).await;
        }
    }
}
