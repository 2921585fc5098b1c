//! Echo scrubbing: a stream filter that replaces each form of a real value
//! ([`super::forms`]) and each header value the proxy made by the same
//! form of the placeholder (same length, so `Content-Length` stays right),
//! holding back only as many bytes as an occurrence split across two reads
//! needs. One Aho-Corasick automaton (ASCII case folded) finds every
//! pattern in one pass; overlapping matches are all replaced.

use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use zeroize::Zeroizing;

pub(crate) use super::forms::Pairs;

/// The patterns of one run (rebuilt when the proxy makes a new header).
pub(crate) struct Engine {
    /// Whole values and produced headers: placed back exactly.
    whole: Option<AhoCorasick>,
    whole_with: Vec<Vec<u8>>,
    /// Windows of every form ([`super::forms`]), all overlapping matches.
    windows: Option<AhoCorasick>,
    windows_with: Vec<Vec<u8>>,
    keep: usize,
}

fn automaton(pairs: &[&(Zeroizing<Vec<u8>>, Vec<u8>)], kind: MatchKind) -> Option<AhoCorasick> {
    if pairs.is_empty() {
        return None;
    }
    let pats = || pairs.iter().map(|(a, _)| &a[..]);
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(kind)
        .kind(Some(AhoCorasickKind::DFA))
        .build(pats())
        .or_else(|_| {
            // Too large for a DFA: the slower automaton, same matches.
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(kind)
                .build(pats())
        })
        .ok()
}

fn usable(p: &Pairs) -> Vec<&(Zeroizing<Vec<u8>>, Vec<u8>)> {
    p.iter()
        .filter(|(a, b)| a.len() == b.len() && !a.is_empty())
        .collect()
}

impl Engine {
    /// From `whole` and `windows` (pattern, replacement) pairs of equal
    /// lengths.
    pub(crate) fn new(whole: &Pairs, windows: &Pairs) -> Engine {
        let (whole, windows) = (usable(whole), usable(windows));
        let keep = whole
            .iter()
            .chain(&windows)
            .map(|(r, _)| r.len())
            .max()
            .unwrap_or(1)
            .saturating_sub(1);
        Engine {
            whole: automaton(&whole, MatchKind::LeftmostLongest),
            whole_with: whole.iter().map(|(_, b)| b.clone()).collect(),
            windows: automaton(&windows, MatchKind::Standard),
            windows_with: windows.iter().map(|(_, b)| b.clone()).collect(),
            keep,
        }
    }

    /// Scrub a whole buffer in place.
    pub(crate) fn apply(&self, buf: &mut [u8]) {
        let raw = Zeroizing::new(buf.to_vec());
        self.apply_to(&raw, buf, &mut Vec::new());
    }

    /// Find the patterns in `raw`, write their replacements into `out`
    /// (as long, otherwise equal): whole values first, put back exactly;
    /// then every window (overlapping ones too, found in the unreplaced
    /// bytes) outside those and outside `done` (whole values put back
    /// by an earlier call, still partly held); `done` gains the new ones.
    fn apply_to(&self, raw: &[u8], out: &mut [u8], done: &mut Vec<(usize, usize)>) {
        if let Some(ac) = &self.whole {
            for m in ac.find_iter(raw) {
                out[m.start()..m.end()].copy_from_slice(&self.whole_with[m.pattern().as_usize()]);
                done.push((m.start(), m.end()));
            }
        }
        let Some(ac) = &self.windows else {
            return;
        };
        for m in ac.find_overlapping_iter(raw) {
            if done.iter().any(|(s, e)| m.start() < *e && *s < m.end()) {
                continue;
            }
            out[m.start()..m.end()].copy_from_slice(&self.windows_with[m.pattern().as_usize()]);
        }
    }
}

pub(crate) struct Scrubber {
    engine: Arc<Engine>,
    /// The bytes not passed on yet, as received (matched against)...
    raw: Zeroizing<Vec<u8>>,
    /// ...and with the replacements made so far.
    buf: Zeroizing<Vec<u8>>,
    /// `buf[..ready]` was handed out by the last call.
    ready: usize,
    /// Whole values put back in `buf` (windows leave them alone).
    whole: Vec<(usize, usize)>,
}

impl Scrubber {
    pub(crate) fn new(engine: Arc<Engine>) -> Scrubber {
        Scrubber {
            engine,
            raw: Zeroizing::new(Vec::new()),
            buf: Zeroizing::new(Vec::new()),
            ready: 0,
            whole: Vec::new(),
        }
    }

    /// Scrub a whole buffer in place (a response head).
    pub(crate) fn all(&self, buf: &mut [u8]) {
        self.engine.apply(buf);
    }

    /// Feed `data`; returns what may be passed on now.
    pub(crate) fn push(&mut self, data: &[u8]) -> &[u8] {
        let done = self.ready.min(self.raw.len());
        self.raw.drain(..done);
        self.buf.drain(..self.ready);
        self.raw.extend_from_slice(data);
        self.buf.extend_from_slice(data);
        let r = self.ready;
        self.whole.retain_mut(|(s, e)| {
            *s = s.saturating_sub(r);
            *e = e.saturating_sub(r);
            *e > 0
        });
        self.engine
            .apply_to(&self.raw, &mut self.buf, &mut self.whole);
        self.ready = self.buf.len().saturating_sub(self.engine.keep);
        &self.buf[..self.ready]
    }

