//! A buffered reader over one side of an intercepted connection, with the
//! HTTP/1.1 framing the proxy needs: heads, chunk-size lines, counted
//! bodies. Every read has the idle timeout; every line and head a bound.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Longest request or response head.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// Longest chunk-size or trailer line.
const MAX_LINE: usize = 4096;

pub(crate) struct Reader<R> {
    pub(crate) inner: R,
    buf: Vec<u8>,
    pos: usize,
    idle: Duration,
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "idle timeout")
}

impl<R: AsyncRead + Unpin> Reader<R> {
    pub(crate) fn new(inner: R, idle: Duration) -> Reader<R> {
        Reader {
            inner,
            buf: Vec::with_capacity(16 * 1024),
            pos: 0,
            idle,
        }
    }

    /// A reader whose first bytes are `pending` (read before it existed).
    pub(crate) fn with_pending(inner: R, idle: Duration, pending: Vec<u8>) -> Reader<R> {
        let mut r = Reader::new(inner, idle);
        r.buf = pending;
        r
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Read more; `Ok(0)` at end of stream.
    async fn fill(&mut self) -> io::Result<usize> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        // Read into the buffer itself (a 64 KiB array here would make
        // every future above this one that much larger).
        self.buf.reserve(64 * 1024);
        let n = tokio::time::timeout(self.idle, self.inner.read_buf(&mut self.buf))
            .await
            .map_err(|_| timed_out())??;
        Ok(n)
    }

    /// The next head (through the empty line); `None` at a clean end of
    /// stream before its first byte.
    pub(crate) async fn head(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(i) = find(self.pending(), b"\r\n\r\n") {
                let h = self.pending()[..i + 4].to_vec();
                self.pos += i + 4;
                return Ok(Some(h));
            }
            if self.pending().len() > MAX_HEAD {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "head too large"));
            }
            if self.fill().await? == 0 {
                return if self.pending().is_empty() {
                    Ok(None)
                } else {
                    Err(io::ErrorKind::UnexpectedEof.into())
                };
            }
        }
    }

    /// One line through CRLF (without it).
    pub(crate) async fn line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = find(self.pending(), b"\r\n") {
                let l = self.pending()[..i].to_vec();
                self.pos += i + 2;
                return Ok(l);
            }
            if self.pending().len() > MAX_LINE {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "line too long"));
            }
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// Exactly `n` bytes; `None` at a clean end of stream before the
    /// first of them.
    pub(crate) async fn exact(&mut self, n: usize) -> io::Result<Option<Vec<u8>>> {
        while self.pending().len() < n {
            if self.fill().await? == 0 {
                return if self.pending().is_empty() {
                    Ok(None)
                } else {
                    Err(io::ErrorKind::UnexpectedEof.into())
                };
            }
        }
        let v = self.pending()[..n].to_vec();
        self.pos += n;
        Ok(Some(v))
    }

    /// Up to `max` bytes (at least one) of the buffer itself, no copy;
    /// empty at end of stream.
    pub(crate) async fn some_ref(&mut self, max: usize) -> io::Result<&[u8]> {
        if self.pending().is_empty() && self.fill().await? == 0 {
            return Ok(&[]);
        }
        let n = self.pending().len().min(max);
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..start + n])
    }
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// The next piece, at most `step` bytes, of a counted payload (a
    /// body, a chunk, a WebSocket frame) with `left` bytes still to come;
    /// an error at end of stream: the one reading step the body and
    /// WebSocket paths share.
    pub(crate) async fn counted(&mut self, left: u64, step: usize) -> io::Result<&[u8]> {
        let d = self.some_ref(left.min(step as u64) as usize).await?;
        if d.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(d)
    }
}

pub(crate) fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// A chunk-size line: hex digits, optional `;extensions`.
pub(crate) fn chunk_size(line: &[u8]) -> Option<u64> {
    let hex = line.split(|b| *b == b';').next()?;
    let hex = std::str::from_utf8(hex).ok()?.trim_end_matches([' ', '\t']);
    if hex.is_empty() || hex.len() > 15 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size(b"1a"), Some(26));
        assert_eq!(chunk_size(b"0;x=y"), Some(0));
        assert_eq!(chunk_size(b""), None);
        assert_eq!(chunk_size(b"-1"), None);
        assert_eq!(chunk_size(b"0x10"), None);
        assert_eq!(chunk_size(b"ffffffffffffffffff"), None);
    }
}
