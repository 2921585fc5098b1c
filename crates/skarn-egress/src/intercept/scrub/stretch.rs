//! Where in a text a match can lie at all (issue 27): every byte of the
//! raw text a match spans, whether the match is raw or decoded, is a
//! byte of the class [`MayMatch::syntax`] plus the patterns' bytes, and a
//! match spans at least `min` raw bytes (the shortest window; an escape
//! is never shorter than what it decodes to). So only runs of at least
//! `min` class bytes need a search, and each such run holds a byte at a
//! multiple of `min` (less one): those bytes alone are looked at, and
//! around one in the class the run is found. Random bytes and most of
//! JSON or prose (quotes, colons, spaces, dots, newlines) are skipped
//! with one lookup per `min` bytes.
//!
//! Of a byte looked at, the bytes half a window before and after are
//! looked at too: a run of `min` through it holds one of them (most
//! random bytes stop there).
//!
//! A stretch handed on starts after a byte outside the class (or at the
//! text's start), so no escape is cut there: every escape's bytes are
//! class bytes but the `"` or `/` of an irrelevant `\"` or `\/`, and that
//! byte is its last. It ends at a byte outside the class (or the text's
//! end). A long run is followed by looking at every `min`-th byte only:
//! the stretch may then hold bytes outside the class too (it is searched
//! whole, as the full search would).

use super::may_match::MayMatch;

/// Calls `each(s, e)` on stretches `text[s..e]` that together hold every
/// run of at least `min` bytes of `class`, left to right; stops at (and
/// returns) the first `true`.
pub(super) fn any_stretch(
    text: &[u8],
    class: &MayMatch,
    min: usize,
    mut each: impl FnMut(usize, usize) -> bool,
) -> bool {
    let n = text.len();
    let min = min.max(1);
    // A run of `min` bytes starting at or after `from` holds `from + min - 1`
    // or a later multiple of `min` after it.
    let mut p = min - 1;
    // A run of `min` through `p` holds `p - h` or `p + h` too.
    let h = min / 2;
    let has = |i: usize| i < n && class.has(text[i]);
    while p < n {
        if !class.has(text[p]) || !(p >= h && class.has(text[p - h]) || has(p + h)) {
            p += min;
            continue;
        }
        // The byte `min` back was outside the class, or ended the last
        // stretch: at most `min` bytes to look at.
        let mut s = p;
        while s > 0 && class.has(text[s - 1]) {
            s -= 1;
        }
        let mut e = p + 1;
        let exact = (p + 2 * min).min(n);
        while e < exact && class.has(text[e]) {
            e += 1;
        }
        if e == exact {
            // Long: every `min`-th byte until one outside the class.
            while e < n && class.has(text[e]) {
                e += min;
            }
            e = e.min(n);
        }
        if e - s >= min && each(s, e) {
            return true;
        }
        p = e + min;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run of `min` class bytes lies inside a stretch, each stretch
    /// is bounded by bytes outside the class (or the ends).
    #[test]
    fn every_long_run_is_inside_a_stretch() {
        let mut class = MayMatch::none();
        class.add(b"a");
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = (x % 200) as usize;
            let min = 1 + (x >> 20) as usize % 12;
            let dense = (x >> 30) % 4;
            let text: Vec<u8> = (0..n)
                .map(|i| {
                    let r = x.rotate_left(i as u32 * 7) ^ (i as u64 * 0x9e37);
                    if r % 4 <= dense { b'a' } else { b'.' }
                })
                .collect();
            let mut got = Vec::new();
            any_stretch(&text, &class, min, |s, e| {
                got.push((s, e));
                false
            });
            for &(s, e) in &got {
                assert!(s == 0 || text[s - 1] == b'.', "{text:?} {s}");
                assert!(e == n || text[e] == b'.', "{text:?} {e}");
            }
            let mut i = 0;
            while i < n {
                if text[i] != b'a' {
                    i += 1;
                    continue;
                }
                let a = i;
                while i < n && text[i] == b'a' {
                    i += 1;
                }
                if i - a >= min {
                    assert!(
                        got.iter().any(|&(s, e)| s <= a && i <= e),
                        "{text:?} run {a}..{i} min {min}: {got:?}"
                    );
                }
            }
        }
    }
}
