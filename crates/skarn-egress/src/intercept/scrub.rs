//! Echo scrubbing: a stream filter that replaces each form of a real value
//! ([`super::forms`]) and each header value the proxy made by the same
//! form of the placeholder (same length, so `Content-Length` stays right),
//! holding back only as many bytes as an occurrence split across two reads
//! needs. One Aho-Corasick automaton (ASCII case folded) finds every
//! window in one pass; overlapping matches are all replaced.
//!
//! Escaped text is searched too ([`super::unescape`]): JSON string escapes
//! (`\"`, `\\`, `\n`, `\uXXXX` for any character, surrogate pairs) and
//! `%XX` are decoded into a shadow copy, the windows searched there, and
//! each escape inside a match rewritten in place, as long as it was, to
//! carry the placeholder's byte (atk27 F13).
//!
//! The windows' automaton is built once per run; only the small automaton
//! of whole values and produced headers is rebuilt when the proxy makes a
//! new header, and its input is bounded (atk27 F4).
//!
//! Only a tail that could still grow into a match is held back: every
//! byte of a match (raw, or of the escapes decoded into one) is a byte of
//! some pattern in either ASCII case or a byte of escape syntax, so the
//! tail after the last byte outside that set is all that is held. A
//! streamed response (server-sent events, a line per token) ends each
//! piece with a newline, which no value holds: each piece is passed on
//! as it arrives, not when the response ends (atk27j F8).

use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use zeroize::Zeroizing;

pub(crate) use super::forms::Pairs;
use super::unescape::{ESCAPE_MAX, Shadow, may_decode_at, named_decode_to, rewrite};
use byte_class::ByteClass;
use matcher::{Matcher, WindowSet};
use may_match::MayMatch;
use sieve::Sieve;
pub(crate) use stream::Scrubber;

/// The windows of every form of every value: built once per run.
pub(crate) struct Windows {
    ac: Option<Matcher>,
    with: Vec<Vec<u8>>,
    longest: usize,
    /// The bytes a match can be made of (see [`MayMatch`]).
    bytes: MayMatch,
    /// The patterns' bytes alone (either ASCII case): an escape that
    /// decodes to none of them is never inside a match ([`around`]).
    pat: MayMatch,
    /// The same, tested 64 bytes at a time ([`stretch`]).
    pat_class: ByteClass,
    /// Whether a named HTML reference decodes to one of them.
    named: bool,
    /// `\\`, `%` and `&`: where an escape may start.
    escape_starts: ByteClass,
    /// The bytes of raw text a match can span ([`stretch`]).
    class: ByteClass,
    shortest: usize,
    /// Where the automaton needs to run ([`sieve`]).
    sieve: Option<Sieve>,
}

impl Windows {
    pub(crate) fn new(pairs: &Pairs) -> Windows {
        Windows::of_kind(pairs, AhoCorasickKind::DFA)
    }

    /// For a yes/no search made once per run start (the check of files
    /// and variables): the contiguous automaton, built many times faster
    /// than the DFA (thousands of windows: the DFA's build was most of a
    /// run's start-up) and searching nearly as fast.
    pub(crate) fn for_search(pairs: &Pairs) -> Windows {
        Windows::of_kind(pairs, AhoCorasickKind::ContiguousNFA)
    }

    fn of_kind(pairs: &Pairs, kind: AhoCorasickKind) -> Windows {
        let p = usable(pairs);
        let (mut bytes, mut pat) = (MayMatch::escapes(), MayMatch::none());
        let mut class = MayMatch::syntax();
        for (a, _) in &p {
            bytes.add(a);
            pat.add(a);
            class.add(a);
        }
        Windows {
            sieve: Sieve::new(p.iter().map(|(a, _)| &a[..])),
            ac: if p.len() >= matcher::SET_FROM {
                Some(Matcher::Set(WindowSet::new(p.iter().map(|(a, _)| &a[..]))))
            } else {
                automaton(&p, MatchKind::Standard, Some(kind)).map(Matcher::Ac)
            },
            with: p.iter().map(|(_, b)| b.clone()).collect(),
            longest: p.iter().map(|(a, _)| a.len()).max().unwrap_or(0),
            bytes,
            pat_class: ByteClass::new(&pat),
            named: named_decode_to(|b| pat.has(b)),
            escape_starts: ByteClass::new(&MayMatch::escape_starts()),
            pat,
            class: ByteClass::new(&class),
            shortest: p.iter().map(|(a, _)| a.len()).min().unwrap_or(0),
        }
    }

