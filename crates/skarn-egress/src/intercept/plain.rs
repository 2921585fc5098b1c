//! Plain HTTP while secrets are bound, and the bytes after an upgrade:
//! what goes up searched for pieces of a value, what comes down scrubbed.

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::body::{Filter, body};
use super::coded::{Coded, Stopped};
use super::context::Ctx;
use super::io::Reader;
use super::probe::BodyProbe;
use super::reply::refuse_coded;
use super::request::Framing;
use super::response::{Asked, Next, response};
use super::scrub::Scrubber;

/// A piece of `f`'s value went toward `cx.key` in `what`: switched off.
pub(super) fn probe_found(
    ic: &super::Interceptor,
    f: crate::secrets::Found,
    cx: &Ctx<'_>,
    what: &str,
) {
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
    let mut coded = sent.coding.map(Coded::new);
    let up = async {
        let filter = match coded.as_mut() {
            Some(c) => Filter::ProbeCoded(ic.probes(), &mut probe, c),
            None => Filter::Probe(ic.probes(), &mut probe),
        };
        let first = body(&mut cr, &mut uw, framing, framing, filter, cx, true).await;
        if let Some(Stopped::Refused(why)) = coded.as_ref().and_then(|c| c.stopped.clone()) {
            // Nothing of the answer reaches the sandbox: the refusal does.
            return Some(Some(why));
        }
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
            return Some(None);
        }
        let _ = uw.shutdown().await;
        None
    };
    let down = async {
        if let Ok(Next::Upgrade) = response(&mut ur, &mut cw, &asked, &mut scrub, cx).await {
            let mut control = ic.scrubber();
            let _ =
                super::websocket::downstream(&mut ur, &mut cw, &mut scrub, &mut control, cx).await;
        }
        let _ = cw.shutdown().await;
    };
    let refused = {
        tokio::pin!(up);
        tokio::pin!(down);
        tokio::select! {
            _ = &mut down => None,
            stopped = &mut up => match stopped {
                None => {
                    (&mut down).await;
                    None
                }
                Some(why) => why,
            },
        }
    };
    if let Some(why) = refused {
        refuse_coded(&mut cw, &why, cx).await;
    }
}

/// After `101 Switching Protocols`: bytes both ways until either side
/// ends, the upstream's WebSocket messages scrubbed
/// ([`super::websocket`]). No request heads are read any more, so no
/// placeholder is replaced on this connection from here on.
pub(super) async fn upgraded<CR, CW, UR, UW>(
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
