//! Accepting and serving HTTP connections with bounds, so that clients
//! without a token can neither exhaust the gateway's descriptors nor lock
//! authorized clients out: at most `max_connections` at once, a deadline
//! for a request's headers, and an idle timeout that closes a connection
//! with no traffic either way. When every slot is taken, the oldest
//! connection that has not yet shown the token is closed to make room for
//! the new one, once it has been open for [`EVICTION_GRACE`] (until then,
//! and while every slot holds an authenticated connection, a new one waits
//! in the kernel's backlog of [`LISTEN_BACKLOG`]). A request without the
//! token is answered 401 and its connection closed (`crate::http`).

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// Whether a connection has carried a request with the right token. The
/// token check (`crate::http`) finds it in the request's extensions and
/// sets it; a connection never loses it.
#[derive(Debug, Clone, Default)]
pub struct ConnAuth(Arc<AtomicBool>);

impl ConnAuth {
    /// Note that this connection showed the token.
    pub fn authenticated(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn is_authenticated(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Most bytes buffered for one connection's request head (and read ahead
/// of its body).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long a new connection is safe from eviction: a client that sends
/// its request head within this time of being accepted (one round trip on
/// any sane network) is never closed to make room, however fast clients
/// without the token connect meanwhile. While every unauthenticated
/// connection is younger than this, new connections wait in the kernel's
/// backlog; so at most `max_connections` connections are taken in per
/// grace period, and a waiting client is accepted within
/// (backlog / `max_connections`) grace periods. (A shorter grace takes
/// reconnecting floods in faster but closes a slow authorized client
/// before its head arrives: attack atk25c F4 is open, SECURITY.md.)
pub const EVICTION_GRACE: Duration = Duration::from_secs(1);

/// The listen backlog the gateway asks for (the kernel caps it at
/// `net.core.somaxconn`).
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` with [`LISTEN_BACKLOG`].
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // (As std's listener does on unix; on Windows the same option would
    // let another program take the port.)
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The open connections, oldest first, with when they were accepted and
/// what it takes to close one.
#[derive(Default)]
struct Open {
    next: u64,
    conns: BTreeMap<u64, (ConnAuth, CancellationToken, Instant)>,
}

/// What [`Open::evict`] did.
#[derive(Debug, PartialEq, Eq)]
enum Evicted {
    /// Closed one connection (its slot comes back as its task ends).
    One,
    /// The oldest unauthenticated connection is still within its grace:
    /// ask again after this long.
    Wait(Duration),
    /// Every open connection has shown the token.
    None,
}

impl Open {
    fn add(&mut self, auth: ConnAuth, close: CancellationToken, now: Instant) -> u64 {
        let id = self.next;
        self.next += 1;
        self.conns.insert(id, (auth, close, now));
        id
    }

    /// Close the oldest connection that has not shown the token, once it
    /// is older than `grace`.
    fn evict(&mut self, now: Instant, grace: Duration) -> Evicted {
        let victim = self
            .conns
            .iter()
            .find(|(_, (auth, _, _))| !auth.is_authenticated())
            .map(|(id, (_, _, since))| (*id, *since));
        let Some((id, since)) = victim else {
            return Evicted::None;
        };
        let age = now.saturating_duration_since(since);
        if age < grace {
            return Evicted::Wait(grace - age);
        }
        match self.conns.remove(&id) {
            Some((_, close, _)) => {
                close.cancel();
                Evicted::One
            }
            None => Evicted::None,
        }
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
    let open = Arc::new(Mutex::new(Open::default()));
    loop {
        // With no slot free, wait only while every connection is
        // authenticated: otherwise make room by closing the oldest
        // unauthenticated one (its slot comes back as its task ends).
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                let evicted = open
                    .lock()
                    .map(|mut o| o.evict(Instant::now(), EVICTION_GRACE))
                    .unwrap_or(Evicted::None);
                let wait = match evicted {
                    Evicted::One => {
                        tracing::debug!(
                            "all HTTP slots taken: closed the oldest unauthenticated connection"
                        );
                        None
                    }
                    // A connection may become evictable while we wait.
                    Evicted::Wait(d) => Some(d.max(Duration::from_millis(5))),
                    Evicted::None => Some(Duration::from_millis(100)),
                };
                tokio::select! {
                    p = slots.clone().acquire_owned() => p.map_err(std::io::Error::other)?,
                    () = stop.cancelled() => return Ok(()),
                    () = tokio::time::sleep(wait.unwrap_or_default()), if wait.is_some() => continue,
                }
            }
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
        let auth = ConnAuth::default();
        let close = CancellationToken::new();
        let id = match open.lock() {
            Ok(mut o) => o.add(auth.clone(), close.clone(), Instant::now()),
            Err(_) => continue,
        };
        let router = router.clone();
        let stop = stop.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // Each request carries its connection's `ConnAuth`.
            let inner = TowerToHyperService::new(router);
            let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
                req.extensions_mut().insert(auth.clone());
                hyper::service::Service::call(&inner, req)
            });
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
                .header_read_timeout(limits.header_timeout)
                // A request head over this is refused (431): a client
                // without the token costs the gateway at most this much
                // buffer (hyper's default is about 400 KB; attack F9).
                .max_buf_size(MAX_HEAD_BYTES);
            let conn = builder.serve_connection(io, service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = idle_for(epoch, last, limits.idle_timeout) => {}
                () = close.cancelled() => {}
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
                }
            }
            if let Ok(mut o) = open.lock() {
                o.conns.remove(&id);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unauthenticated_connections_past_their_grace_are_evicted() {
        let t0 = Instant::now();
        let grace = Duration::from_secs(1);
        let mut open = Open::default();
        let a = ConnAuth::default();
        a.authenticated();
        let (ca, cb) = (CancellationToken::new(), CancellationToken::new());
        open.add(a, ca.clone(), t0);
        open.add(
            ConnAuth::default(),
            cb.clone(),
            t0 + Duration::from_millis(500),
        );
        assert_eq!(
            open.evict(t0 + Duration::from_millis(700), grace),
            Evicted::Wait(Duration::from_millis(800))
        );
        assert!(!cb.is_cancelled());
        assert_eq!(
            open.evict(t0 + Duration::from_millis(1500), grace),
            Evicted::One
        );
        assert!(cb.is_cancelled() && !ca.is_cancelled());
        assert_eq!(
            open.evict(t0 + Duration::from_secs(9), grace),
            Evicted::None
        );
    }
}
