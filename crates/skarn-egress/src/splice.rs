//! Zero-copy relaying of one direction on Linux: `splice(2)` moves the
//! bytes from the source socket into a pipe and from the pipe into the
//! destination socket, so they never pass through user memory.
//!
//! The accounting is the copying path's ([`crate::relay::forward`]): what
//! was read into the pipe is taken from the run's byte budget before any of
//! it is written, and only what the budget grants leaves the pipe.

use std::io;
use std::os::fd::OwnedFd;

use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_setpipe_size, pipe_with, splice};
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::link::Link;
use crate::proxy::Shared;

/// Pipe capacity asked for. Larger moves more per system call; the
/// kernel's per-user budget of pipe pages (`pipe-user-pages-soft`, 64 MiB
/// by default) covers 128 connections at this size in both directions,
/// and a pipe that cannot grow keeps its default size and still works.
const PIPE_SIZE: usize = 256 * 1024;

/// A pipe used as the in-kernel buffer of one direction.
pub(crate) struct Pipe {
    r: OwnedFd,
    w: OwnedFd,
    cap: usize,
}

impl Pipe {
    /// A non-blocking pipe, or `None` (descriptor limit): the caller then
    /// copies through memory instead.
    pub(crate) fn new() -> Option<Pipe> {
        let (r, w) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).ok()?;
        let cap = fcntl_setpipe_size(&w, PIPE_SIZE).unwrap_or(16 * 4096);
        Some(Pipe { r, w, cap })
    }
}

const FLAGS: SpliceFlags = SpliceFlags::MOVE.union(SpliceFlags::NONBLOCK);

/// Relay `src` to `dst` until end of stream, an error, the idle timeout,
/// the other direction's end, or the byte budget; then shut down `dst`'s
/// sending side.
pub(crate) async fn pipe(
    src: &TcpStream,
    dst: &TcpStream,
    p: Pipe,
    key: &str,
    sh: &Shared,
    link: &Link,
    out: bool,
) {
    let idle = sh.limits.idle_timeout;
    loop {
        if link.stopped() {
            break;
        }
        tokio::select! {
            r = tokio::time::timeout(idle, src.readable()) => match r {
                Ok(Ok(())) => {}
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
        }
        let n = match src.try_io(Interest::READABLE, || {
            splice(src, None, &p.w, None, p.cap, FLAGS).map_err(io::Error::from)
        }) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => break,
        };
        link.touch();
        let want = n as u64;
        let granted = sh.stats.take(want, sh.limits.max_total_bytes);
        let fits = usize::try_from(granted).unwrap_or(n).min(n);
        if fits > 0 {
            // Counted as taken even if the write then fails part-way, as in
            // the copying path.
            if out {
                sh.stats.bytes(key, granted, 0);
            } else {
                sh.stats.bytes(key, 0, granted);
            }
            if !drain(&p, dst, fits, sh, link).await {
                link.end();
                break;
            }
        }
        if granted < want {
            sh.stats.hit_limit();
            link.end();
            break;
        }
    }
    let _ = rustix::net::shutdown(dst, rustix::net::Shutdown::Write);
}

/// Move `left` bytes from the pipe to `dst`. `false` when the destination
/// failed, the link was ended, or it stayed unwritable past the idle
/// timeout with no traffic either way.
async fn drain(p: &Pipe, dst: &TcpStream, mut left: usize, sh: &Shared, link: &Link) -> bool {
    let idle = sh.limits.idle_timeout;
    while left > 0 {
        match tokio::time::timeout(idle, dst.writable()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return false,
            Err(_) => {
                if link.stopped() || link.idle_for() >= idle {
                    return false;
                }
                continue;
            }
        }
        match dst.try_io(Interest::WRITABLE, || {
            splice(&p.r, None, dst, None, left, FLAGS).map_err(io::Error::from)
        }) {
            Ok(0) => return false,
            Ok(n) => {
                left -= n.min(left);
                link.touch();
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
    }
    true
}
