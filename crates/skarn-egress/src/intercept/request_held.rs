//! The body of a request carrying a method- or path-bound secret, read
//! whole before its head goes up (s27b, [`super::request_body`]): searched
//! for probes as any body, decoded if coded, judged for a `_method` name;
//! refused (said to the client, recorded for the report) when it names one
//! or is larger than the bound. Nothing of the request has gone up then.

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::body::{Filter, body};
use super::coded::{Coded, Stopped};
use super::context::Ctx;
use super::io::Reader;
use super::plain::probe_found;
use super::probe::BodyProbe;
use super::reply::{answer, refuse_coded};
use super::request::{Framing, Outgoing};
use super::request_body::{Held, MAX_HELD, busy, charset_refusal, judged, too_big};
use crate::secrets::Found;

/// The longest a held body may take to arrive in all (atk27t F5: a
/// trickling request holds its share of the budget no longer than this).
const HOLD_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// The body framed as the head announces it, or `None` when the request
/// was refused (the client answered).
pub(super) async fn hold<R, C>(
    cr: &mut Reader<R>,
    cw: &mut C,
    req: &Outgoing,
    head: &[u8],
    f: Found,
    ic: &super::Interceptor,
    cx: &Ctx<'_>,
) -> Option<Vec<u8>>
where
    R: AsyncRead + Unpin,
    C: AsyncWrite + Unpin,
{
    let refuse = async |cw: &mut C, status: &str, why: &str| {
        let name = ic.bindings.name(f);
        cx.sh
            .secret_event(name, cx.key, &req.method, &req.path, Some(why));
        let msg = format!(
            "skarn: secret {name} was not sent to {} ({} {}): {why}\n",
            cx.key, req.method, req.path
        );
        answer(cw, status, &msg).await;
    };
    if matches!(req.framing, Framing::Length(n) if n > MAX_HELD as u64) {
        refuse(cw, "413 Content Too Large", &too_big()).await;
        return None;
    }
    if req.expect_continue
        && cw
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .is_err()
    {
        return None;
    }
    if let Some(why) = charset_refusal(&req.head) {
        refuse(cw, "415 Unsupported Media Type", &why).await;
        return None;
    }
    // The budget is taken as bytes arrive, not when a length is announced
    // (atk27t F5): an idle request holds none of it.
    let mut held = Held::default();
    let mut probe = BodyProbe::after(ic.probes(), head);
    let mut coded = req.coding.map(Coded::new);
    let filter = match coded.as_mut() {
        Some(c) => Filter::ProbeCoded(ic.probes(), &mut probe, c),
        None => Filter::Probe(ic.probes(), &mut probe),
    };
    let got = tokio::time::timeout(
        HOLD_DEADLINE,
        body(
            cr,
            &mut held,
            req.framing,
            Framing::UntilClose,
            filter,
            cx,
            true,
        ),
    )
    .await;
    let Ok(got) = got else {
        let why = format!(
            "the request body did not arrive within {} s (it is held before a method- or \
             path-bound secret goes): refused",
            HOLD_DEADLINE.as_secs()
        );
        refuse(cw, "408 Request Timeout", &why).await;
        return None;
    };
    if let Some(p) = probe.hit {
        let what = format!("the body of {} {}", req.method, req.path);
        refuse_probe(cw, ic, p, cx, &what).await;
        return None;
    }
    if let Some(Stopped::Refused(why)) = coded.and_then(|c| c.stopped) {
        refuse_coded(cw, &why, cx).await;
        return None;
    }
    if held.busy {
        refuse(cw, "503 Service Unavailable", &busy()).await;
        return None;
    }
    if held.over {
        refuse(cw, "413 Content Too Large", &too_big()).await;
        return None;
    }
    got.ok()?;
    // Judged raw and decoded (atk27t F3), off the async threads (F8).
    let (raw, lease, verdict) = judged(req.coding, held.data, held.lease).await;
    if let Err((status, why)) = verdict {
        refuse(cw, status, &why).await;
        return None;
    }
    drop(lease);
    Some(match req.framing {
        Framing::Chunked if raw.is_empty() => b"0\r\n\r\n".to_vec(),
        Framing::Chunked => {
            // Framed in place (no second copy of the body).
            let mut c = raw;
            let size = format!("{:x}\r\n", c.len()).into_bytes();
            c.splice(0..0, size);
            c.extend_from_slice(b"\r\n0\r\n\r\n");
            c
        }
        _ => raw,
    })
}

/// A request carrying a piece of secret `f`'s value (`what`): refused,
/// the secret switched off, the event recorded.
pub(super) async fn refuse_probe<W: AsyncWrite + Unpin>(
    cw: &mut W,
    ic: &super::Interceptor,
    f: crate::secrets::Found,
    cx: &Ctx<'_>,
    what: &str,
) {
    probe_found(ic, f, cx, what);
    let name = ic.bindings.name(f);
    answer(cw, "403 Forbidden", &super::probe_refusal(name)).await;
}
