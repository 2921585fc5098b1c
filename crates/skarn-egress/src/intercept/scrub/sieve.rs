//! A sampled q-gram sieve in front of the windows' automaton (issue 27,
//! ADR 0337): the same yes/no answer as running the automaton over every
//! byte, at a fraction of the cost on text that holds no window.
//!
//! Every pattern is at least `shortest` bytes long, so any occurrence
//! holds a whole q-gram (`Q` bytes, ASCII case folded) starting at a
//! multiple of `shortest - Q + 1`. Only those positions are looked up in
//! a bitset of the patterns' q-grams; where one is set, the automaton
//! runs over the bytes an occurrence through it could span. A bit set by
//! chance (a hash collision, or text sharing a q-gram with a pattern)
//! costs one short automaton run; a missed occurrence is impossible.

use aho_corasick::AhoCorasick;

/// Bytes per q-gram.
const Q: usize = 4;
/// log2 of the bitset's size in bits (32 KiB: stays in the L1 cache).
const BITS: u32 = 18;

pub(crate) struct Sieve {
    set: Box<[u64]>,
    step: usize,
    longest: usize,
}

fn gram(b: &[u8]) -> u32 {
    u32::from_le_bytes([
        b[0].to_ascii_lowercase(),
        b[1].to_ascii_lowercase(),
        b[2].to_ascii_lowercase(),
        b[3].to_ascii_lowercase(),
    ])
}

fn slot(g: u32) -> usize {
    (g.wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

impl Sieve {
    /// The sieve of `patterns`; `None` when one is shorter than a q-gram
    /// (the automaton then runs over every byte).
    pub(crate) fn new<'a>(patterns: impl Iterator<Item = &'a [u8]>) -> Option<Sieve> {
        let mut set = vec![0u64; 1 << (BITS - 6)].into_boxed_slice();
        let (mut shortest, mut longest) = (usize::MAX, 0);
        for p in patterns {
            if p.len() < Q {
                return None;
            }
            shortest = shortest.min(p.len());
            longest = longest.max(p.len());
            for w in p.windows(Q) {
                let s = slot(gram(w));
                set[s >> 6] |= 1 << (s & 63);
            }
        }
        (longest > 0).then_some(Sieve {
            set,
            step: shortest - Q + 1,
            longest,
        })
    }

    /// Whether `ac` (the automaton of the patterns the sieve was built
    /// from) matches in `text`: `ac.is_match(text)`, searched only around
    /// the sampled q-grams a pattern holds.
    pub(crate) fn is_match(&self, ac: &AhoCorasick, text: &[u8]) -> bool {
        let mut p = 0;
        // The automaton found nothing in `text[..done]` searched already:
        // an occurrence it could find again ends after `done` (issue 27:
        // hits a step apart searched their shared bytes twice).
        let mut done: usize = 0;
        while p + Q <= text.len() {
            let s = slot(gram(&text[p..p + Q]));
            if (self.set[s >> 6] >> (s & 63)) & 1 == 1 {
                // An occurrence through `p..p + Q` lies inside these bytes.
                let lo = (p + Q).saturating_sub(self.longest);
                let hi = (p + self.longest).min(text.len());
                // One ending after `done` starts after `done - longest`.
                let lo = lo.max((done + 1).saturating_sub(self.longest));
                if hi > done && ac.is_match(&text[lo..hi]) {
                    return true;
                }
                done = done.max(hi);
            }
            p += self.step;
        }
        false
    }
}
