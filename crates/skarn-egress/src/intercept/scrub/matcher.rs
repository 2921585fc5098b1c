//! What finds the windows (issue 27): the Aho-Corasick automaton for the
//! usual secret, a table of window hashes for a long one.
//!
//! Every form of a value is cut into windows of one length per form, one
//! window at each offset, so a value of `n` bytes makes about `16 n`
//! windows: a 16 KiB secret made ~260,000, and building their automaton
//! took 6.3 s and 330 MiB at every run's start (release; 1.3 s for a PEM
//! key of 4 KiB). From [`SET_FROM`] windows on they go into a [`WindowSet`]
//! instead: one hash table of the windows keyed by their first bytes (as
//! many as the shortest window has, ASCII case folded) behind a bitmap,
//! searched by one rolling hash with every hit compared whole (f27v). The matches are the automaton's (each window at each place it
//! occurs, case folded); the differential test runs both.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::AhoCorasick;
use zeroize::Zeroizing;

/// From this many windows on, the hash table is used: for any real value
/// (f27v, atk27u F2: release, random base64 text, values of 32 / 300 /
/// 900 bytes: the table builds in 0.1 / 0.7 / 7 ms against the DFA's 92 /
/// 1,116 / 3,741 ms and the contiguous automaton's 3 / 107 / 435 ms, and
/// searches at 939 / 324 / 169 MB/s against 742 / 141 / 29 and 652 /
/// 143 / 55; `examples/window_kinds.rs`).
pub(crate) const SET_FROM: usize = 64;

/// A match: start, end, pattern index.
pub(crate) type Hit = (usize, usize, usize);

pub(crate) enum Matcher {
    Ac(AhoCorasick),
    Set(WindowSet),
}

impl Matcher {
    pub(crate) fn is_match(&self, text: &[u8]) -> bool {
        match self {
            Matcher::Ac(ac) => ac.is_match(text),
            Matcher::Set(s) => s.scan(text, &mut |_| true),
        }
    }

    /// Every match, overlapping ones too.
    pub(crate) fn overlapping(&self, text: &[u8]) -> Vec<Hit> {
        match self {
            Matcher::Ac(ac) => ac
                .find_overlapping_iter(text)
                .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
                .collect(),
            Matcher::Set(s) => {
                let mut v = Vec::new();
                s.scan(text, &mut |h| {
                    v.push(h);
                    false
                });
                v.sort_by_key(|&(s, e, p)| (e, s, p));
                v
            }
        }
    }
}

/// The rolling hash's base (odd).
const BASE: u64 = 0x100_0000_01b3;

/// The table's hasher: the key is a rolling hash already, so one
/// multiply spreads it (SipHash per byte of text was most of a search).
#[derive(Default)]
struct Spread(u64);

impl Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Table = HashMap<u64, Vec<u32>, BuildHasherDefault<Spread>>;

/// Windows in one hash table keyed by the hash of their first `min`
/// bytes (the shortest window's length), with a bitmap of those hashes
/// in front (atk27u F4: a table per window length, each rolled over the
/// text, searched a 16 KiB value's echo at ~6 MB/s). One rolling hash
/// over the text; where the bitmap has its bit, the table's windows are
/// compared whole.
pub(crate) struct WindowSet {
    /// The windows, ASCII lowercased.
    pats: Vec<Zeroizing<Vec<u8>>>,
    /// The shortest window's length (0: no window).
    min: usize,
    /// `BASE^(min - 1)`: what the byte leaving the window weighs.
    top: u64,
    /// One bit per `spread(hash) >> shift`.
    bits: Vec<u64>,
    shift: u32,
    by_hash: Table,
}

fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |h, &c| {
        h.wrapping_mul(BASE)
            .wrapping_add(u64::from(c.to_ascii_lowercase()))
    })
}

