//! Content codings of a bound host's response, decoded so the scrubber
//! sees the bytes the client will see (finding F1: a compressed echo of
//! the value passed unscrubbed). The proxy asks for `identity`; a host that
//! compresses anyway gets its body decoded here, in bounded steps: at most
//! [`IN_STEP`] compressed bytes (gzip/deflate: at most about 1 MiB out, the
//! format's ratio bound) or [`OUT_STEP`] decoded bytes (brotli) per step,
//! each passed on before the next; zstd (s27b) like brotli, its window
//! at most [`ZSTD_WINDOW_LOG`] (a frame asking for more does not decode).
//! Codings the proxy cannot decode (`compress`, two codings stacked) are
//! refused by the caller.

use std::io::Write;

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::write::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// Compressed bytes fed to a gzip/deflate decoder per step.
const IN_STEP: usize = 1024;
/// Decoded bytes a brotli or zstd step yields at most.
const OUT_STEP: usize = 256 * 1024;
/// The largest zstd window accepted (8 MiB: what the format's own
/// decoders take by default for a frame of unknown size).
const ZSTD_WINDOW_LOG: u32 = 23;

/// A coding the proxy can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Gzip,
    Deflate,
    Br,
    Zstd,
}

/// The one coding to undo for a response with these `Transfer-Encoding`
/// and `Content-Encoding` values (lower-case); `Err` when it cannot be
/// undone. The error carries nothing of the header text: that is upstream
/// bytes, and the proxy's own messages never copy them (atk27 F1).
pub(crate) fn coding_of(te: &[String], ce: &[String]) -> Result<Option<Coding>, UnknownCoding> {
    let mut all: Vec<&str> = te
        .iter()
        .chain(ce)
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty() && *c != "identity")
        .collect();
    // The final `chunked` of Transfer-Encoding is framing, not a coding.
    let chunked = te
        .iter()
        .any(|v| v.rsplit(',').next().map(str::trim) == Some("chunked"));
    if chunked && let Some(i) = all.iter().rposition(|c| *c == "chunked") {
        all.remove(i);
    }
    match all.as_slice() {
        [] => Ok(None),
        ["gzip" | "x-gzip"] => Ok(Some(Coding::Gzip)),
        ["deflate"] => Ok(Some(Coding::Deflate)),
        ["br"] => Ok(Some(Coding::Br)),
        ["zstd"] => Ok(Some(Coding::Zstd)),
        _ => Err(UnknownCoding),
    }
}

/// A response coding (or a stack of codings) the proxy cannot undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnknownCoding;

/// Why decoding stopped.
#[derive(Debug)]
pub(crate) struct DecodeError(pub(crate) String);

enum Inner {
    Gzip(MultiGzDecoder<Vec<u8>>),
    Zlib(ZlibDecoder<Vec<u8>>),
    Raw(DeflateDecoder<Vec<u8>>),
    /// `deflate` before its first two bytes tell zlib from raw deflate.
    Sniff(Vec<u8>),
    Br(
        Box<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>,
        bool,
    ),
    /// The decoder and whether its last frame is complete.
    Zstd(Option<Box<zstd::stream::raw::Decoder<'static>>>, bool),
}

/// A streaming decoder for one response body.
pub(crate) struct Decoder {
    inner: Inner,
    buf: Vec<u8>,
}

fn bad(e: impl std::fmt::Display) -> DecodeError {
    DecodeError(format!("undecodable response body: {e}"))
}

impl Decoder {
    pub(crate) fn new(c: Coding) -> Decoder {
        let inner = match c {
            Coding::Gzip => Inner::Gzip(MultiGzDecoder::new(Vec::new())),
            Coding::Deflate => Inner::Sniff(Vec::new()),
            Coding::Br => Inner::Br(
                Box::new(BrotliState::new(
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                )),
                false,
            ),
            Coding::Zstd => Inner::Zstd(zstd_decoder().map(Box::new), true),
        };
        Decoder {
            inner,
            buf: Vec::new(),
        }
    }

