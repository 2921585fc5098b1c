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

use super::matcher::Matcher;

/// Bytes per q-gram.
const Q: usize = 4;
/// log2 of the bitset's size in bits (32 KiB: stays in the L1 cache).
const BITS: u32 = 18;

/// The bitset's 64-bit words (a fixed size: its lookups need no bounds
/// check).
const WORDS: usize = 1 << (BITS - 6);

pub(crate) struct Sieve {
    set: Box<[u64; WORDS]>,
    step: usize,
    longest: usize,
}

/// The q-gram at the start of `b`, each byte ASCII lowercased at once
/// (`A`..=`Z` gain 0x20, every other byte stays).
fn gram(b: &[u8]) -> u32 {
    let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let low7 = w & 0x7f7f_7f7f;
    // Bit 7 of each byte: set from `A` (0x41) up, and from `[` (0x5b) up.
    let ge_a = low7.wrapping_add(0x3f3f_3f3f);
    let gt_z = low7.wrapping_add(0x2525_2525);
    let upper = (ge_a & !gt_z) & !w & 0x8080_8080;
    w | (upper >> 2)
}

fn slot(g: u32) -> usize {
    (g.wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

impl Sieve {
    /// The sieve of `patterns`; `None` when one is shorter than a q-gram
    /// (the automaton then runs over every byte).
    pub(crate) fn new<'a>(patterns: impl Iterator<Item = &'a [u8]>) -> Option<Sieve> {
        let mut set = Box::new([0u64; WORDS]);
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
    pub(crate) fn is_match(&self, ac: &Matcher, text: &[u8]) -> bool {
        let set: &[u64; WORDS] = &self.set;
        let bit = |p: usize| {
            let s = slot(gram(&text[p..p + Q]));
            (set[s >> 6] >> (s & 63)) & 1
        };
        let step = self.step;
        // The automaton found nothing in `text[..done]` searched already:
        // an occurrence it could find again ends after `done` (issue 27:
        // hits a step apart searched their shared bytes twice).
        let mut done: usize = 0;
        let mut p = 0;
        // Four sampled q-grams at a time, looked up independently (issue
        // 27: one lookup waited for the previous one's branch); any bit
        // set sends the four through the one-at-a-time check.
        while p + 3 * step + Q <= text.len() {
            if bit(p) | bit(p + step) | bit(p + 2 * step) | bit(p + 3 * step) != 0 {
                for k in 0..4 {
                    if bit(p + k * step) != 0 && self.around(ac, text, p + k * step, &mut done) {
                        return true;
                    }
                }
            }
            p += 4 * step;
        }
        while p + Q <= text.len() {
            if bit(p) != 0 && self.around(ac, text, p, &mut done) {
                return true;
            }
            p += step;
        }
        false
    }

    /// Whether `ac` matches an occurrence through the q-gram at `p`
    /// (bytes before `done` searched already; `done` moves on).
    #[cold]
    fn around(&self, ac: &Matcher, text: &[u8], p: usize, done: &mut usize) -> bool {
        // An occurrence through `p..p + Q` lies inside these bytes.
        let lo = (p + Q).saturating_sub(self.longest);
        let hi = (p + self.longest).min(text.len());
        // One ending after `done` starts after `done - longest`.
        let lo = lo.max((*done + 1).saturating_sub(self.longest));
        if hi > *done && ac.is_match(&text[lo..hi]) {
            return true;
        }
        *done = (*done).max(hi);
        false
    }
}

#[cfg(test)]
#[test]
fn gram_lowercases_every_byte() {
    for a in 0..=255u8 {
        for b in [0u8, b'A', b'Z', b'[', b'@', b'a', 0xc1, 0xda, 0xff] {
            let g = gram(&[a, b, b, a]);
            let want = u32::from_le_bytes([a, b, b, a].map(|c| c.to_ascii_lowercase()));
            assert_eq!(g, want, "{a} {b}");
        }
    }
}
