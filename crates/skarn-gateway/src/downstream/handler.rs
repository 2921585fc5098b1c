//! The client side of one downstream connection (rmcp's `ClientHandler`):
//! questions and notifications meant for the user's client go through the
//! relay; `list_changed` marks the list stale in the server's
//! [`RelistSignal`], which its refresh task ([`crate::downstream::relist`]) waits on.
// Sampling, roots and logging are deprecated in rmcp (SEP-2577) but are
// part of every protocol revision clients speak today.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use tokio::sync::Notify;

use crate::downstream::guard::Tripwire;
use crate::downstream::types::ListKind;
use crate::relay::Relay;

/// Lists a server said are stale, and the wake-up of its refresh task.
#[derive(Debug, Default)]
pub struct RelistSignal {
    pending: AtomicU8,
    pub(crate) wake: Notify,
}

fn bit(kind: ListKind) -> u8 {
    match kind {
        ListKind::Tools => 1,
        ListKind::Resources => 2,
        ListKind::Prompts => 4,
    }
}

impl RelistSignal {
    /// Mark `kind` stale and wake the refresh task (a wake-up that finds
    /// the task busy is kept, once).
    pub fn request(&self, kind: ListKind) {
        self.pending.fetch_or(bit(kind), Ordering::AcqRel);
        self.wake.notify_one();
    }

    pub(crate) fn take(&self) -> Vec<ListKind> {
        let bits = self.pending.swap(0, Ordering::AcqRel);
        [ListKind::Tools, ListKind::Resources, ListKind::Prompts]
            .into_iter()
            .filter(|k| bits & bit(*k) != 0)
            .collect()
    }
}

/// The client side of one downstream connection. Requests and
/// notifications meant for the user's client go through the relay.
#[derive(Clone)]
pub struct DownHandler {
    pub(crate) signal: Arc<RelistSignal>,
    pub(crate) server: usize,
    pub(crate) alias: Arc<str>,
    pub(crate) relay: Arc<Relay>,
    /// The connection's wire, where handled progress is counted.
    pub(crate) wire: Arc<Tripwire>,
}

impl ClientHandler for DownHandler {
    fn get_info(&self) -> ClientConfig {
        let mut info =
            ClientConfig::default().with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        info.client_info = Implementation::new("skarn", env!("CARGO_PKG_VERSION"));
        // Offered on behalf of the clients; a request the current client
        // cannot answer gets an error that says so.
        if let Ok(caps) = serde_json::from_value(serde_json::json!({
            "roots": {"listChanged": true},
            "sampling": {},
            "elicitation": {"form": {}},
            // MCP Apps pages are passed through to the clients (ADR 0089).
            "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
        })) {
            info.capabilities = caps;
        }
        info
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.relay
            .create_message(self.server, &self.alias, params)
            .await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.relay
            .create_elicitation(self.server, &self.alias, params)
            .await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.relay.list_roots(self.server).await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.relay.progress(self.server, params);
        self.wire.progress_handled();
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.relay.log(self.server, &self.alias, params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.relay.resource_updated(self.server, params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.signal.request(ListKind::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.signal.request(ListKind::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.signal.request(ListKind::Prompts);
    }
}