    /// One step over `input`: how many of its bytes were used and what
    /// came out (either may be zero, not both unless `input` is empty).
    pub(crate) fn step(&mut self, input: &[u8]) -> Result<(usize, Vec<u8>), DecodeError> {
        if let Inner::Sniff(seen) = &mut self.inner {
            let take = input.len().min(2 - seen.len().min(2));
            seen.extend_from_slice(&input[..take]);
            if seen.len() < 2 {
                return Ok((take, Vec::new()));
            }
            let head = std::mem::take(seen);
            let zlib =
                head[0] & 0x0f == 8 && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0;
            self.inner = if zlib {
                Inner::Zlib(ZlibDecoder::new(Vec::new()))
            } else {
                Inner::Raw(DeflateDecoder::new(Vec::new()))
            };
            let out = self.flate(&head)?;
            return Ok((take, out));
        }
        if let Inner::Br(..) = self.inner {
            return self.brotli(input);
        }
        if let Inner::Zstd(..) = self.inner {
            return self.zstd(input);
        }
        let n = input.len().min(IN_STEP);
        let out = self.flate(&input[..n])?;
        Ok((n, out))
    }

    fn flate(&mut self, input: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let out = match &mut self.inner {
            Inner::Gzip(d) => {
                d.write_all(input).map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            Inner::Zlib(d) => {
                d.write_all(input).map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            Inner::Raw(d) => {
                d.write_all(input).map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            _ => Vec::new(),
        };
        Ok(out)
    }

    fn brotli(&mut self, input: &[u8]) -> Result<(usize, Vec<u8>), DecodeError> {
        let Inner::Br(st, done) = &mut self.inner else {
            return Ok((0, Vec::new()));
        };
        if *done {
            // Bytes after the end of the stream are dropped.
            return Ok((input.len(), Vec::new()));
        }
        self.buf.resize(OUT_STEP, 0);
        let (mut avail_in, mut in_off) = (input.len(), 0);
        let (mut avail_out, mut out_off, mut total) = (OUT_STEP, 0, 0);
        let r = BrotliDecompressStream(
            &mut avail_in,
            &mut in_off,
            input,
            &mut avail_out,
            &mut out_off,
            &mut self.buf,
            &mut total,
            st,
        );
        match r {
            BrotliResult::ResultFailure => Err(bad("brotli stream is corrupt")),
            BrotliResult::ResultSuccess => {
                *done = true;
                Ok((input.len(), self.buf[..out_off].to_vec()))
            }
            BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => {
                Ok((in_off, self.buf[..out_off].to_vec()))
            }
        }
    }

    fn zstd(&mut self, input: &[u8]) -> Result<(usize, Vec<u8>), DecodeError> {
        use zstd::stream::raw::Operation;
        let Inner::Zstd(d, complete) = &mut self.inner else {
            return Ok((0, Vec::new()));
        };
        let d = d
            .as_mut()
            .ok_or_else(|| bad("the zstd decoder did not start"))?;
        self.buf.resize(OUT_STEP, 0);
        let s = d.run_on_buffers(input, &mut self.buf).map_err(bad)?;
        if s.bytes_read > 0 || s.bytes_written > 0 {
            // `remaining` 0: a frame just ended and is flushed (more
            // frames may follow).
            *complete = s.remaining == 0;
        }
        Ok((s.bytes_read, self.buf[..s.bytes_written].to_vec()))
    }

    /// The end of the body: the rest of the output; an error when the
    /// compressed stream was cut short.
    pub(crate) fn finish(&mut self) -> Result<Vec<u8>, DecodeError> {
        let out = match &mut self.inner {
            Inner::Gzip(d) => {
                d.try_finish().map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            Inner::Zlib(d) => {
                d.try_finish().map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            Inner::Raw(d) => {
                d.try_finish().map_err(bad)?;
                std::mem::take(d.get_mut())
            }
            Inner::Sniff(s) if s.is_empty() => Vec::new(),
            Inner::Sniff(_) => return Err(bad("deflate stream cut short")),
            Inner::Br(_, true) => Vec::new(),
            Inner::Br(_, false) => return Err(bad("brotli stream cut short")),
            Inner::Zstd(_, true) => Vec::new(),
            Inner::Zstd(_, false) => return Err(bad("zstd stream cut short")),
        };
        Ok(out)
    }
}

/// A zstd decoder whose window is bounded.
fn zstd_decoder() -> Option<zstd::stream::raw::Decoder<'static>> {
    use zstd::stream::raw::{DParameter, Decoder};
    let mut d = Decoder::new().ok()?;
    d.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG))
        .ok()?;
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(c: Coding, data: &[u8]) -> Vec<u8> {
        let mut d = Decoder::new(c);
        let mut out = Vec::new();
        // Fed in odd pieces, as reads arrive.
        for piece in data.chunks(7) {
            let mut rest = piece;
            loop {
                let (n, o) = d.step(rest).unwrap();
                out.extend_from_slice(&o);
                rest = &rest[n..];
                if rest.is_empty() && o.is_empty() {
                    break;
                }
            }
        }
        out.extend_from_slice(&d.finish().unwrap());
        out
    }

    #[test]
    fn gzip_and_both_deflates_decode_in_pieces() {
        use flate2::Compression;
        use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
        let text = b"the value is real-secret-value, twice: real-secret-value".repeat(50);
        let mut g = GzEncoder::new(Vec::new(), Compression::default());
        g.write_all(&text).unwrap();
        assert_eq!(decode_all(Coding::Gzip, &g.finish().unwrap()), text);
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&text).unwrap();
        assert_eq!(decode_all(Coding::Deflate, &z.finish().unwrap()), text);
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&text).unwrap();
        assert_eq!(decode_all(Coding::Deflate, &r.finish().unwrap()), text);
    }

