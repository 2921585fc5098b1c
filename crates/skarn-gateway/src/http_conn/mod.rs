//! Accepting and serving HTTP connections with bounds, so that clients
//! without a token can neither exhaust the gateway's descriptors nor lock
//! authorized clients out (issue 25; attack atk25c F4).
//!
//! - The gateway always accepts: the kernel's backlog never fills, so an
//!   authorized client's handshake is never dropped. On Linux the listener
//!   defers accepting a connection until its first bytes arrive
//!   (`TCP_DEFER_ACCEPT`): clients that connect and send nothing cost no
//!   slot.
//! - A new connection's request head is read first ([`head`]), within the
//!   header timeout. At most half of `max_connections` connections wait so
//!   (for their head or a slot); past that the oldest waiting one that has
//!   not shown the token is closed. Served and waiting connections together
//!   stay within the descriptor budget: the gateway never accepts into
//!   `EMFILE`.
//! - A connection is served in one of `max_connections` slots. A head that
//!   shows the token takes a slot at once, closing the oldest served
//!   connection that has not shown it if need be; any other waits for a
//!   free slot, or closes the oldest unauthenticated served one once that
//!   has been served for [`EVICTION_GRACE`].
//! - A served connection is closed after the idle timeout; a request
//!   without the token is answered 401 and its connection closed
//!   (`crate::http`).

mod head;
mod open;
mod streams;

pub use open::ConnAuth;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
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
    /// From `[gateway]`; the connection cap never exceeds a third of the
    /// process's descriptor limit (served and waiting connections together
    /// half of it), so that downstream pipes and workers always have
    /// descriptors left.
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
    usize::try_from(lim.rlim_cur / 3).unwrap_or(usize::MAX)
}

/// Most bytes buffered for one connection's request head (and read ahead
/// of its body).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long a served connection that has not shown the token is safe
/// from being closed to make room for another such connection (a client
/// with the token never waits for it). Its head has already arrived, so
/// this only lets its answer (a 401, usually) go out.
pub const EVICTION_GRACE: Duration = Duration::from_secs(1);

