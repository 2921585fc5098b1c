//! Each downstream server's protocol era (ADR 0087): the gateway probes
//! with `server/discover` and falls back to `initialize` (rmcp's `Auto`
//! lifecycle), so a server that speaks only 2026-07-28 works and a
//! 2025-11-25 one works as before. With a modern server, list changes
//! arrive only on a `subscriptions/listen` stream, which the gateway opens
//! once per connection and turns into the same relisting a legacy
//! server's notifications cause; and its calls may answer
//! `input_required`, which rmcp's round driver fulfils through the
//! gateway's client handler (the relay to the user's client).

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, Peer};

use crate::downstream::handler::RelistSignal;
use crate::downstream::types::ListKind;

/// `server/discover` first (2026-07-28), else `initialize` (2025-11-25).
pub(crate) fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// Whether the connection negotiated 2026-07-28 or later.
pub(crate) fn is_modern(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.protocol_version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// For a modern server: follow its list changes on one listen stream
/// for as long as the connection lives.
pub(crate) fn follow_lists(peer: &Peer<RoleClient>, signal: Arc<RelistSignal>, alias: &str) {
    if !is_modern(peer) {
        return;
    }
    let caps = peer.peer_info().map(|i| i.capabilities.clone());
    let mut filter = SubscriptionFilter::new();
    if let Some(c) = caps {
        let on = |b: Option<bool>| b.unwrap_or(false).then_some(true);
        filter.tools_list_changed = c.tools.as_ref().and_then(|t| on(t.list_changed));
        filter.prompts_list_changed = c.prompts.as_ref().and_then(|t| on(t.list_changed));
        filter.resources_list_changed = c.resources.as_ref().and_then(|t| on(t.list_changed));
    }
    if filter == SubscriptionFilter::new() {
        return;
    }
    let peer = peer.clone();
    let alias = alias.to_owned();
    tokio::spawn(async move {
        let mut sub = match peer.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(server = %alias, "subscriptions/listen refused: {e}");
                return;
            }
        };
        while let Ok(Some(n)) = sub.next().await {
            match n {
                ServerNotification::ToolListChangedNotification(_) => {
                    signal.request(ListKind::Tools)
                }
                ServerNotification::PromptListChangedNotification(_) => {
                    signal.request(ListKind::Prompts)
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    signal.request(ListKind::Resources)
                }
                _ => {}
            }
        }
    });
}

/// A 2026-07-28 server's resource subscriptions: one listen stream per
/// URI, its updates handed to the relay like a 2025-11-25 server's
/// `notifications/resources/updated`. Ended with the connection.
#[derive(Default)]
pub(crate) struct ResourceListens {
    streams: std::sync::Mutex<std::collections::HashMap<String, tokio::task::JoinHandle<()>>>,
}

impl ResourceListens {
    pub(crate) async fn set(
        &self,
        peer: &Peer<RoleClient>,
        relay: Arc<crate::relay::Relay>,
        server: usize,
        uri: &str,
        on: bool,
    ) -> Result<(), rmcp::ServiceError> {
        if !on {
            if let Some(h) = crate::sync_util::lock(&self.streams).remove(uri) {
                h.abort();
            }
            return Ok(());
        }
        let filter = SubscriptionFilter::builder()
            .resource_subscription(uri)
            .build();
        let mut sub = peer.listen(filter).await?;
        let task = tokio::spawn(async move {
            while let Ok(Some(n)) = sub.next().await {
                if let ServerNotification::ResourceUpdatedNotification(u) = n {
                    relay.resource_updated(server, u.params);
                }
            }
        });
        if let Some(old) = crate::sync_util::lock(&self.streams).insert(uri.to_owned(), task) {
            old.abort();
        }
        Ok(())
    }
}

impl Drop for ResourceListens {
    fn drop(&mut self) {
        for (_, h) in crate::sync_util::lock(&self.streams).drain() {
            h.abort();
        }
    }
}
