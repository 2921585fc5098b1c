//! skarn-gateway: the MCP gateway with the Code Mode surface.
//!
//! `skarn serve` is one MCP server (stdio or Streamable HTTP) in front of
//! the downstream MCP servers listed in `skarn.toml`. Instead of forwarding
//! every downstream schema, it offers a constant surface: `search`,
//! `read_tool_docs` and `execute` (a Code Mode script whose
//! `skarn.callTool` reaches the downstream servers), plus, with
//! `passthrough = true`, the namespaced downstream tools themselves.
//!
//! What it guarantees:
//! - `initialize` is answered at once; downstream servers start in the
//!   background, at most one per core at a time, each bounded by its own
//!   start timeout; listings and searches wait for them, so the first
//!   answer covers the whole catalogue; failed starts are retried with
//!   backoff.
//! - Progress, log messages, sampling, elicitation, roots, completions and
//!   resource subscriptions are relayed between the client and the owning
//!   server; the gateway never answers for the user.
//! - Every downstream call has a timeout; a failed, crashed or hung server
//!   is reported by name with its cause and never takes the gateway down; a
//!   crashed stdio server is restarted (with backoff) on the next call.
//! - Every stdio child runs in its own process group with a parent-death
//!   signal; every group is killed when the gateway shuts down.
//! - Downstream servers are bounded as if hostile (ADR 0025): a minimal
//!   environment for stdio children plus what their `env` names, capped
//!   listings, oversized answers turned into errors, `list_changed`
//!   coalesced per server, resource reads routed only to the owning server,
//!   bounded HTTP connections, and detached descendants ended on shutdown.
//! - Configuration errors name file:line:column.
//!
//! Built on the official `rmcp` SDK for both the server and client sides.

pub mod bridge;
mod catalog;
mod child_env;
pub mod children;
mod client_asks;
pub mod config;
mod content_blocks;
mod discovery;
pub mod downstream;
mod era;
mod exec;
pub mod gateway;
pub mod http;
mod http_budget;
mod http_conn;
mod http_post;
mod http_target;
mod http_token;
pub mod init;
mod input_rounds;
#[cfg(target_os = "linux")]
mod install_guard;
mod json_budget;
mod limits;
mod listen;
mod listing;
mod outbox;
mod oversize;
#[cfg(target_os = "linux")]
mod proxy_audit;
mod relay;
mod results;
mod sandbox_config;
#[cfg(target_os = "linux")]
mod sandbox_facts;
mod sandbox_hint;
#[cfg(target_os = "linux")]
mod sandbox_policy;
#[cfg(target_os = "linux")]
mod sandbox_secrets;
pub mod sandbox_spawn;
mod sandbox_state;
pub mod search;
pub mod secret_vars;
mod server;
mod server_execute;
mod server_relay;
mod shell_tool;
mod spawner;
pub mod state_dirs;
#[cfg(target_os = "linux")]
mod state_guard;
pub mod stdio;
mod stdio_child;
mod sync_util;
mod text_safe;
mod tls;
pub mod tsig;
pub mod uri_template;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use config::{Config, ConfigError, Isolation};
pub use gateway::{Gateway, ServerHealth};
pub use server::{GatewayServer, INSTRUCTIONS};
use skarn_codemode::ToolBridge;

/// Errors of the library's entry points.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot start the gateway runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// A running gateway with its own runtime. Dropping it stops every
/// downstream server and kills their process groups.
pub struct GatewayHandle {
    gw: Arc<Gateway>,
    rt: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for GatewayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayHandle")
            .field("gateway", &self.gw)
            .finish()
    }
}

impl GatewayHandle {
    /// Load `path`, start every downstream server in the background on a
    /// dedicated runtime, and return at once.
    pub fn start(config: Config) -> Result<GatewayHandle, GatewayError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("skarn-gateway")
            .enable_all()
            .build()
            .map_err(GatewayError::Runtime)?;
        let gw = Gateway::new(config);
        {
            let _enter = rt.enter();
            gw.start();
        }
        Ok(GatewayHandle { gw, rt: Some(rt) })
    }

    /// The gateway.
    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gw
    }

    /// A bridge for `skarn_codemode::execute`.
    pub fn bridge(&self) -> Arc<dyn ToolBridge> {
        let handle = self.rt.as_ref().expect("runtime alive").handle().clone();
        Arc::new(bridge::GatewayBridge::new(self.gw.clone(), handle))
    }

    /// Block until no server is still starting (bounded by `max`).
    pub fn settle(&self, max: Duration) {
        if let Some(rt) = &self.rt {
            rt.block_on(self.gw.settle(max));
        }
    }
}

impl Drop for GatewayHandle {
    fn drop(&mut self) {
        self.gw.shutdown();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_millis(500));
        }
    }
}

/// A connected [`ToolBridge`] over the servers configured in `path`, for
/// `skarn exec --config`. Keep the handle alive while scripts run; calls to
/// a server that is still starting wait for it (bounded by its start
/// timeout).
pub fn bridge_from_config(
    path: &Path,
) -> Result<(Arc<dyn ToolBridge>, GatewayHandle), GatewayError> {
    bridge_from(Config::load(path)?)
}

/// [`bridge_from_config`] as `skarn exec` uses it: a file the user has not
/// trusted is narrowed first (ADR 0065), the warning on stderr.
pub fn bridge_from_checked_config(
    path: &Path,
) -> Result<(Arc<dyn ToolBridge>, GatewayHandle), GatewayError> {
    bridge_from(load_checked(path)?)
}

fn bridge_from(config: Config) -> Result<(Arc<dyn ToolBridge>, GatewayHandle), GatewayError> {
    let handle = GatewayHandle::start(config)?;
    Ok((handle.bridge(), handle))
}

/// Start every server configured in `path`, wait until each is ready or has
/// failed (bounded by the start timeouts), and report each by name with
/// its health (ready, failed, crashed or disabled), cause and tool count. Every child is stopped before it
/// returns.
pub fn health_report(path: &Path) -> Result<Vec<ServerHealth>, GatewayError> {
    health_of(Config::load(path)?)
}

/// [`health_report`] as `skarn doctor` uses it: a file the user has not
/// trusted is narrowed first (ADR 0065), the warning on stderr.
pub fn health_report_checked(path: &Path) -> Result<Vec<ServerHealth>, GatewayError> {
    health_of(load_checked(path)?)
}

fn health_of(config: Config) -> Result<Vec<ServerHealth>, GatewayError> {
    let handle = GatewayHandle::start(config)?;
    // Servers start a few at a time (one per core): wait for every one,
    // each bounded by its own start timeout.
    if let Some(rt) = &handle.rt {
        rt.block_on(handle.gw.wait_for_starts());
    }
    Ok(handle.gateway().health())
}

/// `path` loaded, narrowed when untrusted (ADR 0065), the warning on stderr.
fn load_checked(path: &Path) -> Result<Config, GatewayError> {
    let (config, warning) = Config::load_checked(path)?;
    if let Some(w) = warning {
        eprintln!("skarn: warning: {w}");
    }
    Ok(config)
}
