//! The echo scrubber as a stream filter ([`super`]): what it keeps of
//! earlier reads, what it holds back, what it passes on.

use std::sync::Arc;

use zeroize::Zeroizing;

use super::Engine;

pub(crate) struct Scrubber {
    engine: Arc<Engine>,
    /// The bytes kept, as received (matched against)...
    raw: Zeroizing<Vec<u8>>,
    /// ...and with the replacements made so far.
    buf: Zeroizing<Vec<u8>>,
    /// `buf[..sent]` was handed out already: kept (up to the hold-back
    /// length) as context, so an occurrence split across two bodies or
    /// messages of one stream is found too; its rest is replaced.
    sent: usize,
    /// Whole values put back in `buf` (windows leave them alone).
    whole: Vec<(usize, usize)>,
    /// The differential test's and the bench's reference: the full
    /// search on every push (never set on the proxy's path).
    full: bool,
}

impl Scrubber {
    pub(crate) fn new(engine: Arc<Engine>) -> Scrubber {
        Scrubber {
            engine,
            raw: Zeroizing::new(Vec::new()),
            buf: Zeroizing::new(Vec::new()),
            sent: 0,
            whole: Vec::new(),
            full: false,
        }
    }

    /// A scrubber that runs the full search on every push (no sieve).
    pub(crate) fn reference(engine: Arc<Engine>) -> Scrubber {
        Scrubber {
            full: true,
            ..Scrubber::new(engine)
        }
    }

    /// Scrub a whole buffer in place (a response head).
    pub(crate) fn all(&self, buf: &mut [u8]) {
        self.engine.apply(buf);
    }

    /// Feed `data`; returns what may be passed on now.
    pub(crate) fn push(&mut self, data: &[u8]) -> &[u8] {
        let drop = self.sent.saturating_sub(self.engine.keep);
        if drop > 0 {
            self.raw.drain(..drop);
            self.buf.drain(..drop);
            self.sent -= drop;
            self.whole.retain_mut(|(s, e)| {
                *s = s.saturating_sub(drop);
                *e = e.saturating_sub(drop);
                *e > 0
            });
        }
        self.raw.extend_from_slice(data);
        self.buf.extend_from_slice(data);
        if self.full {
            self.engine
                .apply_full(&self.raw, &mut self.buf, &mut self.whole);
        } else {
            self.engine
                .apply_to(&self.raw, &mut self.buf, &mut self.whole);
        }
        let start = self.sent;
        let hold = self.engine.hold(&self.raw);
        self.sent = self.buf.len().saturating_sub(hold).max(start);
        &self.buf[start..self.sent]
    }

    /// The held-back rest, at the end of a body or message (the stream
    /// goes on: what was sent stays as context for the next).
    pub(crate) fn finish(&mut self) -> &[u8] {
        let start = self.sent;
        self.sent = self.buf.len();
        &self.buf[start..]
    }

    /// Scrub one whole piece (a WebSocket control frame's payload) in
    /// place, with what this scrubber saw before as context.
    pub(crate) fn piece(&mut self, data: &mut [u8]) {
        let mut out = self.push(data).to_vec();
        out.extend_from_slice(self.finish());
        data.copy_from_slice(&out);
    }
}
