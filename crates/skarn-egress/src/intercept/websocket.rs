//! WebSocket messages from a bound host after `101 Switching Protocols`
//! (atk27 F3): the scrubber used to see raw frames, so a value split over
//! fragments, or inside a frame's mask or compression, came through.
//! Here each frame toward the client is parsed, its payload unmasked, the
//! payloads of a message's fragments run through one scrubber as one
//! stream (so are consecutive messages: a value split over two messages
//! is found too) and framed anew, unmasked. Control frames (close, ping,
//! pong; at most 125 bytes) are scrubbed whole, with the earlier ones as
//! context. Extensions are not offered (the proxy drops
//! `Sec-WebSocket-Extensions` from requests) and a frame with a reserved
//! bit set (`permessage-deflate`, any other extension) or an unknown
//! opcode ends the connection: every payload the client gets is plain.
//!
//! Hand-rolled rather than a WebSocket crate's codec: the proxy needs the
//! frame head only (two to fourteen bytes) and must stream payloads of
//! any size in bounded pieces; the codecs at hand read whole frames into
//! memory.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};

use super::context::{Ctx, put};
use super::io::Reader;
use super::probe::{BodyProbe, Probes};
use super::scrub::Scrubber;

/// Payload bytes read (and passed on) per step.
const STEP: usize = 64 * 1024;

/// One frame's head.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) fin: bool,
    pub(crate) opcode: u8,
    pub(crate) mask: Option<[u8; 4]>,
    pub(crate) len: u64,
}

fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

/// The head's length beyond its first two bytes.
fn rest_len(b1: u8) -> usize {
    let ext = match b1 & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    ext + if b1 & 0x80 != 0 { 4 } else { 0 }
}

/// Parse a head from its first two bytes and the rest ([`rest_len`]).
pub(crate) fn parse(b: [u8; 2], rest: &[u8]) -> io::Result<Head> {
    if b[0] & 0x70 != 0 {
        return Err(bad("a WebSocket frame uses an extension"));
    }
    let (len, used) = match b[1] & 0x7f {
        126 => (u64::from(u16::from_be_bytes([rest[0], rest[1]])), 2),
        127 => {
            let mut x = [0u8; 8];
            x.copy_from_slice(&rest[..8]);
            (u64::from_be_bytes(x), 8)
        }
        n => (u64::from(n), 0),
    };
    let mask =
        (b[1] & 0x80 != 0).then(|| [rest[used], rest[used + 1], rest[used + 2], rest[used + 3]]);
    let h = Head {
        fin: b[0] & 0x80 != 0,
        opcode: b[0] & 0x0f,
        mask,
        len,
    };
    match h.opcode {
        0..=2 => Ok(h),
        8..=10 if h.fin && h.len <= 125 => Ok(h),
        8..=10 => Err(bad("a bad WebSocket control frame")),
        _ => Err(bad("an unknown WebSocket opcode")),
    }
}

/// The next frame's head, as read and parsed; `None` at a clean end of
/// stream before it (shared by both directions).
async fn next_head<R: AsyncRead + Unpin>(r: &mut Reader<R>) -> io::Result<Option<(Vec<u8>, Head)>> {
    let Some(mut raw) = r.exact(2).await? else {
        return Ok(None);
    };
    let rest = r
        .exact(rest_len(raw[1]))
        .await?
        .ok_or(io::ErrorKind::UnexpectedEof)?;
    let h = parse([raw[0], raw[1]], &rest)?;
    raw.extend_from_slice(&rest);
    Ok(Some((raw, h)))
}

