//! The proxy server: given listening sockets (which may live in another
//! network namespace), accept there and hand each connection to the HTTP
//! or SOCKS5 front end, which connect from here through [`Proxy`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::proxy::{Listeners, Proxy};
use crate::stats::EgressReport;

impl Proxy {
    /// Serve until `shutdown` completes, then return what was carried and
    /// refused. Open connections are dropped at shutdown.
    pub async fn serve(
        self: Arc<Self>,
        l: Listeners,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<EgressReport> {
        let mut lis = [None, None];
        for (slot, std_l) in lis.iter_mut().zip([l.http, l.socks]) {
            let Some(std_l) = std_l else { continue };
            std_l.set_nonblocking(true)?;
            *slot = Some(TcpListener::from_std(std_l)?);
        }
        let task = tokio::spawn(self.clone().accept_loop(lis));
        shutdown.await;
        task.abort();
        Ok(self.stats.report())
    }

    /// One loop for both listeners: a slot is taken first, then the next
    /// connection on either listener gets it, so exactly
    /// `max_connections` are served at once (a slot held by an idle
    /// listener would starve the other one).
    async fn accept_loop(self: Arc<Self>, lis: [Option<TcpListener>; 2]) {
        let sem = Arc::new(Semaphore::new(self.limits.max_connections.max(1)));
        let mut conns = tokio::task::JoinSet::new();
        let [http, socks] = lis;
        loop {
            let Ok(permit) = sem.clone().acquire_owned().await else {
                return;
            };
            let (r, socks) = tokio::select! {
                r = accept(&http) => (r, false),
                r = accept(&socks) => (r, true),
            };
            let Ok((s, _)) = r else {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            let me = self.clone();
            conns.spawn(async move {
                let _permit = permit;
                let _ = s.set_nodelay(true);
                if socks {
                    crate::socks::handle(s, &me).await;
                } else {
                    crate::http::handle(s, &me).await;
                }
            });
            while conns.try_join_next().is_some() {}
        }
    }
}

/// The next connection on `l`; never, without a listener.
async fn accept(l: &Option<TcpListener>) -> std::io::Result<(TcpStream, SocketAddr)> {
    match l {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}
