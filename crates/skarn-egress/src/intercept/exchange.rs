//! The request/response loop of an intercepted connection: each request
//! checked and rewritten ([`super::request`]), its body passed on, the
//! response head and body scrubbed of the secrets' values.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::body::{Filter, body};
pub(crate) use super::context::{Ctx, put};
use super::decode::{Decoder, coding_of};
use super::io::Reader;
use super::probe::BodyProbe;
use super::request::{Framing, Refusal, prepare};
use super::scrub::Scrubber;

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
        // A piece of a real value in what the sandbox sends: a probe.
        if let Some(f) = ic.probed(&head) {
            refuse_probe(&mut cw, ic, f, cx, "a request head").await;
            break;
        }
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
        if let Some(f) = req.used.iter().find(|f| ic.is_off(**f)) {
            let name = ic.bindings.name(*f);
            let why = "switched off for this run after a probe";
            cx.sh
                .secret_event(name, cx.key, &req.method, &req.path, Some(why));
            answer(&mut cw, "403 Forbidden", &super::probe_refusal(name)).await;
            break;
        }
        for f in &req.used {
            cx.sh
                .secret_event(ic.bindings.name(*f), cx.key, &req.method, &req.path, None);
        }
        ic.remember(&req.pairs);
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
        // One stream with the head (atk27q F7).
        let mut probe = BodyProbe::after(&head);
        let sent = body(
            &mut cr,
            &mut uw,
            req.framing,
            req.framing,
            Filter::Probe(ic.probes(), &mut probe),
            cx,
            true,
        )
        .await;
        if let Some(f) = probe.hit {
            refuse_probe(
                &mut cw,
                ic,
                f,
                cx,
                &format!("the body of {} {}", req.method, req.path),
            )
            .await;
            break;
        }
        if sent.is_err() {
            break;
        }
        let asked = Asked {
            is_head: req.is_head,
            http10: req.http10,
        };
        match response(&mut ur, &mut cw, &asked, &mut scrub, cx).await {
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

/// A request carrying a piece of secret `f`'s value (`what`): refused,
/// the secret switched off, the event recorded.
async fn refuse_probe<W: AsyncWrite + Unpin>(
    cw: &mut W,
    ic: &super::Interceptor,
    f: crate::secrets::Found,
    cx: &Ctx<'_>,
    what: &str,
) {
    let name = ic.bindings.name(f);
    ic.switch_off(f, &format!("{what} to {}", cx.key));
    cx.sh.secret_event(
        name,
        cx.key,
        "-",
        "-",
        Some("a piece of its real value was in the request: switched off for this run"),
    );
    answer(cw, "403 Forbidden", &super::probe_refusal(name)).await;
}

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

/// A piece of `f`'s value went toward `cx.key` in `what`: switched off.
fn probe_found(ic: &super::Interceptor, f: crate::secrets::Found, cx: &Ctx<'_>, what: &str) {
    ic.switch_off(f, &format!("{what} to {}", cx.key));
    cx.sh.secret_event(
        ic.bindings.name(f),
        cx.key,
        "-",
        "-",
        Some("a piece of its real value was in the request: switched off for this run"),
    );
}

/// Plain HTTP while secrets are bound (one request per connection, its
/// head already sent): the client's bytes go up as they are; the
/// response comes back as on the terminating path, its body de-chunked,
/// decoded and scrubbed, then framed anew, and a WebSocket after an
/// upgrade parsed (atk27 F2: the raw bytes were scrubbed, so chunk
/// boundaries or gzip carried the value through).
///
/// The body is read with its framing (de-chunked, then chunked anew) and
/// searched for probes as one stream with the head (atk27q F7), then
/// whatever follows it until the client closes, the search going on.
pub(crate) async fn plain(
    client: TcpStream,
    upstream: TcpStream,
    cx: &Ctx<'_>,
    asked: Asked,
    sent: super::plain_body::PlainBody,
) {
    let Some(ic) = cx.sh.secrets.as_deref() else {
        return;
    };
    let idle = cx.sh.limits.idle_timeout;
    let (cr, mut cw) = client.into_split();
    let (ur, mut uw) = upstream.into_split();
    let mut cr = Reader::with_pending(cr, idle, sent.rest);
    let mut ur = Reader::new(ur, idle);
    let mut scrub = ic.scrubber();
    let until = Framing::UntilClose;
    let mut probe = sent.probe;
    let framing = sent.framing;
    let upgrade = sent.upgrade;
    let up = async {
        let first = body(
            &mut cr,
            &mut uw,
            framing,
            framing,
            Filter::Probe(ic.probes(), &mut probe),
            cx,
            true,
        )
        .await;
        if first.is_ok() && upgrade {
            // What follows an upgrade request is WebSocket frames (or
            // nothing goes up any more).
            let _ = super::websocket::upstream(&mut cr, &mut uw, ic.probes(), &mut probe, cx).await;
        } else if first.is_ok() {
            let _ = body(
                &mut cr,
                &mut uw,
                until,
                until,
                Filter::Probe(ic.probes(), &mut probe),
                cx,
                true,
            )
            .await;
        }
        if let Some(f) = probe.hit {
            probe_found(ic, f, cx, "a plain HTTP body");
            // Nothing of the answer reaches the sandbox.
            return true;
        }
        let _ = uw.shutdown().await;
        false
    };
    let down = async {
        if let Ok(Next::Upgrade) = response(&mut ur, &mut cw, &asked, &mut scrub, cx).await {
            let mut control = ic.scrubber();
            let _ =
                super::websocket::downstream(&mut ur, &mut cw, &mut scrub, &mut control, cx).await;
        }
        let _ = cw.shutdown().await;
    };
    tokio::pin!(up);
    tokio::pin!(down);
    tokio::select! {
        _ = &mut down => {}
        probed = &mut up => {
            if !probed {
                (&mut down).await
            }
        }
    }
}

/// After `101 Switching Protocols`: bytes both ways until either side
/// ends, the upstream's WebSocket messages scrubbed
/// ([`super::websocket`]). No request heads are read any more, so no
/// placeholder is replaced on this connection from here on.
pub(crate) async fn upgraded<CR, CW, UR, UW>(
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
        if let Some(ic) = cx.sh.secrets.as_deref() {
            let mut probe = BodyProbe::default();
            let probes = ic.probes();
            if let Ok(true) =
                super::websocket::upstream(&mut cr, &mut uw, probes, &mut probe, cx).await
                && let Some(f) = probe.hit
            {
                probe_found(ic, f, cx, "a WebSocket message");
            }
        }
        let _ = uw.shutdown().await;
    };
    let down = async {
        if let Some(ic) = cx.sh.secrets.as_deref() {
            let mut control = ic.scrubber();
            let _ = super::websocket::downstream(&mut ur, &mut cw, scrub, &mut control, cx).await;
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
}
