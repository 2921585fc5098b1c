//! What finds the windows (issue 27): the Aho-Corasick automaton for the
//! usual secret, a table of window hashes for a long one.
//!
//! Every form of a value is cut into windows of one length per form, one
//! window at each offset, so a value of `n` bytes makes about `16 n`
//! windows: a 16 KiB secret made ~260,000, and building their automaton
//! took 6.3 s and 330 MiB at every run's start (release; 1.3 s for a PEM
//! key of 4 KiB). Past [`SET_FROM`] windows they go into a [`WindowSet`]
//! instead: per window length, a hash table of the windows (ASCII case
//! folded), searched by a rolling hash with every hit compared byte for
//! byte. The matches are the automaton's (each window at each place it
//! occurs, case folded); the differential test runs both.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::AhoCorasick;
use zeroize::Zeroizing;

/// From this many windows on, the hash table is used.
pub(crate) const SET_FROM: usize = 20_000;

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

/// Rolling hash to the last window added with it; earlier ones with the
/// same hash follow through [`WindowSet::next`] (one allocation for all
/// the windows, not one per window: s27e, a long value's start-up).
type Table = HashMap<u64, u32, BuildHasherDefault<Spread>>;

/// No further window with the same hash.
const END: u32 = u32::MAX;

/// Windows of one length.
struct OfLength {
    len: usize,
    /// `BASE^(len - 1)`: what the byte leaving the window weighs.
    top: u64,
    by_hash: Table,
}

/// Windows in hash tables, one per window length.
pub(crate) struct WindowSet {
    /// The windows, ASCII lowercased, one after the other...
    bytes: Zeroizing<Vec<u8>>,
    /// ...each from its start to the next one's.
    starts: Vec<usize>,
    /// Per window, the previous one added with the same hash ([`END`]).
    next: Vec<u32>,
    lengths: Vec<OfLength>,
}

fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |h, &c| {
        h.wrapping_mul(BASE)
            .wrapping_add(u64::from(c.to_ascii_lowercase()))
    })
}

impl WindowSet {
    pub(crate) fn new<'a>(patterns: impl Iterator<Item = &'a [u8]>) -> WindowSet {
        let patterns: Vec<&[u8]> = patterns.collect();
        // Sized once: a grown buffer would leave a copy behind unwiped.
        let total = patterns.iter().map(|p| p.len()).sum();
        let mut bytes = Zeroizing::new(Vec::with_capacity(total));
        let (mut starts, mut next) = (vec![0], Vec::with_capacity(patterns.len()));
        starts.reserve(patterns.len());
        let mut lengths: Vec<OfLength> = Vec::new();
        for (i, p) in patterns.into_iter().enumerate() {
            let at = match lengths.iter().position(|l| l.len == p.len()) {
                Some(at) => at,
                None => {
                    let top = (1..p.len()).fold(1u64, |t, _| t.wrapping_mul(BASE));
                    lengths.push(OfLength {
                        len: p.len(),
                        top,
                        by_hash: Table::default(),
                    });
                    lengths.len() - 1
                }
            };
            let id = u32::try_from(i).unwrap_or(END - 1);
            let before = lengths[at].by_hash.insert(hash(p), id);
            next.push(before.unwrap_or(END));
            bytes.extend(p.iter().map(u8::to_ascii_lowercase));
            starts.push(bytes.len());
        }
        lengths.retain(|l| l.len > 0);
        WindowSet {
            bytes,
            starts,
            next,
            lengths,
        }
    }

    /// Window `id`, lowercased.
    fn pat(&self, id: u32) -> &[u8] {
        let id = id as usize;
        &self.bytes[self.starts[id]..self.starts[id + 1]]
    }

    /// Call `hit` for each match until it returns `true`; whether it did.
    fn scan(&self, text: &[u8], hit: &mut dyn FnMut(Hit) -> bool) -> bool {
        for l in &self.lengths {
            if text.len() < l.len {
                continue;
            }
            let mut h = hash(&text[..l.len]);
            let mut s = 0;
            loop {
                if let Some(&last) = l.by_hash.get(&h) {
                    let w = &text[s..s + l.len];
                    let mut id = last;
                    while id != END {
                        let p = self.pat(id);
                        if p.iter().zip(w).all(|(a, b)| *a == b.to_ascii_lowercase())
                            && hit((s, s + l.len, id as usize))
                        {
                            return true;
                        }
                        id = self.next[id as usize];
                    }
                }
                if s + l.len >= text.len() {
                    break;
                }
                let out = u64::from(text[s].to_ascii_lowercase());
                let inn = u64::from(text[s + l.len].to_ascii_lowercase());
                h = h
                    .wrapping_sub(out.wrapping_mul(l.top))
                    .wrapping_mul(BASE)
                    .wrapping_add(inn);
                s += 1;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_finds_what_the_automaton_finds() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
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
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&pats)
                .unwrap();
            let set = WindowSet::new(pats.iter().map(|p| &p[..]));
            let (a, b) = (Matcher::Ac(ac), Matcher::Set(set));
            let mut want = a.overlapping(&text);
            let mut got = b.overlapping(&text);
            want.sort();
            got.sort();
            assert_eq!(got, want, "round {round}: {pats:?} in {text:?}");
            assert_eq!(a.is_match(&text), b.is_match(&text), "round {round}");
        }
    }
}
