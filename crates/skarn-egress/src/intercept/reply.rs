//! The proxy's own answers to the client on an intercepted connection.

use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::context::Ctx;

/// A short plain-text answer, the connection closed after it.
pub(super) async fn answer<W: AsyncWrite + Unpin>(w: &mut W, status: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = w.write_all(msg.as_bytes()).await;
    let _ = w.shutdown().await;
}

/// A coded request body the proxy could not search (a coding it cannot
/// undo, a bomb, a broken stream): refused, said to the client and
/// recorded for the report (f27t).
pub(super) async fn refuse_coded<W: AsyncWrite + Unpin>(cw: &mut W, why: &str, cx: &Ctx<'_>) {
    cx.sh.deny(
        &cx.t.to_string(),
        cx.port,
        &crate::Denial::Unsupported(why.to_string()),
    );
    let status = if why.contains("decodes to more than") {
        "413 Content Too Large"
    } else {
        "400 Bad Request"
    };
    answer(cw, status, &format!("skarn: net: {why}\n")).await;
}
