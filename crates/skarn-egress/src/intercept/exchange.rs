//! The request/response loop of an intercepted connection: each request
//! checked and rewritten ([`super::request`]), its body passed on, the
//! response head and body scrubbed of the secrets' values.

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::body::{Filter, body};
use super::coded::{Coded, Stopped};
pub(crate) use super::context::{Ctx, put};
use super::io::Reader;
pub(crate) use super::plain::plain;
use super::plain::upgraded;
use super::probe::BodyProbe;
use super::reply::{answer, refuse_coded};
use super::request::{Refusal, prepare};
use super::request_held::{hold, refuse_probe};
pub(crate) use super::response::Asked;
use super::response::{Next, response};

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
        // A body that could name `_method` is judged before the head goes
        // (s27b).
        let held = match req.body_check {
            Some(f) => match hold(&mut cr, &mut cw, &req, &head, f, ic, cx).await {
                Some(b) => Some(b),
                None => break,
            },
            None => None,
        };
        for f in &req.used {
            cx.sh
                .secret_event(ic.bindings.name(*f), cx.key, &req.method, &req.path, None);
        }
        ic.remember(&req.pairs);
        let mut scrub = ic.scrubber();
        if put(&mut uw, &req.head, cx, true).await.is_err() {
            break;
        }
        if let Some(b) = held {
            if put(&mut uw, &b, cx, true).await.is_err() {
                break;
            }
        } else if !sent_body(&mut cr, &mut cw, &mut uw, &req, &head, ic, cx).await {
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

/// Pass a request's body on (after its head): searched as one stream
/// with the head (atk27q F7), a coded body decoded and searched too
/// (f27t); `false` when the exchange ends.
async fn sent_body<R, C, U>(
    cr: &mut Reader<R>,
    cw: &mut C,
    uw: &mut U,
    req: &super::request::Outgoing,
    head: &[u8],
    ic: &super::Interceptor,
    cx: &Ctx<'_>,
) -> bool
where
    R: AsyncRead + Unpin,
    C: AsyncWrite + Unpin,
    U: AsyncWrite + Unpin,
{
    if req.expect_continue
        && cw
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .is_err()
    {
        return false;
    }
    let mut probe = BodyProbe::after(ic.probes(), head);
    let mut coded = req.coding.map(Coded::new);
    let filter = match coded.as_mut() {
        Some(c) => Filter::ProbeCoded(ic.probes(), &mut probe, c),
        None => Filter::Probe(ic.probes(), &mut probe),
    };
    let sent = body(cr, uw, req.framing, req.framing, filter, cx, true).await;
    if let Some(f) = probe.hit {
        let what = format!("the body of {} {}", req.method, req.path);
        refuse_probe(cw, ic, f, cx, &what).await;
        return false;
    }
    if let Some(Stopped::Refused(why)) = coded.and_then(|c| c.stopped) {
        refuse_coded(cw, &why, cx).await;
        return false;
    }
    sent.is_ok()
}