    /// The held-back rest, at the end of a body.
    pub(crate) fn finish(&mut self) -> &[u8] {
        self.raw.clear();
        self.buf.drain(..self.ready);
        self.ready = self.buf.len();
        &self.buf[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrubber(real: &[u8], ph: &[u8]) -> Scrubber {
        let whole = vec![(Zeroizing::new(real.to_vec()), ph.to_vec())];
        Scrubber::new(Arc::new(Engine::new(
            &whole,
            &super::super::forms::pairs(real, ph),
        )))
    }

    #[test]
    fn echoes_split_anywhere_are_replaced_and_lengths_kept() {
        let body = b"xx real-secret-value yy real-secret-value".to_vec();
        for split in 0..body.len() {
            let mut s = scrubber(b"real-secret-value", b"PLACEHOLDER_12345");
            let mut out = s.push(&body[..split]).to_vec();
            out.extend_from_slice(s.push(&body[split..]));
            out.extend_from_slice(s.finish());
            assert_eq!(out, b"xx PLACEHOLDER_12345 yy PLACEHOLDER_12345", "{split}");
        }
    }

    /// Finding F1 (atk27): partial, reversed, case-changed and re-encoded
    /// echoes are scrubbed too (runs of at least `WINDOW` bytes).
    #[test]
    fn transformed_and_partial_echoes_are_replaced() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        let real = "OPENSECRETvalue_9876543210zyxwvu";
        let ph = "Xq7PLACEHOLDERaaaaaaaaaaaaaaaaaa";
        let rev: String = real.chars().rev().collect();
        let hexed: String = real.bytes().map(|b| format!("{b:02X}")).collect();
        for echo in [
            format!("Bearer {}", &real[..16]),
            format!("...{}", &real[9..23]),
            rev.clone(),
            real.to_ascii_lowercase(),
            real.to_ascii_uppercase(),
            STANDARD.encode(format!("Bearer {real}")),
            STANDARD.encode(format!("u:{real}")),
            URL_SAFE.encode(format!("xx{real}")),
            hexed,
            format!("{{\"t\":\"{}\"}}", real.replace('_', "%5F")),
        ] {
            let mut s = scrubber(real.as_bytes(), ph.as_bytes());
            let mut out = s.push(echo.as_bytes()).to_vec();
            out.extend_from_slice(s.finish());
            assert_eq!(out.len(), echo.len());
            let out = String::from_utf8_lossy(&out).to_string();
            // No run of WINDOW value bytes survives, in any form.
            let fwd = real.as_bytes();
            let dec: Vec<Vec<u8>> = vec![
                out.as_bytes().to_ascii_lowercase(),
                out.bytes().rev().collect::<Vec<u8>>().to_ascii_lowercase(),
                STANDARD
                    .decode(out.trim())
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
            ];
            for w in fwd.windows(super::super::forms::WINDOW) {
                let w = w.to_ascii_lowercase();
                for d in &dec {
                    assert!(!d.windows(w.len()).any(|x| x == w), "{echo} -> {out}");
                }
            }
        }
        // Ordinary text is untouched.
        let mut s = scrubber(real.as_bytes(), ph.as_bytes());
        let text = b"OPENSECRE is a word; value_98 is short".to_vec();
        let mut out = s.push(&text).to_vec();
        out.extend_from_slice(s.finish());
        assert_eq!(out, text);
    }

    /// Two secrets sharing text (`REAL-VALUE`, digits one the other's
    /// reverse): a whole echo of one is put back exactly, however split.
    #[test]
    fn a_whole_echo_wins_over_another_secrets_windows() {
        use super::super::forms::pairs;
        let (a, pa) = (
            b"alpha-REAL-VALUE-0123456789",
            b"alpha-QkESQTMW4tZNY4qBe3kP5",
        );
        let (b, pb) = (b"beta-REAL-VALUE-9876543210", b"beta-xxxxxxxxxxxxxxxxxxxxx");
        let whole = vec![
            (Zeroizing::new(a.to_vec()), pa.to_vec()),
            (Zeroizing::new(b.to_vec()), pb.to_vec()),
        ];
        let mut windows = pairs(a, pa);
        windows.extend(pairs(b, pb));
        let engine = Arc::new(Engine::new(&whole, &windows));
        let body = b"you sent: Bearer alpha-REAL-VALUE-0123456789 and again Bearer alpha-REAL-VALUE-0123456789\n";
        let want = b"you sent: Bearer alpha-QkESQTMW4tZNY4qBe3kP5 and again Bearer alpha-QkESQTMW4tZNY4qBe3kP5\n";
        for split in 0..body.len() {
            let mut s = Scrubber::new(engine.clone());
            let mut out = s.push(&body[..split]).to_vec();
            out.extend_from_slice(s.push(&body[split..]));
            out.extend_from_slice(s.finish());
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(want),
                "{split}"
            );
        }
    }
}
