//! Connecting to one downstream server (stdio child or Streamable HTTP),
//! up to its first listing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::ClientServiceExt;

use crate::config::ServerTransport;
use crate::downstream::guard::{Guarded, OnTrip, Tripwire};
use crate::downstream::handler::DownHandler;
use crate::downstream::relist::list_everything;
use crate::downstream::{Conn, Downstream, Listing};
use crate::sync_util::{lock, short};

impl Downstream {
    /// What a cut-off does: kill the process group `pgid` (which also
    /// fails the writes waiting for it) and, from a task of its own, mark
    /// the server failed at once (a connection not yet ready is failed by
    /// its start instead).
    fn on_trip(self: &Arc<Self>, pgid: Option<i32>) -> Option<OnTrip> {
        let registry = self.registry.clone();
        let me = Arc::downgrade(self);
        Some(Box::new(move || {
            if let Some(g) = pgid {
                registry.kill(g);
            }
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    if let Some(me) = me.upgrade() {
                        me.notice_crash();
                    }
                });
            }
        }))
    }

    pub(crate) async fn connect(self: &Arc<Self>) -> Result<(Conn, Listing), String> {
        let wire = Arc::new(Tripwire::default());
        let handler = DownHandler::new(self, wire.clone());
        let tail: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let limits = self.shared.guard;
        let alias = self.cfg.alias.as_str();
        let (service, pgid, child, wire) = match &self.cfg.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
                sandbox,
            } => {
                let spec = crate::stdio_child::Spec {
                    alias: &self.cfg.alias,
                    config_file: self.shared.config_file.as_deref(),
                    command,
                    args,
                    env,
                    cwd: cwd.as_ref(),
                    sandbox,
                    state: self.sandbox.clone(),
                    max_items: self.cfg.list_caps.items,
                };
                // Preparing the sandbox scans the host (hundreds of milliseconds,
                // seconds under load): off the runtime's workers, or a client's
                // `server/discover` waits behind it and times out (the Python
                // SDK then falls back to 2025-11-25 after 10 s).
                let (transport, mut child) =
                    off_the_workers(|| crate::stdio_child::spawn(&spec, tail.clone()))?;
                let pgid = child.pid;
                if let Some(g) = pgid {
                    self.registry.add(g);
                }
                // A server silent to `server/discover` gets `initialize`
                // early (down_probe).
                let mut early = rmcp::ClientHandler::get_info(&handler);
                early.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
                let transport = crate::downstream::probe::EarlyInitialize::new(
                    transport,
                    early,
                    self.cfg.discover_timeout,
                );
                let transport =
                    Guarded::new(transport, alias, limits, self.on_trip(pgid), wire.clone());
                match handler
                    .clone()
                    .serve_with_lifecycle(transport, crate::downstream::era::lifecycle())
                    .await
                {
                    Ok(s) => (s, pgid, Some(child), wire),
                    Err(e) => {
                        if let Some(cause) = wire.cause() {
                            return Err(cause.to_owned());
                        }
                        if let Some(g) = pgid {
                            self.registry.kill(g);
                        }
                        // Let the stderr reader reach the end (the group is
                        // gone; a bound for a descendant that kept the pipe).
                        if let Some(r) = child.stderr_reader.take() {
                            let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
                        }
                        let own = crate::stdio_child::own_error(&lock(&tail));
                        let hint = crate::sandbox_hint::fetch_hint(
                            &self.cfg.alias,
                            command,
                            sandbox,
                            &self.sandbox.mode(),
                        );
                        // Advice to loosen the sandbox is the user's to
                        // read (the log), not the model's (the cause).
                        if !hint.is_empty() {
                            tracing::warn!(server = %self.cfg.alias, "failed to start{hint}");
                        }
                        return Err(match own {
                            Some(l) => format!("{} (its stderr: {l})", short(e)),
                            None => short(e).to_string(),
                        });
                    }
                }
            }
            ServerTransport::Http {
                url,
                auth,
                headers,
                allow_private,
            } => {
                use rmcp::transport::StreamableHttpClientTransport;
                crate::http_target::check_url(url, *allow_private)
                    .await
                    .map_err(|e| e.to_string())?;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                crate::tls::install_provider();
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(auth) = auth {
                    crate::secret_vars::refuse_bearer(&auth.bearer_env)?;
                    let token = std::env::var(&auth.bearer_env).map_err(|_| {
                        format!(
                            "environment variable {} (auth.bearer_env) is not set",
                            auth.bearer_env
                        )
                    })?;
                    config = config.auth_header(token);
                }
                let mut map = std::collections::HashMap::new();
                for (k, v) in headers {
                    let name = axum::http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| format!("header {k:?}: {e}"))?;
                    let value = axum::http::HeaderValue::from_str(v)
                        .map_err(|e| format!("header {k:?}: {e}"))?;
                    map.insert(name, value);
                }
                config = config.custom_headers(map);
                let client =
                    crate::http_budget::BudgetedClient::new(alias, self.cfg.list_caps.items)?;
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let transport =
                    Guarded::new(transport, alias, limits, self.on_trip(None), wire.clone());
                let s = match handler
                    .clone()
                    .serve_with_lifecycle(transport, crate::downstream::era::lifecycle())
                    .await
                {
                    Ok(s) => s,
                    Err(e) => return Err(wire.cause().map_or_else(|| short(e), str::to_owned)),
                };
                (s, None, None, wire)
            }
        };
        let conn = Conn {
            service,
            _child: child,
            pgid,
            registry: self.registry.clone(),
            stderr_tail: tail,
            wire,
            listens: Default::default(),
            tasks: Default::default(),
        };
        crate::downstream::era::follow_lists(conn.service.peer(), handler.signal.clone(), alias);
        let listing = list_everything(conn.service.peer(), self.cfg.list_caps)
            .await
            .map_err(|e| match conn.wire.cause() {
                Some(cause) => cause.to_owned(),
                None => e.to_string(),
            })?;
        Ok((conn, listing))
    }
}

/// Run `f`, which blocks, without holding up the runtime's other tasks: on a
/// multi-threaded runtime its worker is handed over first
/// (`block_in_place`); a current-thread runtime (unit tests) runs it as is.
fn off_the_workers<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}