    /// The most bytes of raw text one match can span: the longest window
    /// with each of its bytes written in the longest escape the
    /// unescaper reads. The scrubber holds back one less; the probe
    /// search carries this many from one read to the next, so whatever
    /// the scrubber finds in an echo the probe found in the request
    /// (atk27r F1: the probe's own constant fell behind the escapes).
    pub(crate) fn reach(&self) -> usize {
        self.longest * ESCAPE_MAX
    }

    /// Whether `text`, as it is or unescaped, holds a window: the
    /// automaton's answer over every byte and over the decoded copy.
    /// Only where a match can lie is searched ([`stretch`]): raw, the runs
    /// of the patterns' own bytes, with the sieve (a raw match is made of
    /// them alone: s27e); unescaped, the stretches of the wider class
    /// around their relevant escapes ([`around`]).
    pub(crate) fn found_in(&self, text: &[u8]) -> bool {
        if self.ac.is_none() {
            return false;
        }
        if stretch::any_stretch(text, &self.pat_class, self.shortest, |s, e| {
            self.any(&text[s..e])
        }) {
            return true;
        }
        // Most texts hold no escape that may decode to a pattern byte (s27e:
        // JSON's `\/`, `\u00e9`, `%20`, `&amp;`): told in one pass over the
        // escapes, before the stretches.
        let pat = |b| self.pat.has(b);
        if !self
            .escape_starts
            .any_at(text, |i| may_decode_at(text, i, self.named, pat))
        {
            return false;
        }
        let (mut escs, mut scratch) = (Vec::new(), Vec::new());
        stretch::any_stretch(text, &self.class, self.shortest, |s, e| {
            around::any_around(
                text,
                (s, e),
                self.longest,
                (&self.pat, self.named),
                &mut escs,
                &mut scratch,
                |d| self.any(d),
            )
        })
    }

    fn any(&self, text: &[u8]) -> bool {
        match (&self.ac, &self.sieve) {
            (None, _) => false,
            (Some(ac), Some(sieve)) => sieve.is_match(ac, text),
            (Some(ac), None) => ac.is_match(text),
        }
    }

    /// The automaton over every byte, as it is and unescaped: what the
    /// sieve must answer the same as (the differential test's reference).
    pub(crate) fn found_in_reference(&self, text: &[u8]) -> bool {
        let Some(ac) = &self.ac else {
            return false;
        };
        ac.is_match(text) || Shadow::of(text).is_some_and(|s| ac.is_match(&s.bytes))
    }
}

/// The patterns of one run: the windows, and the whole values and
/// produced headers (rebuilt when the proxy makes a new header).
pub(crate) struct Engine {
    /// Whole values and produced headers: placed back exactly.
    whole: Option<AhoCorasick>,
    whole_with: Vec<Vec<u8>>,
    windows: Arc<Windows>,
    keep: usize,
    /// The windows' bytes and those of the whole values and headers.
    bytes: MayMatch,
}

