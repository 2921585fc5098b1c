//! The `ToolBridge` trait: the isolate's only way out.
//!
//! Every host call a script makes (`skarn.callTool`, `skarn.server(x).tool`,
//! `skarn.listTools`, `skarn.readResource`) becomes exactly one call on this
//! trait. The gateway implements it over MCP clients, the worker process
//! implements it over its pipes, tests implement it in memory.
//!
//! Futures returned here must be executor-agnostic: the engine polls them on
//! its own thread. An implementation that needs a tokio runtime must spawn
//! onto its own runtime handle and hand back something like a oneshot
//! receiver.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A boxed future returned by every bridge method.
pub type BridgeFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BridgeError>> + Send + 'a>>;

/// The host side of a script's calls.
pub trait ToolBridge: Send + Sync {
    /// Call `tool` on downstream `server` with `args` (a JSON object).
    /// The value is what the script receives: the tool's structured content
    /// when it has one, else its text content parsed as JSON when it parses,
    /// else the text itself (several content blocks: an array of them).
    fn call_tool(&self, server: &str, tool: &str, args: Value) -> BridgeFuture<'_, Value>;

    /// Every tool the script can call: an array of
    /// `{server, name, description}` objects.
    fn list_tools(&self) -> BridgeFuture<'_, Value>;

    /// Read resource `uri` from `server`; the value is the resource contents.
    fn read_resource(&self, server: &str, uri: &str) -> BridgeFuture<'_, Value>;
}

/// Why a host call failed. The script sees each as a catchable exception
/// whose message is this error's `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BridgeError {
    /// No configured server has this name.
    #[error("no server named {server:?}")]
    NoSuchServer { server: String },
    /// The server exists but has no such tool.
    #[error("server {server:?} has no tool named {tool:?}")]
    NoSuchTool { server: String, tool: String },
    /// The server exists but is not usable (failed to start, crashed, still starting).
    #[error("server {server} {reason}")]
    ServerUnavailable { server: String, reason: String },
    /// The tool ran and reported an error (`isError: true`), or the server
    /// answered the request with a JSON-RPC error.
    #[error("{server}.{tool} failed: {message}")]
    ToolFailed {
        server: String,
        tool: String,
        message: String,
    },
    /// The call did not complete within its timeout.
    #[error("{server}.{tool} timed out after {timeout_ms} ms")]
    Timeout {
        server: String,
        tool: String,
        timeout_ms: u64,
    },
    /// Bad arguments from the script (not an object, unserializable...).
    #[error("invalid arguments: {message}")]
    InvalidArguments { message: String },
    /// Anything else (transport broken, protocol violation...).
    #[error("{message}")]
    Other { message: String },
}

/// A bridge with no servers at all: every call fails with `NoSuchServer`,
/// and `listTools()` returns an empty array. Used by `skarn exec` without a
/// gateway configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoServers;

impl ToolBridge for NoServers {
    fn call_tool(&self, server: &str, _tool: &str, _args: Value) -> BridgeFuture<'_, Value> {
        let server = server.to_owned();
        Box::pin(async move { Err(BridgeError::NoSuchServer { server }) })
    }
    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        Box::pin(async { Ok(Value::Array(Vec::new())) })
    }
    fn read_resource(&self, server: &str, _uri: &str) -> BridgeFuture<'_, Value> {
        let server = server.to_owned();
        Box::pin(async move { Err(BridgeError::NoSuchServer { server }) })
    }
}