/// The bitmap's index of a prefix hash (its top bits, spread).
fn slot(h: u64, shift: u32) -> usize {
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl WindowSet {
    pub(crate) fn new<'a>(patterns: impl Iterator<Item = &'a [u8]>) -> WindowSet {
        let pats: Vec<Zeroizing<Vec<u8>>> = patterns
            .map(|p| Zeroizing::new(p.to_ascii_lowercase()))
            .collect();
        let min = pats
            .iter()
            .map(|p| p.len())
            .filter(|n| *n > 0)
            .min()
            .unwrap_or(0);
        let top = (1..min.max(1)).fold(1u64, |t, _| t.wrapping_mul(BASE));
        // About 16 bits per window (at least 2^12 bits): a text position
        // passes the bitmap about once in 16 for a full table.
        let log = (pats.len().max(1) * 16)
            .next_power_of_two()
            .trailing_zeros()
            .max(12);
        let shift = 64 - log;
        let mut bits = vec![0u64; (1usize << log) / 64];
        let mut by_hash = Table::default();
        for (i, p) in pats.iter().enumerate() {
            if p.is_empty() {
                continue;
            }
            let h = hash(&p[..min]);
            let k = slot(h, shift);
            bits[k / 64] |= 1 << (k % 64);
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            by_hash.entry(h).or_default().push(id);
        }
        WindowSet {
            pats,
            min,
            top,
            bits,
            shift,
            by_hash,
        }
    }

    /// Call `hit` for each match until it returns `true`; whether it did.
    fn scan(&self, text: &[u8], hit: &mut dyn FnMut(Hit) -> bool) -> bool {
        let n = self.min;
        if n == 0 || text.len() < n {
            return false;
        }
        let mut h = hash(&text[..n]);
        let mut s = 0;
        loop {
            let k = slot(h, self.shift);
            if self.bits[k / 64] & (1 << (k % 64)) != 0
                && let Some(ids) = self.by_hash.get(&h)
            {
                for &id in ids {
                    let p = &self.pats[id as usize];
                    let Some(w) = text.get(s..s + p.len()) else {
                        continue;
                    };
                    if p.iter().zip(w).all(|(a, b)| *a == b.to_ascii_lowercase())
                        && hit((s, s + p.len(), id as usize))
                    {
                        return true;
                    }
                }
            }
            if s + n >= text.len() {
                break;
            }
            let out = u64::from(text[s].to_ascii_lowercase());
            let inn = u64::from(text[s + n].to_ascii_lowercase());
            h = h
                .wrapping_sub(out.wrapping_mul(self.top))
                .wrapping_mul(BASE)
                .wrapping_add(inn);
            s += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator from `x` (the tests' inputs, reproducible).
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// The window set finds in `text` what the automaton finds (sorted;
    /// `dedup`: each match once); how many matches.
    fn same_matches(pats: &[Vec<u8>], text: &[u8], dedup: bool, what: &str) -> usize {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(pats)
            .unwrap();
        let set = WindowSet::new(pats.iter().map(|p| &p[..]));
        let (a, b) = (Matcher::Ac(ac), Matcher::Set(set));
        let mut want = a.overlapping(text);
        let mut got = b.overlapping(text);
        want.sort();
        got.sort();
        if dedup {
            want.dedup();
            got.dedup();
        }
        assert_eq!(got, want, "{what}");
        assert_eq!(a.is_match(text), b.is_match(text), "{what}");
        want.len()
    }

    #[test]
    fn the_set_finds_what_the_automaton_finds() {
        let mut rnd = xorshift(0x2545_f491_4f6c_dd1d);
        let alphabet = b"aAbBcC01_-%\\";
        for round in 0..300 {
            let pats: Vec<Vec<u8>> = (0..1 + rnd() % 12)
                .map(|_| {
                    let n = 1 + (rnd() % 6) as usize;
                    (0..n).map(|_| alphabet[(rnd() % 12) as usize]).collect()
                })
                .collect();
            let text: Vec<u8> = (0..(rnd() % 200) as usize)
                .map(|_| alphabet[(rnd() % 12) as usize])
                .collect();
            same_matches(
                &pats,
                &text,
                false,
                &format!("round {round}: {pats:?} in {text:?}"),
            );
        }
    }

    /// f27v (atk27u F4): one table keyed by the shortest length's prefix
    /// finds what the automaton finds for windows of the forms' lengths
    /// (10, 13, 14, 20, 40 bytes) sharing prefixes, many of them (the
    /// bitmap well filled), in text made of their pieces.
    #[test]
    fn one_prefix_table_finds_every_length() {
        let mut rnd = xorshift(0x1234_5678_9abc_def1);
        let alphabet = b"aAbB01\0%";
        let mut found = 0;
        for round in 0..40 {
            let base: Vec<u8> = (0..400)
                .map(|_| alphabet[(rnd() % alphabet.len() as u64) as usize])
                .collect();
            let mut pats: Vec<Vec<u8>> = Vec::new();
            for len in [10usize, 13, 14, 20, 40] {
                for _ in 0..(rnd() % 60) {
                    let at = (rnd() % (base.len() - len) as u64) as usize;
                    pats.push(base[at..at + len].to_vec());
                }
            }
            if pats.is_empty() {
                continue;
            }
            let mut text = Vec::new();
            while text.len() < 3000 {
                let at = (rnd() % 390) as usize;
                let n = 1 + (rnd() % 50) as usize;
                text.extend_from_slice(&base[at..(at + n).min(base.len())]);
                text.push(alphabet[(rnd() % alphabet.len() as u64) as usize].to_ascii_uppercase());
            }
            found += same_matches(&pats, &text, true, &format!("round {round}"));
        }
        assert!(found > 100, "{found}");
    }
}
