//! A message body on its way through an intercepted connection: read with
//! its framing, passed through the filter (decoding, scrubbing), written
//! with the outgoing framing, every write counted.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::coded::{Coded, Stopped};
use super::context::{Ctx, put};
use super::decode::{DecodeError, Decoder};
use super::io::{Reader, chunk_size};
use super::probe::{BodyProbe, Probes};
use super::request::Framing;
use super::scrub::Scrubber;

/// What a body passes through on its way.
pub(super) enum Filter<'a> {
    Scrub(&'a mut Scrubber),
    Decode(&'a mut Decoder, &'a mut Scrubber),
    /// What the sandbox sends: stopped at a piece of a value (atk27o F8).
    Probe(&'a Probes, &'a mut BodyProbe),
    /// The same for a body in a content coding: the raw bytes searched
    /// and sent on, the decoded stream searched too ([`super::coded`]).
    ProbeCoded(&'a Probes, &'a mut BodyProbe, &'a mut Coded),
}

/// Where filtered bytes go: raw, or each piece as one chunk (one write,
/// so one TLS record run per piece).
async fn emit<W: AsyncWrite + Unpin>(
    w: &mut W,
    d: &[u8],
    chunked: bool,
    frame: &mut Vec<u8>,
    cx: &Ctx<'_>,
    out: bool,
) -> io::Result<()> {
    if d.is_empty() {
        return Ok(());
    }
    if !chunked {
        return put(w, d, cx, out).await;
    }
    frame.clear();
    frame.extend_from_slice(format!("{:x}\r\n", d.len()).as_bytes());
    frame.extend_from_slice(d);
    frame.extend_from_slice(b"\r\n");
    put(w, frame, cx, out).await
}

/// A coded body stopped: a probe found in it is the body's hit.
fn stopped(p: &mut BodyProbe, s: Stopped) -> io::Error {
    match s {
        Stopped::Probe(f) => {
            p.hit = Some(f);
            io::Error::other("a piece of a secret's value")
        }
        Stopped::Refused(why) => io::Error::other(why),
    }
}

fn undecodable(e: DecodeError) -> io::Error {
    io::Error::other(e.0)
}

impl Filter<'_> {
    /// Pass `d` through the filter to `w`.
    async fn pass<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut W,
        d: &[u8],
        chunked: bool,
        frame: &mut Vec<u8>,
        cx: &Ctx<'_>,
        out: bool,
    ) -> io::Result<()> {
        match self {
            Filter::Probe(probes, p) => {
                if !p.pass(probes, d) {
                    return Err(io::Error::other("a piece of a secret's value"));
                }
                emit(w, d, chunked, frame, cx, out).await
            }
            Filter::ProbeCoded(probes, p, c) => {
                if !p.pass(probes, d) {
                    return Err(io::Error::other("a piece of a secret's value"));
                }
                let go = c.pass(probes, d).map_err(|s| stopped(p, s))?;
                emit(w, &go, chunked, frame, cx, out).await
            }
            Filter::Scrub(s) => emit(w, s.push(d), chunked, frame, cx, out).await,
            Filter::Decode(dec, s) => {
                let mut rest = d;
                loop {
                    let (n, o) = dec.step(rest).map_err(undecodable)?;
                    rest = &rest[n..];
                    if n == 0 && o.is_empty() {
                        if rest.is_empty() {
                            return Ok(());
                        }
                        return Err(io::Error::other("the decoder made no progress"));
                    }
                    emit(w, s.push(&o), chunked, frame, cx, out).await?;
                }
            }
        }
    }

    /// The end of the body: what the filter still holds.
    async fn finish<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut W,
        chunked: bool,
        frame: &mut Vec<u8>,
        cx: &Ctx<'_>,
        out: bool,
    ) -> io::Result<()> {
        match self {
            Filter::Probe(..) => Ok(()),
            Filter::ProbeCoded(probes, p, c) => {
                let go = c.finish(probes).map_err(|s| stopped(p, s))?;
                emit(w, &go, chunked, frame, cx, out).await
            }
            Filter::Scrub(s) => emit(w, s.finish(), chunked, frame, cx, out).await,
            Filter::Decode(dec, s) => {
                let o = dec.finish().map_err(undecodable)?;
                emit(w, s.push(&o), chunked, frame, cx, out).await?;
                emit(w, s.finish(), chunked, frame, cx, out).await
            }
        }
    }
}

/// Pass a body read with framing `inf` on with framing `outf` (the same,
/// or chunked/until-close for a decoded one), through `filter`.
pub(super) async fn body<R, W>(
    r: &mut Reader<R>,
    w: &mut W,
    inf: Framing,
    outf: Framing,
    mut filter: Filter<'_>,
    cx: &Ctx<'_>,
    out: bool,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    const STEP: usize = 256 * 1024;
    let chunked = outf == Framing::Chunked;
    let mut frame = Vec::new();
    let mut left = match inf {
        Framing::Length(n) => n,
        _ => u64::MAX,
    };
    loop {
        let want = match inf {
            Framing::Chunked => {
                let line = r.line().await?;
                let n = chunk_size(&line).ok_or_else(|| io::Error::other("bad chunk size"))?;
                if n == 0 {
                    // Trailers are dropped.
                    while !r.line().await?.is_empty() {}
                    break;
                }
                n
            }
            _ if left == 0 => break,
            _ => left,
        };
        let mut this = want;
        while this > 0 {
            let d = if inf == Framing::UntilClose {
                let d = r.some_ref(STEP).await?;
                if d.is_empty() {
                    left = 0;
                    break;
                }
                d
            } else {
                r.counted(this, STEP).await?
            };
            this -= d.len() as u64;
            if inf != Framing::Chunked {
                left -= d.len() as u64;
            }
            filter.pass(w, d, chunked, &mut frame, cx, out).await?;
        }
        if inf == Framing::Chunked && !r.line().await?.is_empty() {
            return Err(io::Error::other("chunk data longer than its size"));
        }
    }
    filter.finish(w, chunked, &mut frame, cx, out).await?;
    if chunked {
        put(w, b"0\r\n\r\n", cx, out).await?;
    }
    // A TLS stream holds what did not fit in the socket until the next
    // write or a flush: the body's end must not wait for the next
    // exchange (a fast response's tail stayed in the proxy, the client
    // waiting for it: found by the issue-27 bench).
    w.flush().await
}