fn automaton(
    pairs: &[&(Zeroizing<Vec<u8>>, Vec<u8>)],
    kind: MatchKind,
    prefer: Option<AhoCorasickKind>,
) -> Option<AhoCorasick> {
    if pairs.is_empty() {
        return None;
    }
    let pats = || pairs.iter().map(|(a, _)| &a[..]);
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(kind)
        .kind(prefer)
        .build(pats())
        .or_else(|_| {
            // Too large for a DFA: the slower automaton, same matches.
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(kind)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
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
    /// From `whole` (pattern, replacement) pairs of equal lengths and the
    /// run's windows.
    pub(crate) fn new(whole: &Pairs, windows: Arc<Windows>) -> Engine {
        let whole = usable(whole);
        let keep = whole
            .iter()
            .map(|(r, _)| r.len())
            .chain([windows.reach(), 1])
            .max()
            .unwrap_or(1)
            - 1;
        let mut bytes = windows.bytes.clone();
        for (a, _) in &whole {
            bytes.add(a);
        }
        Engine {
            // A contiguous NFA: small and quick to build however many
            // headers the run made.
            whole: automaton(
                &whole,
                MatchKind::LeftmostLongest,
                Some(AhoCorasickKind::ContiguousNFA),
            ),
            whole_with: whole.iter().map(|(_, b)| b.clone()).collect(),
            windows,
            keep,
            bytes,
        }
    }

    /// The longest match less one: the most a scrubber holds back.
    #[cfg(test)]
    pub(crate) fn keep(&self) -> usize {
        self.keep
    }

    /// How many bytes at the end of `raw` to hold back: the run of bytes
    /// that could be part of a match, at most the longest match less one.
    fn hold(&self, raw: &[u8]) -> usize {
        raw.iter()
            .rev()
            .take(self.keep)
            .take_while(|b| self.bytes.has(**b))
            .count()
    }

    /// Scrub a whole buffer in place.
    pub(crate) fn apply(&self, buf: &mut [u8]) {
        let raw = Zeroizing::new(buf.to_vec());
        self.apply_to(&raw, buf, &mut Vec::new());
    }

    /// [`Engine::apply_full`] where it can change anything: it changes
    /// nothing unless a window matches `raw` or its decoded copy, and
    /// whether one does is the sieve's question (ADR 0337), asked of the
    /// raw bytes and of the decoded copy (made without source positions,
    /// in runs). Nearly every buffer stops here.
    fn apply_to(&self, raw: &[u8], out: &mut [u8], done: &mut Vec<(usize, usize)>) {
        if self.windows.found_in(raw) {
            self.apply_full(raw, out, done);
        }
    }

    /// Find the patterns in `raw`, write their replacements into `out`
    /// (as long, otherwise equal): whole values first, put back exactly;
    /// then every window (overlapping ones too, found in the unreplaced
    /// bytes) outside those and outside `done` (whole values put back
    /// by an earlier call, still partly held); `done` gains the new ones;
    /// then windows in the unescaped text, their escapes rewritten.
    ///
    /// Every whole value and produced header holds a window of its value
    /// in some form, so when no window matches (nearly always) one pass
    /// over the bytes is all it costs.
    fn apply_full(&self, raw: &[u8], out: &mut [u8], done: &mut Vec<(usize, usize)>) {
        let Some(win) = &self.windows.ac else {
            return;
        };
        let with = &self.windows.with;
        let overlaps = |done: &[(usize, usize)], s: usize, e: usize| {
            done.iter().any(|(a, b)| s < *b && *a < e)
        };
        // `is_match` runs the automaton with its prefilter; the overlapping
        // search (no prefilter, the profile's top entry when it ran on
        // every chunk) only once there is something to replace.
        if win.is_match(raw) {
            let hits = win.overlapping(raw);
            if let Some(ac) = &self.whole {
                for m in ac.find_iter(raw) {
                    out[m.start()..m.end()]
                        .copy_from_slice(&self.whole_with[m.pattern().as_usize()]);
                    if !done.contains(&(m.start(), m.end())) {
                        done.push((m.start(), m.end()));
                    }
                }
            }
            for (s, e, p) in hits {
                if overlaps(done, s, e) {
                    continue;
                }
                out[s..e].copy_from_slice(&with[p]);
            }
        }
        let Some(sh) = Shadow::of(raw) else {
            return;
        };
        if !win.is_match(&sh.bytes) {
            return;
        }
        // What each matched decoded byte becomes (overlapping windows of
        // one value agree: the same offset of its placeholder).
        let mut rep_at: Vec<Option<u8>> = vec![None; sh.bytes.len()];
        for (s, e, p) in win.overlapping(&sh.bytes) {
            let rep = &with[p];
            for j in s..e {
                rep_at[j] = Some(rep[j - s]);
            }
        }
        // Each run of matched bytes is rewritten as one region of the
        // escaped text: the placeholder's bytes, then the last of them
        // repeated to the region's length. Where the value's escaped
        // characters were does not show (only how many bytes their
        // escapes added: atk27d F7).
        let mut j = 0;
        while j < rep_at.len() {
            if rep_at[j].is_none() {
                j += 1;
                continue;
            }
            let a = j;
            while j < rep_at.len() && rep_at[j].is_some() {
                j += 1;
            }
            let region: Vec<u8> = rep_at[a..j].iter().flatten().copied().collect();
            let (s, _) = sh.span(a, raw.len());
            let (_, e) = sh.span(j - 1, raw.len());
            if !overlaps(done, s, e) {
                let n = region.len().min(e - s);
                out[s..s + n].copy_from_slice(&region[..n]);
                out[s + n..e].fill(region[n - 1]);
                continue;
            }
            // Partly a whole value put back exactly: byte by byte outside it.
            for (k, r) in (a..j).zip(region) {
                let (s, e) = sh.span(k, raw.len());
                if overlaps(done, s, e) {
                    continue;
                }
                if e - s > 1 {
                    rewrite(&mut out[s..e], r);
                } else {
                    out[s] = r;
                }
            }
        }
    }
}

mod around;
pub mod bench;
mod byte_class;
#[cfg(any(test, feature = "fuzzing"))]
pub mod differential;
#[cfg(test)]
mod escaped_tests;
mod matcher;
mod may_match;
mod sieve;
mod stream;
mod stretch;
#[cfg(test)]
mod tests;