/// An unmasked frame carrying `payload`.
pub(crate) fn frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 10);
    f.push(if fin { 0x80 } else { 0 } | opcode);
    match payload.len() {
        n @ 0..=125 => f.push(n as u8),
        n @ 126..=0xffff => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

fn unmask(d: &mut [u8], mask: Option<[u8; 4]>, offset: u64) {
    if let Some(m) = mask {
        for (i, b) in d.iter_mut().enumerate() {
            *b ^= m[((offset + i as u64) % 4) as usize];
        }
    }
}

/// Pass the bound host's frames to the client, scrubbed, until the host
/// ends the stream (`Ok`) or breaks the protocol (`Err`).
pub(crate) async fn downstream<R, W>(
    ur: &mut Reader<R>,
    cw: &mut W,
    data: &mut Scrubber,
    control: &mut Scrubber,
    cx: &Ctx<'_>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // The opcode of the message being received, and whether a frame of
    // it went to the client yet.
    let mut message: Option<(u8, bool)> = None;
    loop {
        let Some((_, h)) = next_head(ur).await? else {
            return Ok(());
        };
        if h.opcode >= 8 {
            let mut p = ur
                .exact(h.len as usize)
                .await?
                .ok_or(io::ErrorKind::UnexpectedEof)?;
            unmask(&mut p, h.mask, 0);
            control.piece(&mut p);
            put(cw, &frame(true, h.opcode, &p), cx, false).await?;
            continue;
        }
        let (op, mut started) = match (h.opcode, message) {
            (0, Some(m)) => m,
            (1 | 2, None) => (h.opcode, false),
            _ => return Err(bad("WebSocket fragments out of order")),
        };
        let mut done = 0u64;
        while done < h.len {
            let mut d = ur.counted(h.len - done, STEP).await?.to_vec();
            unmask(&mut d, h.mask, done);
            done += d.len() as u64;
            let out = data.push(&d);
            if !out.is_empty() {
                let f = frame(false, if started { 0 } else { op }, out);
                put(cw, &f, cx, false).await?;
                started = true;
            }
        }
        if h.fin {
            let out = data.finish();
            let f = frame(true, if started { 0 } else { op }, out);
            put(cw, &f, cx, false).await?;
            message = None;
        } else {
            message = Some((op, started));
        }
    }
}

/// Pass the client's frames up as they are, each payload unmasked and
/// searched for pieces of a value (atk27q F7: the mask and the frame
/// heads split any window the raw bytes were searched for) in the very
/// streams [`downstream`] scrubs the echo in (atk27r F2: a ping between
/// two fragments split the search, not the scrub): the data payloads of
/// all messages as one stream (`probe`, going on from the request), the
/// control payloads as another (a ping's payload comes back in the
/// pong). `Ok(true)` when a piece was found (`probe.hit`): nothing of its
/// frame went up.
pub(crate) async fn upstream<R, W>(
    cr: &mut Reader<R>,
    uw: &mut W,
    probes: &Probes,
    probe: &mut BodyProbe,
    cx: &Ctx<'_>,
) -> io::Result<bool>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut control = BodyProbe::default();
    loop {
        let Some((head, h)) = next_head(cr).await? else {
            return Ok(false);
        };
        put(uw, &head, cx, true).await?;
        let stream = if h.opcode >= 8 {
            &mut control
        } else {
            &mut *probe
        };
        let mut done = 0u64;
        while done < h.len {
            let raw = cr.counted(h.len - done, STEP).await?.to_vec();
            let mut d = raw.clone();
            unmask(&mut d, h.mask, done);
            if !stream.pass(probes, &d) {
                probe.hit = probe.hit.or(control.hit);
                return Ok(true);
            }
            done += raw.len() as u64;
            put(uw, &raw, cx, true).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_and_frames_round_trip() {
        let f = frame(true, 1, &[b'x'; 300]);
        let h = parse([f[0], f[1]], &f[2..2 + rest_len(f[1])]).unwrap();
        assert_eq!(
            h,
            Head {
                fin: true,
                opcode: 1,
                mask: None,
                len: 300
            }
        );
        let f = frame(false, 2, &vec![0u8; 70_000]);
        let h = parse([f[0], f[1]], &f[2..2 + rest_len(f[1])]).unwrap();
        assert_eq!((h.fin, h.len), (false, 70_000));
        // Masked, 5 bytes.
        let h = parse([0x81, 0x85], &[1, 2, 3, 4]).unwrap();
        assert_eq!(h.mask, Some([1, 2, 3, 4]));
        let mut d = *b"hello";
        unmask(&mut d, h.mask, 0);
        unmask(&mut d, h.mask, 0);
        assert_eq!(&d, b"hello");
        // A reserved bit (permessage-deflate's RSV1), an unknown opcode, a
        // long or fragmented control frame: refused.
        assert!(parse([0xc1, 0x05], &[]).is_err());
        assert!(parse([0x83, 0x05], &[]).is_err());
        assert!(parse([0x89, 126], &[0, 200]).is_err());
        assert!(parse([0x09, 0x05], &[]).is_err());
    }
}
