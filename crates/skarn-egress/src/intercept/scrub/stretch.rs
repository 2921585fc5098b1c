//! Where in a text a match can lie at all (issue 27): every byte of the
//! raw text a match spans, whether the match is raw or decoded, is a
//! byte of the class [`MayMatch::syntax`] plus the patterns' bytes, and a
//! match spans at least `min` raw bytes (the shortest window; an escape
//! is never shorter than what it decodes to). So only runs of at least
//! `min` class bytes need a search: each such run is handed on whole,
//! exactly (it starts after a byte outside the class or at the text's
//! start, and ends at one or at the text's end). Random bytes and most of
//! JSON or prose (quotes, colons, spaces, dots, newlines) hold none.
//!
//! The class is read 64 bytes at a time into a bit mask
//! ([`ByteClass::mask`]: AVX2 where the CPU has it), and the runs of
//! `min` set bits are found in the mask by shifts (s27e: the byte-by-byte
//! sampling it replaces, a lookup and an unpredictable branch every `min`
//! bytes, was most of the search of random text).
//!
//! No escape is cut where a stretch starts: every escape's bytes are
//! class bytes but the `"` or `/` of an irrelevant `\"` or `\/`, and that
//! byte is its last.

use super::byte_class::{BATCH, ByteClass};
#[cfg(test)]
use super::may_match::MayMatch;

/// Bit `i` of the result: `x`'s bits `i..i + k` are all set (bits past
/// 63 count as clear; `1 <= k <= 64`).
fn runs_from(mut x: u64, k: usize) -> u64 {
    let mut have = 1;
    while have * 2 <= k {
        x &= x >> have;
        have *= 2;
    }
    if have < k {
        x &= x >> (k - have);
    }
    x
}

/// Calls `each(s, e)` on every maximal run `text[s..e]` of at least
/// `min` bytes of `class`, left to right; stops at (and returns) the
/// first `true`.
pub(super) fn any_stretch(
    text: &[u8],
    class: &ByteClass,
    min: usize,
    mut each: impl FnMut(usize, usize) -> bool,
) -> bool {
    let min = min.max(1);
    // Runs of this many set bits inside one mask: a run of `min` holds
    // one, or crosses a mask's edge.
    let k = min.min(64);
    // The length of the run of class bytes that ends where the current
    // mask starts.
    let mut run = 0;
    let mut masks = [0u64; BATCH];
    for (g, group) in text.chunks(64 * BATCH).enumerate() {
        class.masks(group, &mut masks);
        let n = group.len().div_ceil(64);
        for (b, &m) in masks[..n].iter().enumerate() {
            let base = 64 * (BATCH * g + b);
            let head = m.trailing_ones() as usize;
            // Nearly always: no run of `min` inside, none across the edge.
            if head < 64 && run + head < min && runs_from(m, k) == 0 {
                run = m.leading_ones() as usize;
                continue;
            }
            let mut bits = m;
            if run > 0 {
                if head == 64 {
                    run += 64;
                    continue;
                }
                if run + head >= min && each(base - run, base + head) {
                    return true;
                }
                bits &= u64::MAX << head;
            }
            run = 0;
            let mut r = runs_from(bits, k);
            while r != 0 {
                let i = r.trailing_zeros() as usize;
                let e = i + (bits >> i).trailing_ones() as usize;
                if e == 64 {
                    run = 64 - i;
                    break;
                }
                if e - i >= min && each(base + i, base + e) {
                    return true;
                }
                r &= u64::MAX << e;
            }
            if run == 0 {
                run = bits.leading_ones() as usize;
            }
        }
    }
    run >= min && each(text.len() - run, text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The maximal runs of at least `min` class bytes, byte by byte.
    fn naive(text: &[u8], class: &MayMatch, min: usize) -> Vec<(usize, usize)> {
        let (mut out, mut i) = (Vec::new(), 0);
        while i < text.len() {
            if !class.has(text[i]) {
                i += 1;
                continue;
            }
            let a = i;
            while i < text.len() && class.has(text[i]) {
                i += 1;
            }
            if i - a >= min.max(1) {
                out.push((a, i));
            }
        }
        out
    }

    fn stretches(text: &[u8], class: &ByteClass, min: usize) -> Vec<(usize, usize)> {
        let mut got = Vec::new();
        any_stretch(text, class, min, |s, e| {
            got.push((s, e));
            false
        });
        got
    }

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Exactly the maximal runs of `min` class bytes, with the vector and
    /// the byte-by-byte classification: texts of every length 0..=96 at
    /// every offset 0..64 of a buffer, runs of every density, `min` from
    /// 1 to past one mask.
    #[test]
    fn stretches_are_exactly_the_long_runs() {
        let mut table = MayMatch::none();
        table.add(b"a\\0");
        let (fast, slow) = (ByteClass::new(&table), ByteClass::scalar(&table));
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..24 {
            let dense = round % 6;
            let buf: Vec<u8> = (0..160)
                .map(|_| match xorshift(&mut x) % 6 {
                    r if r < dense => [b'a', b'A', b'\\', b'0'][(x >> 40) as usize % 4],
                    _ => [b'.', b'"', 0xe9, b'\n'][(x >> 44) as usize % 4],
                })
                .collect();
            for off in 0..64 {
                for n in 0..=96 {
                    let text = &buf[off..off + n];
                    for min in [1, 2, 3, 5, 10, 13, 40, 63, 64, 65, 70] {
                        let want = naive(text, &table, min);
                        assert_eq!(stretches(text, &fast, min), want, "{text:?} {min}");
                        assert_eq!(stretches(text, &slow, min), want, "{text:?} {min}");
                    }
                }
            }
        }
        // Long runs across several masks, and the stop at the first `true`.
        for n in [63, 64, 65, 127, 128, 129, 200, 1000] {
            let mut text = vec![b'a'; n];
            text.push(b'.');
            text.extend(vec![b'a'; n]);
            for min in [1, 10, 64, 65, 100] {
                assert_eq!(stretches(&text, &fast, min), naive(&text, &table, min));
            }
            let mut calls = 0;
            assert!(any_stretch(&text, &fast, 1, |_, _| {
                calls += 1;
                true
            }));
            assert_eq!(calls, 1);
        }
    }
}
