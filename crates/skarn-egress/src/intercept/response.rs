//! The response half of an intercepted exchange: heads (informational
//! ones first) checked and passed on, bodies de-chunked, decoded and
//! scrubbed of the secrets' values, framed anew when decoded.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};

use super::body::{Filter, body};
use super::context::{Ctx, put};
use super::decode::{Decoder, coding_of};
use super::io::Reader;
use super::reply::answer;
use super::request::Framing;
use super::scrub::Scrubber;

/// What of the request the response's framing depends on.
pub(crate) struct Asked {
    pub(crate) is_head: bool,
    /// The client speaks HTTP/1.0 (no chunked bodies to it).
    pub(crate) http10: bool,
}

pub(crate) enum Next {
    KeepAlive,
    Close,
    Upgrade,
}

/// Pass one response (informational heads first) to the client, scrubbed.
pub(crate) async fn response<R, W>(
    ur: &mut Reader<R>,
    cw: &mut W,
    req: &Asked,
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
        let mut ce = Vec::new();
        let mut upgrade = Vec::new();
        let mut ws_ext = false;
        for h in res.headers.iter() {
            let v = String::from_utf8_lossy(h.value).trim().to_ascii_lowercase();
            match h.name.to_ascii_lowercase().as_str() {
                "transfer-encoding" => te.push(v),
                "content-length" => cl.push(v),
                "content-encoding" => ce.push(v),
                "connection" => close |= v.split(',').any(|x| x.trim() == "close"),
                "upgrade" => upgrade.push(v),
                "sec-websocket-extensions" => ws_ext = true,
                _ => {}
            }
        }
        // After an upgrade the proxy scrubs WebSocket messages, plain ones
        // only (atk27 F3): another protocol, or an extension the host
        // took up although none was offered, is refused.
        if code == 101 && (ws_ext || upgrade.len() != 1 || upgrade[0] != "websocket") {
            answer(
                cw,
                "502 Bad Gateway",
                "skarn: net: the bound host switched to a protocol the proxy cannot scrub (plain WebSocket only)\n",
            )
            .await;
            return Ok(Next::Close);
        }
        let no_body = req.is_head || code == 204 || code == 304 || (100..200).contains(&code);
        // A body in a coding: decoded here so its echoes are found.
        let coding = if no_body {
            None
        } else {
            match coding_of(&te, &ce) {
                Ok(c) => c,
                Err(_) => {
                    // Generic text: the coding names are upstream bytes.
                    answer(
                        cw,
                        "502 Bad Gateway",
                        "skarn: net: the bound host answered in a content or transfer coding the proxy cannot scrub\n",
                    )
                    .await;
                    return Ok(Next::Close);
                }
            }
        };
        let framing = if no_body {
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
        // Decoded bodies go on chunked (length-delimited by close to an
        // HTTP/1.0 client), without the coding's headers.
        let mut out_framing = framing;
        if coding.is_some() {
            let chunked = !req.http10;
            head = rewrite_head(&res, chunked);
            out_framing = if chunked {
                Framing::Chunked
            } else {
                close = true;
                Framing::UntilClose
            };
        }
        scrub.all(&mut head);
        put(cw, &head, cx, false).await?;
        if code == 101 {
            return Ok(Next::Upgrade);
        }
        if (100..200).contains(&code) {
            continue;
        }
        let mut dec = coding.map(Decoder::new);
        let filter = match dec.as_mut() {
            Some(d) => Filter::Decode(d, scrub),
            None => Filter::Scrub(scrub),
        };
        body(ur, cw, framing, out_framing, filter, cx, false).await?;
        return Ok(if close || framing == Framing::UntilClose {
            Next::Close
        } else {
            Next::KeepAlive
        });
    }
}

/// A response head without its coding and length headers, framed anew.
fn rewrite_head(res: &httparse::Response<'_, '_>, chunked: bool) -> Vec<u8> {
    let mut h = format!(
        "HTTP/1.1 {} {}\r\n",
        res.code.unwrap_or(0),
        res.reason.unwrap_or("")
    )
    .into_bytes();
    for x in res.headers.iter() {
        if matches!(
            x.name.to_ascii_lowercase().as_str(),
            "transfer-encoding" | "content-length" | "content-encoding" | "connection"
        ) {
            continue;
        }
        h.extend_from_slice(x.name.as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(x.value);
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(if chunked {
        b"Transfer-Encoding: chunked\r\n\r\n".as_slice()
    } else {
        b"Connection: close\r\n\r\n".as_slice()
    });
    h
}
