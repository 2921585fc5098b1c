//! What the gateway knows of a downstream server apart from its
//! connection: which list changed, its health, and what it offers.

use std::time::Instant;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};

/// A change a downstream server announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// What the gateway hears from downstream servers.
#[derive(Debug, Clone)]
pub struct ListChanged {
    pub server: usize,
    pub kind: ListKind,
}

/// Health of one downstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// `enabled = false` in the configuration.
    Disabled,
    /// Waiting for a start slot (at most as many servers start at once as
    /// there are cores); since when.
    Queued { since: Instant },
    /// Connecting; since when (the start timeout counts from here).
    Starting { since: Instant },
    /// Connected and listed.
    Ready,
    /// The last start failed.
    Failed { cause: String, at: Instant },
    /// It was ready and then died.
    Crashed { cause: String, at: Instant },
}

impl Health {
    /// Short status word: disabled, starting, ready, failed, crashed.
    pub fn status(&self) -> &'static str {
        match self {
            Health::Disabled => "disabled",
            Health::Queued { .. } => "queued",
            Health::Starting { .. } => "starting",
            Health::Ready => "ready",
            Health::Failed { .. } => "failed",
            Health::Crashed { .. } => "crashed",
        }
    }

    /// Queued or starting: its listing is still to come.
    pub fn is_pending(&self) -> bool {
        matches!(self, Health::Queued { .. } | Health::Starting { .. })
    }

    /// The cause, for failed and crashed servers.
    pub fn cause(&self) -> Option<&str> {
        match self {
            Health::Failed { cause, .. } | Health::Crashed { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// What a server offers.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

/// The lists a fresh listing offers (for `list_changed` announcements).
pub(crate) fn offered(l: &Listing) -> Vec<ListKind> {
    let mut kinds = vec![ListKind::Tools];
    if !l.resources.is_empty() || !l.templates.is_empty() {
        kinds.push(ListKind::Resources);
    }
    if !l.prompts.is_empty() {
        kinds.push(ListKind::Prompts);
    }
    kinds
}
