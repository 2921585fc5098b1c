//! `--net allow:...` on macOS: the egress proxy ([`skarn_egress::Proxy`])
//! runs in a thread of the launcher, outside the sandbox, listening on two
//! loopback ports; the profile lets the command reach those two ports and
//! nothing else.

use std::net::TcpListener;
use std::sync::Arc;
use std::thread::JoinHandle;

use skarn_egress::{EgressReport, Limits, Listeners, Proxy, Resolver, Rules};

use crate::policy::HostList;

/// A running proxy.
pub(crate) struct EgressThread {
    /// HTTP proxy port on 127.0.0.1.
    pub http: u16,
    /// SOCKS5 proxy port on 127.0.0.1.
    pub socks: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<EgressReport>>>,
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    /// A host pattern is malformed.
    #[error("--net allow: {0}")]
    Pattern(#[from] skarn_egress::PatternError),
    /// Binding, the runtime or the thread failed.
    #[error("cannot start the egress proxy: {0}")]
    Io(#[from] std::io::Error),
}

/// Start the proxy for `list`. Call before any fork: the thread exists
/// from here on (the launcher spawns with `posix_spawn`-style `Command`).
pub(crate) fn start(list: &HostList) -> Result<EgressThread, EgressError> {
    let rules = Rules::parse(&list.allow, &list.deny)?;
    let http = TcpListener::bind("127.0.0.1:0")?;
    let socks = TcpListener::bind("127.0.0.1:0")?;
    let (hp, sp) = (http.local_addr()?.port(), socks.local_addr()?.port());
    let limits = Limits {
        max_connections: list.max_connections.unwrap_or(256),
        max_total_bytes: list.max_total_bytes,
        ..Limits::default()
    };
    let proxy = Arc::new(Proxy::new(rules, Resolver::system(), limits));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("skarn-egress".into())
        .spawn(move || {
            let l = Listeners {
                http: Some(http),
                socks: Some(socks),
            };
            rt.block_on(proxy.serve(l, async {
                let _ = rx.await;
            }))
        })?;
    Ok(EgressThread {
        http: hp,
        socks: sp,
        stop: Some(tx),
        handle: Some(handle),
    })
}

impl EgressThread {
    /// Stop serving and return what was carried and refused.
    pub(crate) fn finish(mut self) -> Option<EgressReport> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        self.handle.take()?.join().ok()?.ok()
    }
}
