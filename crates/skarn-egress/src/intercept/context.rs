//! What one intercepted connection carries through its exchanges: the
//! proxy, the tunnel's host and port, its counter key; and the one write
//! path, counted against the run's byte bound.

use std::io;

use tokio::io::AsyncWrite;

use crate::proxy::Shared;
use crate::relay::forward;
use crate::rules::Target;

pub(crate) struct Ctx<'a> {
    pub(crate) sh: &'a Shared,
    pub(crate) t: &'a Target,
    pub(crate) port: u16,
    pub(crate) key: &'a str,
}

/// Write (counted against the byte bound) or fail.
pub(crate) async fn put<W: AsyncWrite + Unpin>(
    w: &mut W,
    d: &[u8],
    cx: &Ctx<'_>,
    out: bool,
) -> io::Result<()> {
    if d.is_empty() || forward(w, d, cx.key, cx.sh, out).await {
        Ok(())
    } else {
        Err(io::Error::other("closed or byte bound reached"))
    }
}
