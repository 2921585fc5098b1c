//! The request/response loop of an intercepted connection: each request
//! checked and rewritten ([`super::request`]), its body passed on, the
//! response head and body scrubbed of the secrets' values.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::io::{Reader, chunk_size};
use super::request::{Framing, Refusal, prepare};
use super::scrub::Scrubber;
use crate::relay::forward;
use crate::rules::Target;
use crate::server::Shared;

pub(crate) struct Ctx<'a> {
    pub(crate) sh: &'a Shared,
    pub(crate) t: &'a Target,
    pub(crate) port: u16,
    pub(crate) key: &'a str,
}

/// Write (counted against the byte bound) or fail.
async fn put<W: AsyncWrite + Unpin>(
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

async fn answer<W: AsyncWrite + Unpin>(w: &mut W, status: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = w.write_all(msg.as_bytes()).await;
    let _ = w.shutdown().await;
}

/// Serve requests until either side closes.
pub(crate) async fn serve<C, U>(client: C, upstream: U, cx: &Ctx<'_>)
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let Some(ic) = cx.sh.secrets.as_deref() else {
        return;
    };
    let idle = cx.sh.limits.idle_timeout;
    let (cr, mut cw) = tokio::io::split(client);
    let (ur, mut uw) = tokio::io::split(upstream);
    let mut cr = Reader::new(cr, idle);
    let mut ur = Reader::new(ur, idle);
    loop {
        let head = match cr.head().await {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(_) => {
                answer(
                    &mut cw,
                    "400 Bad Request",
                    "skarn: net: bad or oversized request head\n",
                )
                .await;
                break;
            }
        };
        let req = match prepare(&head, cx.t, cx.port, &ic.bindings) {
            Ok(r) => r,
            Err(Refusal::Bad(why)) => {
                cx.sh.deny(
                    &cx.t.to_string(),
                    cx.port,
                    &crate::Denial::Unsupported(why.clone()),
                );
                answer(&mut cw, "400 Bad Request", &format!("skarn: net: {why}\n")).await;
                break;
            }
            Err(Refusal::Secret {
                found,
                method,
                path,
                why,
            }) => {
                let name = ic.bindings.name(found);
                cx.sh.secret_event(name, cx.key, &method, &path, Some(&why));
                answer(
                    &mut cw,
                    "403 Forbidden",
                    &format!(
                        "skarn: secret {name} was not sent to {} ({method} {path}): {why}\n",
                        cx.key
                    ),
                )
                .await;
                break;
            }
        };
        for f in &req.used {
            cx.sh
                .secret_event(ic.bindings.name(*f), cx.key, &req.method, &req.path, None);
        }
        if !ic.remember(&req.pairs) {
            answer(
                &mut cw,
                "403 Forbidden",
                "skarn: secret: too many distinct credential headers in this run\n",
            )
            .await;
            break;
        }
        let mut scrub = ic.scrubber();
        if put(&mut uw, &req.head, cx, true).await.is_err() {
            break;
        }
        if req.expect_continue
            && cw
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await
                .is_err()
        {
            break;
        }
        if body(&mut cr, &mut uw, req.framing, None, cx, true)
            .await
            .is_err()
        {
            break;
        }
        match response(&mut ur, &mut cw, req.is_head, &mut scrub, cx).await {
            Ok(Next::KeepAlive) if !req.close => {}
            Ok(Next::Upgrade) => {
                upgraded(cr, cw, ur, uw, &mut scrub, cx).await;
                return;
            }
            _ => break,
        }
    }
    let _ = cw.shutdown().await;
    let _ = uw.shutdown().await;
}

enum Next {
    KeepAlive,
    Close,
    Upgrade,
}

/// Pass one response (informational heads first) to the client, scrubbed.
async fn response<R, W>(
    ur: &mut Reader<R>,
    cw: &mut W,
    is_head: bool,
    scrub: &mut Scrubber,
    cx: &Ctx<'_>,
) -> io::Result<Next>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let mut head = ur.head().await?.ok_or(io::ErrorKind::UnexpectedEof)?;
        let mut hs = [httparse::EMPTY_HEADER; 100];
        let mut res = httparse::Response::new(&mut hs);
        if !matches!(res.parse(&head), Ok(httparse::Status::Complete(_))) {
            answer(
                cw,
                "502 Bad Gateway",
                "skarn: net: malformed response from upstream\n",
            )
            .await;
            return Ok(Next::Close);
        }
        let code = res.code.unwrap_or(0);
        let mut close = res.version == Some(0);
        let mut te = Vec::new();
        let mut cl = Vec::new();
        for h in res.headers.iter() {
            let v = String::from_utf8_lossy(h.value).trim().to_ascii_lowercase();
            match h.name.to_ascii_lowercase().as_str() {
                "transfer-encoding" => te.push(v),
                "content-length" => cl.push(v),
                "connection" => close |= v.split(',').any(|x| x.trim() == "close"),
                _ => {}
            }
        }
        scrub.all(&mut head);
        put(cw, &head, cx, false).await?;
        if code == 101 {
            return Ok(Next::Upgrade);
        }
        if (100..200).contains(&code) {
            continue;
        }
        let framing = if is_head || code == 204 || code == 304 {
            Framing::Length(0)
        } else if te
            .iter()
            .any(|v| v.rsplit(',').next().map(str::trim) == Some("chunked"))
        {
            Framing::Chunked
        } else if !te.is_empty() {
            Framing::UntilClose
        } else if let Some(n) = cl.first() {
            if cl.iter().any(|x| x != n) {
                return Ok(Next::Close);
            }
            Framing::Length(
                n.parse()
                    .map_err(|_| io::Error::other("bad Content-Length"))?,
            )
        } else {
            Framing::UntilClose
        };
        body(ur, cw, framing, Some(scrub), cx, false).await?;
        return Ok(if close || framing == Framing::UntilClose {
            Next::Close
        } else {
            Next::KeepAlive
        });
    }
}

