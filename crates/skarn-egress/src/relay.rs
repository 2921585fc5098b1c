//! Copy bytes both ways with an idle timeout and byte accounting: on Linux
//! without copying through memory ([`crate::splice`]), elsewhere (or when
//! no pipe can be made) through a buffer.
//!
//! Bytes are taken from the run's budget before they are written: a chunk
//! that would cross `max_total_bytes` is written only up to the bound, and
//! the connection is then closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::link::Link;
use crate::proxy::Shared;

/// Benchmarks only: relay through a buffer even where zero-copy relaying
/// is available, to compare the two paths in one run.
static COPY_ONLY: AtomicBool = AtomicBool::new(false);

/// Benchmarks only (see `examples/relay_throughput.rs`): `true` makes new
/// connections use the copying path.
#[doc(hidden)]
pub fn bench_copy_only(on: bool) {
    COPY_ONLY.store(on, Ordering::Relaxed);
}

/// Relay between the client and the upstream until both sides are done,
/// the link is idle longer than the idle timeout, or the byte bound is hit.
pub(crate) async fn relay(client: TcpStream, upstream: TcpStream, key: &str, sh: &Shared) {
    let link = Arc::new(Link::new());
    #[cfg(target_os = "linux")]
    if !COPY_ONLY.load(Ordering::Relaxed)
        && let (Some(a), Some(b)) = (crate::splice::Pipe::new(), crate::splice::Pipe::new())
    {
        tokio::join!(
            crate::splice::pipe(&client, &upstream, a, key, sh, &link, true),
            crate::splice::pipe(&upstream, &client, b, key, sh, &link, false),
        );
        return;
    }
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    tokio::join!(
        pipe(cr, uw, key, sh, &link, true),
        pipe(ur, cw, key, sh, &link, false),
    );
}

async fn pipe<R, W>(r: R, w: W, key: &str, sh: &Shared, link: &Link, out: bool)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut r, mut w) = (r, w);
    let mut buf = vec![0u8; 64 * 1024];
    let idle = sh.limits.idle_timeout;
    loop {
        if link.stopped() {
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
        if !forward(&mut w, &buf[..n], key, sh, out).await {
            link.end();
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// Write `data` to `w` as far as the byte budget allows, counting what was
/// written for `key` (`out`: sent by the command). `false` when the budget
/// cut it short (the bound is then recorded as hit) or the write failed:
/// the caller closes the connection.
pub(crate) async fn forward<W>(w: &mut W, data: &[u8], key: &str, sh: &Shared, out: bool) -> bool
where
    W: AsyncWrite + Unpin,
{
    let want = data.len() as u64;
    let granted = sh.stats.take(want, sh.limits.max_total_bytes);
    // `granted <= data.len()`, so the conversion and the slice hold.
    let fits = usize::try_from(granted)
        .unwrap_or(data.len())
        .min(data.len());
    if fits > 0 {
        // Counted as taken, even if the write then fails part-way: the
        // report never shows less than what may have left.
        if out {
            sh.stats.bytes(key, granted, 0);
        } else {
            sh.stats.bytes(key, 0, granted);
        }
        if w.write_all(&data[..fits]).await.is_err() {
            return false;
        }
    }
    if granted < want {
        sh.stats.hit_limit();
        return false;
    }
    true
}