    #[test]
    fn a_bomb_comes_out_in_bounded_steps_and_cut_streams_fail() {
        use flate2::Compression;
        use flate2::write::GzEncoder;
        let mut g = GzEncoder::new(Vec::new(), Compression::best());
        g.write_all(&vec![0u8; 64 << 20]).unwrap();
        let z = g.finish().unwrap();
        let mut d = Decoder::new(Coding::Gzip);
        let mut rest = &z[..];
        let mut total = 0usize;
        while !rest.is_empty() {
            let (n, o) = d.step(rest).unwrap();
            assert!(o.len() <= 2 << 20, "{}", o.len());
            total += o.len();
            rest = &rest[n..];
        }
        total += d.finish().unwrap().len();
        assert_eq!(total, 64 << 20);
        let mut d = Decoder::new(Coding::Gzip);
        let _ = d.step(&z[..z.len() / 2]).unwrap();
        assert!(d.finish().is_err());
        let mut d = Decoder::new(Coding::Br);
        assert!(d.finish().is_err());
    }

    /// s27b: zstd decodes in pieces, in bounded steps; a cut stream and a
    /// frame asking for a window past the bound fail.
    #[test]
    fn zstd_decodes_in_pieces_and_bounds_its_window() {
        let text = b"the value is real-secret-value, twice: real-secret-value".repeat(50);
        let z = zstd::encode_all(&text[..], 3).unwrap();
        assert_eq!(decode_all(Coding::Zstd, &z), text);
        let mut two = z.clone();
        two.extend_from_slice(&z);
        assert_eq!(decode_all(Coding::Zstd, &two), text.repeat(2));
        let mut d = Decoder::new(Coding::Zstd);
        let _ = d.step(&z[..z.len() / 2]).unwrap();
        assert!(d.finish().is_err());
        // A frame written with a 128 MiB window (streamed: its size is
        // not in the header, so the window is what it declares).
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
        e.set_parameter(zstd::stream::raw::CParameter::WindowLog(27))
            .unwrap();
        e.write_all(&text).unwrap();
        let big = e.finish().unwrap();
        let mut d = Decoder::new(Coding::Zstd);
        let mut rest = &big[..];
        let mut failed = false;
        while !rest.is_empty() {
            match d.step(rest) {
                Ok((n, o)) => {
                    assert!(o.len() <= OUT_STEP);
                    rest = &rest[n..];
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        assert!(failed, "a 128 MiB window was accepted");
    }

    #[test]
    fn codings() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(coding_of(&s(&["chunked"]), &[]), Ok(None));
        assert_eq!(coding_of(&[], &s(&["identity"])), Ok(None));
        assert_eq!(coding_of(&[], &s(&["gzip"])), Ok(Some(Coding::Gzip)));
        assert_eq!(
            coding_of(&s(&["gzip, chunked"]), &[]),
            Ok(Some(Coding::Gzip))
        );
        assert_eq!(coding_of(&[], &s(&["br"])), Ok(Some(Coding::Br)));
        assert_eq!(coding_of(&[], &s(&["zstd"])), Ok(Some(Coding::Zstd)));
        assert!(coding_of(&[], &s(&["compress"])).is_err());
        assert!(coding_of(&s(&["gzip, chunked"]), &s(&["gzip"])).is_err());
        assert!(coding_of(&[], &s(&["gzip, deflate"])).is_err());
    }
}
