//! `subscriptions/listen` for 2026-07-28 clients (ADR 0086): one stream per
//! listen request carrying the list changes of the catalogue and the
//! updates of the resources it named, each only when the filter asked for
//! it (rmcp's sink enforces the accepted filter). Resource subscriptions
//! are accepted only for URIs a downstream server offers, and go to that
//! server once for all listeners and legacy subscribers together (the
//! relay counts them); updates come back through the relay, which accepts
//! them only from the owning server.

use rmcp::ErrorData;
use rmcp::model::{ResourceUpdatedNotification, ServerNotification, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use tokio::sync::broadcast;

use crate::downstream::ListKind;
use crate::server::GatewayServer;

fn only_true(b: Option<bool>) -> Option<bool> {
    b.filter(|on| *on)
}

impl GatewayServer {
    /// The part of a requested filter this gateway serves: every list
    /// change it advertises (tool lists change only with passthrough on),
    /// and the resources some downstream offers. While servers are still
    /// starting, a URI nobody offers yet is accepted too; the stream
    /// subscribes it once its owner is known.
    pub(crate) fn accept_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut f = SubscriptionFilter::new();
        f.tools_list_changed = only_true(requested.tools_list_changed);
        f.prompts_list_changed = only_true(requested.prompts_list_changed);
        f.resources_list_changed = only_true(requested.resources_list_changed);
        let starting = !self.gw.not_ready().0.is_empty();
        f.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|u| starting || self.gw.resource_server(u).is_ok())
                .cloned()
                .collect()
        });
        f
    }

    /// Serve one listen stream until the client cancels it or goes away.
    pub(crate) async fn listen_now(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        let relay = &self.gw.shared.relay;
        let id = relay.new_client_id();
        let mut updates = relay.listeners.add(id);
        let mut changes = self.gw.changes.subscribe();
        let accepted = ctx.accepted().clone();
        let sink = ctx.sink().clone();
        let passthrough = self.gw.config.gateway.passthrough;
        let mut subscribed = Vec::new();
        if let Some(uris) = &accepted.resource_subscriptions {
            for uri in uris {
                if self.subscribe_for(id, uri, true).await.is_ok() {
                    subscribed.push(uri.clone());
                }
            }
        }
        loop {
            let sent = tokio::select! {
                () = ctx.cancelled() => break,
                kind = changes.recv() => match kind {
                    Ok(ListKind::Tools) if passthrough => sink.notify_tool_list_changed().await,
                    Ok(ListKind::Tools) => Ok(()),
                    Ok(ListKind::Resources) => sink.notify_resource_list_changed().await,
                    Ok(ListKind::Prompts) => sink.notify_prompt_list_changed().await,
                    // Missed some: tell of every list it follows.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = sink.notify_resource_list_changed().await;
                        let _ = sink.notify_prompt_list_changed().await;
                        if passthrough {
                            sink.notify_tool_list_changed().await
                        } else {
                            Ok(())
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                Some(p) = updates.recv() => {
                    sink.send(ServerNotification::ResourceUpdatedNotification(
                        ResourceUpdatedNotification::new(p),
                    ))
                    .await
                }
            };
            // A category it did not ask for is refused by the sink: fine.
            if let Err(e) = sent
                && matches!(e, rmcp::service::SubscriptionSendError::SubscriptionClosed)
            {
                break;
            }
            if sink_closed(&ctx) {
                break;
            }
        }
        relay.listeners.remove(id);
        for uri in subscribed {
            let _ = self.subscribe_for(id, &uri, false).await;
        }
        Ok(())
    }
}

fn sink_closed(ctx: &SubscriptionContext) -> bool {
    ctx.request_context().peer.is_transport_closed()
}
