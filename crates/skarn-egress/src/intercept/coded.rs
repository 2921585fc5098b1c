//! Request bodies in a content coding while secrets are bound (f27t):
//! the probe lock-out (ADR 0314) searched a `Content-Encoding: gzip`
//! body as sent, so a piece of a value compressed in it went up unseen.
//! Here the body is decoded as it passes ([`super::decode`], in bounded
//! steps), the decoded stream searched like an ordinary body, and the
//! raw bytes sent on unchanged, the last [`HOLD`] of them held back until
//! the decoder has seen what follows (a window's last bits may come out
//! only with the next bytes). The body is searched as a stream, so its
//! size has no bound of its own (s27b); the work per coded byte has: a
//! body that decodes to more than [`MAX_DECODED`] bytes plus [`RATIO`]
//! times its coded size (a bomb), does not decode, or comes in a coding
//! the proxy cannot undo (`compress`, two codings stacked) is refused:
//! fail closed, the reason in the refusal and the run's report.

use super::decode::{Coding, Decoder, coding_of};
use super::probe::{BodyProbe, Probes};
use crate::secrets::Found;

/// What a request body may decode to beyond [`RATIO`] times its coded
/// size (a compression bomb stops here).
pub(crate) const MAX_DECODED: u64 = 64 << 20;
/// Decoded bytes allowed per coded byte past [`MAX_DECODED`]: ordinary
/// uploads compress far less; a bomb far more.
pub(crate) const RATIO: u64 = 128;
/// Raw bytes held back until the decoder has read past them.
const HOLD: usize = 256;

/// Why a request with a coded body is refused (said to the client, kept
/// for the report).
pub(crate) const UNKNOWN_CODING: &str = "a request body in a content coding other than gzip, \
     deflate, br or zstd (or in several stacked) is refused while secrets are bound: the \
     proxy decodes the body to search it for pieces of a secret's value; send it \
     uncompressed";

/// The coding of a request body from its `Content-Encoding` values
/// (lower-case); `Err` when the proxy cannot undo it.
pub(crate) fn request_coding(ce: &[String]) -> Result<Option<Coding>, &'static str> {
    coding_of(&[], ce).map_err(|_| UNKNOWN_CODING)
}

/// How a coded body ended its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// A piece of a value in the decoded stream.
    Probe(Found),
    /// Refused: the message for the client and the report.
    Refused(String),
}

/// The decoding search of one request body.
pub(crate) struct Coded {
    dec: Decoder,
    search: BodyProbe,
    total: u64,
    /// Coded bytes read.
    coded: u64,
    held: Vec<u8>,
    pub(crate) stopped: Option<Stopped>,
}

fn bomb() -> String {
    format!(
        "the request body decodes to more than {} MiB plus {RATIO} times its coded size: \
         refused while secrets are bound (the proxy searches every decoded byte for pieces \
         of a secret's value, and a compression bomb stops here); send it uncompressed",
        MAX_DECODED >> 20
    )
}

impl Coded {
    pub(crate) fn new(c: Coding) -> Coded {
        Coded {
            dec: Decoder::new(c),
            search: BodyProbe::default(),
            total: 0,
            coded: 0,
            held: Vec::new(),
            stopped: None,
        }
    }

    fn stop(&mut self, s: Stopped) -> Option<Stopped> {
        self.stopped = Some(s.clone());
        Some(s)
    }

    /// Search what `out` adds to the decoded stream.
    fn searched(&mut self, probes: &Probes, out: &[u8]) -> Option<Stopped> {
        self.total += out.len() as u64;
        if self.total > MAX_DECODED.saturating_add(self.coded.saturating_mul(RATIO)) {
            return self.stop(Stopped::Refused(bomb()));
        }
        if !self.search.pass(probes, out) {
            let f = self.search.hit.unwrap_or(Found(0));
            return self.stop(Stopped::Probe(f));
        }
        None
    }

    /// Decode and search `d`; the raw bytes that may go up now (`Err`:
    /// nothing more goes up).
    pub(crate) fn pass(&mut self, probes: &Probes, d: &[u8]) -> Result<Vec<u8>, Stopped> {
        if let Some(s) = &self.stopped {
            return Err(s.clone());
        }
        let mut rest = d;
        loop {
            let (n, o) = match self.dec.step(rest) {
                Ok(x) => x,
                Err(e) => return Err(self.undecodable(&e.0)),
            };
            rest = &rest[n..];
            self.coded += n as u64;
            if let Some(s) = self.searched(probes, &o) {
                return Err(s);
            }
            if n == 0 && o.is_empty() {
                if rest.is_empty() {
                    break;
                }
                return Err(self.undecodable("the decoder made no progress"));
            }
        }
        self.held.extend_from_slice(d);
        let go = self.held.len().saturating_sub(HOLD);
        Ok(self.held.drain(..go).collect())
    }

    /// The end of the body: the decoder's last output searched; the raw
    /// bytes still held.
    pub(crate) fn finish(&mut self, probes: &Probes) -> Result<Vec<u8>, Stopped> {
        if let Some(s) = &self.stopped {
            return Err(s.clone());
        }
        let o = match self.dec.finish() {
            Ok(o) => o,
            Err(e) => return Err(self.undecodable(&e.0)),
        };
        if let Some(s) = self.searched(probes, &o) {
            return Err(s);
        }
        Ok(std::mem::take(&mut self.held))
    }

    fn undecodable(&mut self, why: &str) -> Stopped {
        let s = Stopped::Refused(format!(
            "the request body does not decode in its content coding ({}): refused while \
             secrets are bound",
            why.trim_start_matches("undecodable response body: ")
        ));
        self.stopped = Some(s.clone());
        s
    }
}