/// The listen backlog the gateway asks for (the kernel caps it at
/// `net.core.somaxconn`).
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` with [`LISTEN_BACKLOG`], deferring (on Linux)
/// connections until their first bytes arrive (or [`DEFER_ACCEPT_SECS`]).
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
    #[cfg(target_os = "linux")]
    defer_accept(&socket)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Seconds a connection that has sent nothing stays in the kernel before
/// it is handed to the gateway anyway (the kernel rounds up to its SYN-ACK
/// retransmission steps).
#[cfg(target_os = "linux")]
const DEFER_ACCEPT_SECS: libc::c_int = 10;

#[cfg(target_os = "linux")]
fn defer_accept(socket: &tokio::net::TcpSocket) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let secs: libc::c_int = DEFER_ACCEPT_SECS;
    // SAFETY: setsockopt reads one c_int we own, on a socket we own.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&raw const secs).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Serve `router` on `listener` within `limits` until `stop` is cancelled;
/// `token` is the bearer token that puts a client first.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    token: Arc<String>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    // Connections waiting for their head or a slot: at most half as many
    // again, so that all of them fit the descriptor budget.
    let pending_cap = (limits.max_connections / 2).max(1);
    let descriptors = Arc::new(Semaphore::new(limits.max_connections + pending_cap));
    let open = Arc::new(Mutex::new(open::Open::default()));
    let shared = Arc::new(Shared {
        router,
        limits,
        token: token.clone(),
        slots,
        open: open.clone(),
        stop: stop.clone(),
    });
    loop {
        // A descriptor for the next connection: when none is left, close
        // the oldest waiting connection that has not shown the token (its
        // descriptor comes back as its task ends).
        let descriptor = match descriptors.clone().try_acquire_owned() {
            Ok(d) => d,
            Err(_) => {
                if let Ok(mut o) = open.lock() {
                    o.shed_pending(pending_cap.saturating_sub(1));
                }
                tokio::select! {
                    d = descriptors.clone().acquire_owned() => d.map_err(std::io::Error::other)?,
                    () = stop.cancelled() => return Ok(()),
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
        // What has already arrived (on Linux the kernel hands a connection
        // over only once its first bytes came): a head with the token is
        // known as such before any newer connection can shed this one.
        let mut first = vec![0u8; 4096];
        match stream.try_read(&mut first) {
            Ok(0) => continue,
            Ok(n) => first.truncate(n),
            Err(_) => first.clear(),
        }
        let auth = ConnAuth::default();
        if head::classify(&first, &token) == Some(true) {
            auth.authenticated();
        }
        let close = CancellationToken::new();
        let id = match open.lock() {
            Ok(mut o) => {
                let id = o.add(auth.clone(), close.clone(), Instant::now());
                o.shed_pending(pending_cap);
                id
            }
            Err(_) => continue,
        };
        let conn = Connection {
            id,
            auth,
            close,
            _descriptor: descriptor,
            shared: shared.clone(),
        };
        tokio::spawn(conn.run(first, stream));
    }
}

/// What every connection's task shares.
struct Shared {
    router: axum::Router,
    limits: HttpLimits,
    token: Arc<String>,
    slots: Arc<Semaphore>,
    open: Arc<Mutex<open::Open>>,
    stop: CancellationToken,
}

/// One accepted connection and its entry in the open set.
struct Connection {
    id: u64,
    auth: ConnAuth,
    close: CancellationToken,
    /// Held until the connection's task ends.
    _descriptor: OwnedSemaphorePermit,
    shared: Arc<Shared>,
}

impl Connection {
    async fn run(self, first: Vec<u8>, mut stream: TcpStream) {
        let sh = self.shared.clone();
        let head = head::read(
            first,
            &mut stream,
            &sh.token,
            sh.limits.header_timeout,
            &self.close,
        )
        .await;
        if let Some(head) = head
            && let Some(permit) = self.slot(head.authorized).await
        {
            self.serve(head.bytes, stream, permit).await;
        }
        if let Ok(mut o) = sh.open.lock() {
            o.remove(self.id);
        }
    }

    /// A free slot; when there is none, make room by closing the oldest
    /// served connection that has not shown the token (at once for a
    /// client that has, after its grace for any other). `None`: this
    /// connection was closed meanwhile.
    async fn slot(&self, authorized: bool) -> Option<OwnedSemaphorePermit> {
        let (slots, stop) = (&self.shared.slots, &self.shared.stop);
        if authorized {
            self.auth.authenticated();
        }
        let grace = if authorized {
            Duration::ZERO
        } else {
            EVICTION_GRACE
        };
        loop {
            if let Ok(p) = slots.clone().try_acquire_owned() {
                return Some(p);
            }
            let evicted = self
                .shared
                .open
                .lock()
                .map(|mut o| o.evict(Instant::now(), grace))
                .unwrap_or(open::Evicted::None);
            let wait = match evicted {
                open::Evicted::One => {
                    tracing::debug!(
                        "all HTTP slots taken: closed the oldest unauthenticated connection"
                    );
                    Duration::from_millis(100)
                }
                // A connection may become evictable while we wait.
                open::Evicted::Wait(d) => d.max(Duration::from_millis(5)),
                open::Evicted::None => Duration::from_millis(100),
            };
            tokio::select! {
                p = slots.clone().acquire_owned() => return p.ok(),
                () = self.close.cancelled() => return None,
                () = stop.cancelled() => return None,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    async fn serve(&self, head: Vec<u8>, stream: TcpStream, permit: OwnedSemaphorePermit) {
        let _permit = permit;
        let (limits, stop) = (self.shared.limits, &self.shared.stop);
        let router = self.shared.router.clone();
        if let Ok(mut o) = self.shared.open.lock() {
            o.admit(self.id, Instant::now());
        }
        // Each request carries its connection's `ConnAuth`.
        let auth = self.auth.clone();
        let inner = TowerToHyperService::new(router);
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            req.extensions_mut().insert(auth.clone());
            hyper::service::Service::call(&inner, req)
        });
        let epoch = Instant::now();
        let last = Arc::new(AtomicU64::new(0));
        let io = TokioIo::new(streams::Watched {
            inner: streams::Prefixed {
                head,
                at: 0,
                inner: stream,
            },
            epoch,
            last: last.clone(),
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            // A request head over this is refused (431): a client without
            // the token costs the gateway at most this much buffer (hyper's
            // default is about 400 KB; attack F9).
            .max_buf_size(MAX_HEAD_BYTES);
        let conn = builder.serve_connection(io, service);
        tokio::pin!(conn);
        tokio::select! {
            _ = conn.as_mut() => {}
            () = streams::idle_for(epoch, last, limits.idle_timeout) => {}
            () = self.close.cancelled() => {}
            () = stop.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
            }
        }
    }
}
