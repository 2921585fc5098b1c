//! Reading a new connection's request head before it is served, to learn
//! whether it carries the token: an authorized client is then served ahead
//! of every connection that has not shown it, whatever clients without the
//! token do meanwhile (attack atk25c F4: a flood of reconnecting clients
//! that each send half a head).

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::MAX_HEAD_BYTES;
use crate::http_token::shows_token;

/// The bytes read ahead (the head, possibly with the start of a body) and
/// whether the head's `Authorization` shows the token.
pub(super) struct Head {
    pub(super) bytes: Vec<u8>,
    pub(super) authorized: bool,
}

/// Most header lines looked at (hyper's own limit is 100).
const MAX_HEADERS: usize = 100;

/// `Some(authorized)` once `buf` holds a whole request head (or one that
/// cannot be parsed, which the HTTP server then answers), `None` while it
/// is incomplete.
pub(super) fn classify(buf: &[u8], token: &str) -> Option<bool> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Partial) => None,
        Ok(httparse::Status::Complete(_)) => Some(
            req.headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                .is_some_and(|h| shows_token(h.value, token)),
        ),
        Err(_) => Some(false),
    }
}

/// Read on from `bytes` (what had arrived by the time the connection was
/// accepted) until the head is complete, more than [`MAX_HEAD_BYTES`] came (the
/// HTTP server refuses it, 431), or `timeout` passed / `close` was
/// cancelled / the peer went away (`None`: drop the connection).
pub(super) async fn read(
    mut bytes: Vec<u8>,
    stream: &mut TcpStream,
    token: &str,
    timeout: Duration,
    close: &CancellationToken,
) -> Option<Head> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut chunk = vec![0u8; 4096];
    loop {
        if let Some(authorized) = classify(&bytes, token) {
            return Some(Head { bytes, authorized });
        }
        if bytes.len() > MAX_HEAD_BYTES {
            return Some(Head {
                bytes,
                authorized: false,
            });
        }
        tokio::select! {
            r = stream.read(&mut chunk) => match r {
                Ok(0) | Err(_) => return None,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            },
            () = tokio::time::sleep_until(deadline) => return None,
            () = close.cancelled() => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::classify;

    #[test]
    fn a_head_is_authorized_only_when_complete_and_with_the_token() {
        let ok = b"POST /mcp HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok\r\n\r\n";
        assert_eq!(classify(ok, "tok"), Some(true));
        assert_eq!(classify(&ok[..ok.len() - 2], "tok"), None);
        assert_eq!(classify(b"", "tok"), None);
        let lower = b"POST /mcp HTTP/1.1\r\nauthorization: bearer tok\r\n\r\n";
        assert_eq!(classify(lower, "tok"), Some(true));
        let wrong = b"POST /mcp HTTP/1.1\r\nAuthorization: Bearer tox\r\n\r\n";
        assert_eq!(classify(wrong, "tok"), Some(false));
        let none = b"POST /mcp HTTP/1.1\r\nHost: h\r\n\r\n";
        assert_eq!(classify(none, "tok"), Some(false));
        // Only the first Authorization counts, as in the request check.
        let two = b"GET / HTTP/1.1\r\nAuthorization: Basic x\r\nAuthorization: Bearer tok\r\n\r\n";
        assert_eq!(classify(two, "tok"), Some(false));
        assert_eq!(classify(b"\x00\x01garbage\r\n\r\n", "tok"), Some(false));
    }
}
