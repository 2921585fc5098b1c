//! Opening a client's destination, or answering the client why not: the
//! replies the HTTP front end and the TLS-terminating path share.

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::proxy::{OpenError, Shared};
use crate::rules::{Denial, Target};

/// Answer `status` with a plain-text `body` and close.
pub(crate) async fn reply(s: &mut TcpStream, status: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(msg.as_bytes()).await;
    let _ = s.shutdown().await;
}

pub(crate) async fn refuse(s: &mut TcpStream, sh: &Shared, host: &str, port: u16, d: Denial) {
    sh.deny(host, port, &d);
    reply(
        s,
        "403 Forbidden",
        &format!("skarn: net: denied {host}:{port} ({d})\n"),
    )
    .await;
}

pub(crate) async fn open_or_reply(
    s: &mut TcpStream,
    sh: &Shared,
    host: &str,
    port: u16,
) -> Option<(TcpStream, String)> {
    match open_or_reply_with(s, sh, host, port, false).await {
        Opened::Up(up, key) => Some((up, key)),
        Opened::BoundHost(_) | Opened::Replied => None,
    }
}

/// What [`open_or_reply_with`] did.
pub(crate) enum Opened {
    /// Connected.
    Up(TcpStream, String),
    /// A plain tunnel to a host a secret is bound to: nothing connected,
    /// nothing answered yet.
    BoundHost(Target),
    /// Refused or failed; the client was answered.
    Replied,
}

/// Open `host:port`; with `plain`, a host a secret is bound to (by any of
/// its addresses) is not connected but handed back.
pub(crate) async fn open_or_reply_with(
    s: &mut TcpStream,
    sh: &Shared,
    host: &str,
    port: u16,
    plain: bool,
) -> Opened {
    let Some(t) = Target::parse(host) else {
        let d = Denial::Unsupported(format!("{host:?} is not a host name or address"));
        refuse(s, sh, host, port, d).await;
        return Opened::Replied;
    };
    match sh.open_with(&t, port, plain).await {
        Ok((up, key)) => Opened::Up(up, key),
        Err(OpenError::BoundHost) => Opened::BoundHost(t),
        Err(OpenError::Denied(d)) => {
            let status = match d {
                Denial::ByteLimit(_) => "503 Service Unavailable",
                _ => "403 Forbidden",
            };
            reply(s, status, &format!("skarn: net: denied {t}:{port} ({d})\n")).await;
            Opened::Replied
        }
        Err(OpenError::Failed(why)) => {
            reply(
                s,
                "502 Bad Gateway",
                &format!("skarn: net: {t}:{port}: {why}\n"),
            )
            .await;
            Opened::Replied
        }
    }
}
