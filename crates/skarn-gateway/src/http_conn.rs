//! Accepting and serving HTTP connections with bounds, so that clients
//! without a token cannot exhaust the gateway's descriptors: at most
//! `max_connections` at once (more wait in the kernel's backlog, never
//! holding a descriptor), a deadline for a request's headers, and an idle
//! timeout that closes a connection with no traffic either way.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::config::GatewayConfig;

/// Bounds on HTTP connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

impl HttpLimits {
    /// From `[gateway]`; the connection cap never exceeds half the
    /// process's descriptor limit, so that downstream pipes and workers
    /// always have descriptors left.
    pub fn from_config(g: &GatewayConfig) -> HttpLimits {
        HttpLimits {
            header_timeout: Duration::from_secs_f64(g.http_header_timeout),
            idle_timeout: Duration::from_secs_f64(g.http_idle_timeout),
            max_connections: g.http_max_connections.min(descriptor_budget()).max(1),
        }
    }
}

/// No descriptor limit to respect off unix.
#[cfg(not(unix))]
fn descriptor_budget() -> usize {
    usize::MAX
}

#[cfg(unix)]
fn descriptor_budget() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return usize::MAX;
    }
    usize::try_from(lim.rlim_cur / 2).unwrap_or(usize::MAX)
}

/// A stream that notes the time of its last read or write.
struct Watched<S> {
    inner: S,
    epoch: Instant,
    last: Arc<AtomicU64>,
}

impl<S> Watched<S> {
    fn touch(&self) {
        self.last
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Resolves once `last` has not moved for `idle`.
async fn idle_for(epoch: Instant, last: Arc<AtomicU64>, idle: Duration) {
    loop {
        let since = Duration::from_millis(last.load(Ordering::Relaxed));
        let quiet = epoch.elapsed().saturating_sub(since);
        if quiet >= idle {
            return;
        }
        tokio::time::sleep(idle - quiet).await;
    }
}

/// Serve `router` on `listener` within `limits` until `stop` is cancelled.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.map_err(std::io::Error::other)?,
            () = stop.cancelled() => return Ok(()),
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = stop.cancelled() => return Ok(()),
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                // EMFILE and the like: wait a little instead of spinning.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let router = router.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let epoch = Instant::now();
            let last = Arc::new(AtomicU64::new(0));
            let io = TokioIo::new(Watched {
                inner: stream,
                epoch,
                last: last.clone(),
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let conn = builder.serve_connection(io, TowerToHyperService::new(router));
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = idle_for(epoch, last, limits.idle_timeout) => {}
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
                }
            }
        });
    }
}
