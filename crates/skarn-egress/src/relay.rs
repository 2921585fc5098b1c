//! Copy bytes both ways with an idle timeout and byte accounting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::server::Shared;

struct Link {
    start: Instant,
    last: AtomicU64,
    stop: AtomicBool,
    wake: Notify,
}

impl Link {
    fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
    fn end(&self) {
        self.stop.store(true, Ordering::Relaxed);
        // One permit for the other direction, kept if it is not waiting yet.
        self.wake.notify_one();
    }
}

/// Relay between the client and the upstream until both sides are done,
/// the link is idle longer than the idle timeout, or the byte bound is hit.
pub(crate) async fn relay(client: TcpStream, upstream: TcpStream, key: &str, sh: &Shared) {
    let link = Arc::new(Link {
        start: Instant::now(),
        last: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        wake: Notify::new(),
    });
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    tokio::join!(
        pipe(cr, uw, key, sh, &link, true),
        pipe(ur, cw, key, sh, &link, false),
    );
}

async fn pipe<R, W>(mut r: R, mut w: W, key: &str, sh: &Shared, link: &Link, out: bool)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 64 * 1024];
    let idle = sh.limits.idle_timeout;
    loop {
        if link.stop.load(Ordering::Relaxed) {
            break;
        }
        let n = tokio::select! {
            r = tokio::time::timeout(idle, r.read(&mut buf)) => match r {
                Ok(Ok(n)) => n,
                Ok(Err(_)) => break,
                Err(_) => {
                    if link.idle_for() >= idle {
                        link.end();
                        break;
                    }
                    continue;
                }
            },
            _ = link.wake.notified() => break,
        };
        if n == 0 {
            break;
        }
        link.touch();
        if w.write_all(&buf[..n]).await.is_err() {
            link.end();
            break;
        }
        let n = n as u64;
        if out {
            sh.stats.bytes(key, n, 0);
        } else {
            sh.stats.bytes(key, 0, n);
        }
        if let Some(max) = sh.limits.max_total_bytes
            && sh.stats.total_bytes() > max
        {
            sh.stats.hit_limit();
            link.end();
            break;
        }
    }
    let _ = w.shutdown().await;
}
