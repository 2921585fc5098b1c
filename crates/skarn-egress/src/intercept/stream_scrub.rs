//! The echo scrubber for a byte stream that is not a response: what
//! `skarn run` hands the sandboxed command on its standard input
//! (atk27t F4: `echo "$TOKEN" | skarn run --secret s -- docker login
//! --password-stdin` gave the command the real value). Each form of a
//! granted value the response scrubber knows becomes the same form of
//! its placeholder, byte for byte the same length, so the command gets
//! the placeholder the proxy swaps back toward the value's own hosts.

use std::sync::Arc;

use zeroize::Zeroizing;

use super::{forms, scrub};
use crate::secrets::SecretSpec;

/// A stream scrubber for the values of `specs`.
pub struct StreamScrub {
    inner: scrub::Scrubber,
    /// The bytes fed and not handed out yet (as received), to tell
    /// whether what is handed out was changed.
    pending: Zeroizing<Vec<u8>>,
    replaced: bool,
}

impl StreamScrub {
    /// Whether any of `specs` has a value (then [`StreamScrub::new`] makes
    /// one): told without building the windows, so a caller can build
    /// them where the cost does not delay the command (atk27u F2).
    pub fn wanted(specs: &[SecretSpec]) -> bool {
        specs.iter().any(|s| !s.value.is_empty())
    }

    /// For the values of `specs` (`None` when none has a value). The
    /// windows go into the contiguous automaton, built many times faster
    /// than the DFA (atk27u F2: a 900-byte value's DFA cost 4 s and
    /// 200 MiB before the command started) and searching nearly as fast.
    pub fn new(specs: &[SecretSpec]) -> Option<StreamScrub> {
        let whole: scrub::Pairs = specs
            .iter()
            .filter(|s| !s.value.is_empty())
            .map(|s| {
                (
                    Zeroizing::new(s.value.as_bytes().to_vec()),
                    s.placeholder.as_bytes().to_vec(),
                )
            })
            .collect();
        if whole.is_empty() {
            return None;
        }
        let windows: scrub::Pairs = whole.iter().flat_map(|(v, p)| forms::pairs(v, p)).collect();
        let engine = scrub::Engine::new(&whole, Arc::new(scrub::Windows::for_search(&windows)));
        Some(StreamScrub {
            inner: scrub::Scrubber::new(Arc::new(engine)),
            pending: Zeroizing::new(Vec::new()),
            replaced: false,
        })
    }

    /// Feed `data`; returns what may be passed on now (a tail that could
    /// still grow into a value is held back).
    pub fn push(&mut self, data: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(data);
        let out = self.inner.push(data).to_vec();
        self.note(&out);
        out
    }

    /// The held-back rest, at the stream's end.
    pub fn finish(&mut self) -> Vec<u8> {
        let out = self.inner.finish().to_vec();
        self.note(&out);
        out
    }

    /// Whether any byte handed out so far differs from what was fed: a
    /// value (in some form) was replaced.
    pub fn replaced(&self) -> bool {
        self.replaced
    }

    fn note(&mut self, out: &[u8]) {
        let n = out.len().min(self.pending.len());
        if !self.replaced && self.pending.iter().take(n).zip(out).any(|(a, b)| a != b) {
            self.replaced = true;
        }
        self.pending.drain(..n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: &str, placeholder: &str) -> SecretSpec {
        SecretSpec {
            name: "s".into(),
            env: "TOK".into(),
            placeholder: placeholder.into(),
            value: Zeroizing::new(value.into()),
            hosts: vec!["example.test".into()],
            methods: Vec::new(),
            paths: Vec::new(),
            header: None,
        }
    }

    fn run(s: &mut StreamScrub, pieces: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in pieces {
            out.extend(s.push(p));
        }
        out.extend(s.finish());
        out
    }

    #[test]
    fn a_value_split_across_reads_becomes_its_placeholder() {
        let v = "ghp_REALvalue0123456789abcdefXYZ";
        let p = "ghp_PLACEHOLDER_0123456789abcdef";
        assert_eq!(v.len(), p.len());
        let mut s = StreamScrub::new(&[spec(v, p)]).unwrap();
        let out = run(&mut s, &[b"user\nghp_REALval", b"ue0123456789abcdefXYZ\n"]);
        assert_eq!(out, format!("user\n{p}\n").as_bytes());
        assert!(s.replaced());
    }

    #[test]
    fn text_without_a_value_passes_unchanged() {
        let v = "ghp_REALvalue0123456789abcdefXYZ";
        let p = "ghp_PLACEHOLDER_0123456789abcdef";
        let mut s = StreamScrub::new(&[spec(v, p)]).unwrap();
        let text: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let out = run(&mut s, &[&text[..70_000], &text[70_000..]]);
        assert_eq!(out, text);
        assert!(!s.replaced());
    }
}