/// Pass a body on with `framing`, through `scrub` if given.
async fn body<R, W>(
    r: &mut Reader<R>,
    w: &mut W,
    framing: Framing,
    mut scrub: Option<&mut Scrubber>,
    cx: &Ctx<'_>,
    out: bool,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    const STEP: usize = 64 * 1024;
    match framing {
        Framing::Length(mut n) => {
            while n > 0 {
                let d = r.some(n.min(STEP as u64) as usize).await?;
                if d.is_empty() {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                n -= d.len() as u64;
                match scrub.as_deref_mut() {
                    Some(s) => put(w, &s.push(&d), cx, out).await?,
                    None => put(w, &d, cx, out).await?,
                }
            }
            if let Some(s) = scrub {
                put(w, &s.finish(), cx, out).await?;
            }
        }
        Framing::UntilClose => loop {
            let d = r.some(STEP).await?;
            if d.is_empty() {
                if let Some(s) = scrub {
                    put(w, &s.finish(), cx, out).await?;
                }
                break;
            }
            match scrub.as_deref_mut() {
                Some(s) => put(w, &s.push(&d), cx, out).await?,
                None => put(w, &d, cx, out).await?,
            }
        },
        Framing::Chunked => loop {
            let line = r.line().await?;
            let n = chunk_size(&line).ok_or_else(|| io::Error::other("bad chunk size"))?;
            if n == 0 {
                // Trailers are dropped; the end is re-sent plainly.
                while !r.line().await?.is_empty() {}
                if let Some(s) = scrub.as_deref_mut() {
                    let rest = s.finish();
                    if !rest.is_empty() {
                        put(w, format!("{:x}\r\n", rest.len()).as_bytes(), cx, out).await?;
                        put(w, &rest, cx, out).await?;
                        put(w, b"\r\n", cx, out).await?;
                    }
                }
                put(w, b"0\r\n\r\n", cx, out).await?;
                break;
            }
            let mut left = n;
            while left > 0 {
                let d = r.exact(left.min(STEP as u64) as usize).await?;
                left -= d.len() as u64;
                let d = match scrub.as_deref_mut() {
                    Some(s) => s.push(&d).to_vec(),
                    None => d,
                };
                if !d.is_empty() {
                    put(w, format!("{:x}\r\n", d.len()).as_bytes(), cx, out).await?;
                    put(w, &d, cx, out).await?;
                    put(w, b"\r\n", cx, out).await?;
                }
            }
            if !r.line().await?.is_empty() {
                return Err(io::Error::other("chunk data longer than its size"));
            }
        },
    }
    Ok(())
}

/// After `101 Switching Protocols`: bytes both ways until either side
/// ends, the upstream's scrubbed. No request heads are read any more, so
/// no placeholder is replaced on this connection from here on.
async fn upgraded<CR, CW, UR, UW>(
    mut cr: Reader<CR>,
    mut cw: CW,
    mut ur: Reader<UR>,
    mut uw: UW,
    scrub: &mut Scrubber,
    cx: &Ctx<'_>,
) where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
    UR: AsyncRead + Unpin,
    UW: AsyncWrite + Unpin,
{
    let up = async {
        let _ = body(&mut cr, &mut uw, Framing::UntilClose, None, cx, true).await;
        let _ = uw.shutdown().await;
    };
    let down = async {
        let _ = body(
            &mut ur,
            &mut cw,
            Framing::UntilClose,
            Some(scrub),
            cx,
            false,
        )
        .await;
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
}
