//! The `[gateway]` section: its keys, their defaults and their checks.

use serde::Deserialize;
use skarn_codemode::Limits;

use super::{Isolation, secs};

/// The `[gateway]` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Also expose every downstream tool under its namespaced name.
    pub passthrough: bool,
    /// Between the server alias and the tool name (default `__`).
    pub namespace_separator: String,
    /// Where scripts run.
    pub isolation: Isolation,
    /// Pre-started confined workers kept ready (0: start one per script).
    pub worker_pool: usize,
    /// Scripts run at the same time (default 8); further `execute` calls
    /// wait their turn, so a burst cannot start unbounded workers.
    pub max_concurrent_executes: usize,
    /// Offer a `run` tool: a shell command confined by `skarn run` with
    /// compressed output (default false).
    pub shell: bool,
    /// The `run` tool's workspace: relative to the file's directory;
    /// default the file's directory. A call's `cwd` may only move inside
    /// it. Only a trusted file may set it (`skarn trust`).
    pub workspace: Option<std::path::PathBuf>,
    /// Limits for each `execute` (`[gateway.limits]`, see `limits.rs`).
    #[serde(deserialize_with = "crate::limits::deserialize")]
    pub limits: Limits,
    /// Seconds a downstream server may take to start (default 30); written
    /// as a duration (`30`, `"30s"`, `"1m"`).
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub start_timeout: f64,
    /// Consecutive failed attempts (failed starts and crashes without a
    /// stable run between them) after which a downstream server is given up
    /// until `skarn serve` restarts (default 8: retried with backoff 1 s,
    /// 2 s … for about two minutes); a count.
    pub start_attempts: u32,
    /// Seconds a stdio server's silence to `server/discover` is waited for
    /// before `initialize` is sent as well (default 1; ADR 0106); a
    /// duration.
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub discover_timeout: f64,
    /// Seconds any one downstream call may take (default 60); a duration.
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub call_timeout: f64,
    /// Pages, items and bytes one downstream listing may have (defaults
    /// 100 / 10 000 / 16 MiB); past a cap the server is failed.
    pub max_list_pages: usize,
    pub max_list_items: usize,
    pub max_list_bytes: usize,
    /// `--http`: seconds a client may take to send a request's headers
    /// (default 10).
    pub http_header_timeout: f64,
    /// `--http`: seconds a connection may stay without any traffic either
    /// way before it is closed (default 120).
    pub http_idle_timeout: f64,
    /// `--http`: connections served at once (default 256, and never more
    /// than a third of the descriptor limit); half as many again may wait
    /// for their request head.
    pub http_max_connections: usize,
    /// `--http`: host names (or `host:port`) besides loopback that requests
    /// may name in their `Host` header, e.g. the name of the load balancer
    /// or Kubernetes Service in front of several instances (default none).
    pub http_allowed_hosts: Vec<String>,
    /// Sampling, elicitation and roots requests one downstream server may
    /// have waiting for the client at once (default 4); more are refused at
    /// once.
    pub max_client_requests_in_flight: usize,
    /// Sampling, elicitation and roots requests one downstream server may
    /// send to the client per minute (default 60); more are refused at once.
    pub client_requests_per_minute: u32,
    /// Seconds the client may take to answer one sampling, elicitation or
    /// roots request (default 300); then the server gets an error and the client
    /// `notifications/cancelled`. A duration.
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub client_request_timeout: f64,
    /// Forward sampling and elicitation requests of a server that has no
    /// call in flight (default false: only a server the client is calling
    /// may ask the client or the user anything).
    pub client_requests_from_idle_servers: bool,
    /// Notifications (log messages, progress, resource updates) queued for
    /// one client that is not reading (default 256); more are dropped and
    /// counted.
    pub max_queued_notifications: usize,
    /// Bytes those queued notifications may hold (default 4 MiB); a size,
    /// a bare number is bytes.
    #[serde(deserialize_with = "super::bytes")]
    pub max_queued_notification_bytes: usize,
    /// Requests (ping included) one downstream server may send the gateway
    /// in one second (default 200); past that the server is cut off:
    /// disconnected, its process group killed, and marked failed.
    pub server_requests_per_second: u32,
    /// Messages to one downstream server that may wait to be written
    /// because it does not read them (default 1024); past that it is cut
    /// off the same way.
    pub max_pending_server_writes: usize,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            passthrough: false,
            namespace_separator: "__".into(),
            isolation: Isolation::Auto,
            worker_pool: skarn_worker::DEFAULT_WARM,
            max_concurrent_executes: 8,
            shell: false,
            workspace: None,
            limits: Limits::default(),
            start_timeout: 30.0,
            start_attempts: 8,
            discover_timeout: 1.0,
            call_timeout: 60.0,
            max_list_pages: 100,
            max_list_items: 10_000,
            max_list_bytes: 16 << 20,
            http_header_timeout: 10.0,
            http_idle_timeout: 120.0,
            http_max_connections: 256,
            http_allowed_hosts: Vec::new(),
            max_client_requests_in_flight: 4,
            client_requests_per_minute: 60,
            client_request_timeout: 300.0,
            client_requests_from_idle_servers: false,
            max_queued_notifications: 256,
            max_queued_notification_bytes: 4 << 20,
            server_requests_per_second: 200,
            max_pending_server_writes: 1024,
        }
    }
}

impl GatewayConfig {
    /// The checks the types cannot make: the message of the first that
    /// fails (located at the `[gateway]` header by the caller).
    pub(super) fn check(&self) -> Result<(), String> {
        let sep = &self.namespace_separator;
        if sep.is_empty() || sep.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("namespace_separator must be a non-empty string without whitespace".into());
        }
        for (what, v) in [
            ("start_timeout", self.start_timeout),
            ("discover_timeout", self.discover_timeout),
            ("call_timeout", self.call_timeout),
            ("http_header_timeout", self.http_header_timeout),
            ("http_idle_timeout", self.http_idle_timeout),
            ("client_request_timeout", self.client_request_timeout),
        ] {
            secs(v, what)?;
        }
        if let Some(h) = self.http_allowed_hosts.iter().find(|h| {
            h.is_empty()
                || h.chars()
                    .any(|c| c.is_whitespace() || c.is_control() || c == '/')
        }) {
            return Err(format!(
                "http_allowed_hosts: {h:?} is not a host name or host:port"
            ));
        }
        if !(1..=256).contains(&self.max_concurrent_executes) {
            return Err("max_concurrent_executes must be between 1 and 256".into());
        }
        for (what, v) in [
            ("max_list_pages", self.max_list_pages),
            ("max_list_items", self.max_list_items),
            ("max_list_bytes", self.max_list_bytes),
            ("http_max_connections", self.http_max_connections),
            (
                "max_client_requests_in_flight",
                self.max_client_requests_in_flight,
            ),
            (
                "client_requests_per_minute",
                self.client_requests_per_minute as usize,
            ),
            ("max_queued_notifications", self.max_queued_notifications),
            (
                "max_queued_notification_bytes",
                self.max_queued_notification_bytes,
            ),
            (
                "server_requests_per_second",
                self.server_requests_per_second as usize,
            ),
            ("max_pending_server_writes", self.max_pending_server_writes),
            ("start_attempts", self.start_attempts as usize),
        ] {
            if v == 0 {
                return Err(format!("{what} must be at least 1"));
            }
        }
        if self.worker_pool > 64 {
            return Err("worker_pool must be at most 64".into());
        }
        Ok(())
    }
}
