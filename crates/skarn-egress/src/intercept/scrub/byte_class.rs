//! A set of bytes tested 64 bytes at a time (issue 27, s27e): the
//! stretch finder ([`super::stretch`]) asks which bytes of the text are
//! in its class, and asking byte by byte (a lookup and an unpredictable
//! branch each) was most of the search of random text.
//!
//! [`ByteClass::mask`] answers for up to 64 bytes at once with a bit
//! per byte. With AVX2 (detected when the class is made) each 32 bytes
//! are classified by their two nibbles: a byte `h·16 + l` is in the
//! class when bit `h mod 8` of `LO[h / 8][l]` is set, read with two
//! 16-entry table lookups per half (`vpshufb`), exact for any set of
//! the 256 bytes. Elsewhere (no AVX2, another architecture, a short
//! tail) the same bits come from the 256-entry table, one byte at a
//! time; the unit tests hold the two to the same answers.

use super::may_match::MayMatch;

#[derive(Clone)]
pub(crate) struct ByteClass {
    table: MayMatch,
    /// `lo[k][l]`: bit `h - 8k` set when `h·16 + l` is in the class,
    /// for `h` in `8k..8k + 8`.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (AVX2 only)
    lo: [[u8; 16]; 2],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (AVX2 only)
    avx2: bool,
}

/// `hi[k][h]`: the bit of `h` in `lo[k]` (none for the other half).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (AVX2 only)
const HI: [[u8; 16]; 2] = {
    let mut t = [[0u8; 16]; 2];
    let mut h = 0;
    while h < 16 {
        t[h / 8][h] = 1 << (h % 8);
        h += 1;
    }
    t
};

impl ByteClass {
    pub(crate) fn new(table: &MayMatch) -> ByteClass {
        let mut lo = [[0u8; 16]; 2];
        for b in 0..=255u8 {
            if table.has(b) {
                let (h, l) = (usize::from(b >> 4), usize::from(b & 15));
                lo[h / 8][l] |= 1 << (h % 8);
            }
        }
        ByteClass {
            table: table.clone(),
            lo,
            avx2: avx2_available(),
        }
    }

    /// The same class, classified one byte at a time only (the unit
    /// tests' reference, and what a machine without AVX2 runs).
    #[cfg(test)]
    pub(crate) fn scalar(table: &MayMatch) -> ByteClass {
        ByteClass {
            avx2: false,
            ..ByteClass::new(table)
        }
    }

    /// For each 64 bytes of `text` (at most [`BATCH`] of them), bit `i`
    /// set when its byte `i` is in the class (the bits past `text`'s end
    /// are clear).
    pub(crate) fn masks(&self, text: &[u8], out: &mut [u64; BATCH]) {
        debug_assert!(text.len() <= 64 * BATCH);
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2
            // (`avx2_available`), the one requirement of `masks_avx2`.
            unsafe { self.masks_avx2(text, out) };
            return;
        }
        for (o, chunk) in out.iter_mut().zip(text.chunks(64)) {
            *o = self.mask_scalar(chunk);
        }
    }

    /// Whether `f(i)` holds for some `i` with `text[i]` in the class,
    /// asked left to right (s27e: the escapes of random text, a few per
    /// KiB, found without a search restarted at each).
    pub(crate) fn any_at(&self, text: &[u8], mut f: impl FnMut(usize) -> bool) -> bool {
        let mut masks = [0u64; BATCH];
        for (g, group) in text.chunks(64 * BATCH).enumerate() {
            self.masks(group, &mut masks);
            for (b, &m) in masks[..group.len().div_ceil(64)].iter().enumerate() {
                let mut m = m;
                while m != 0 {
                    if f(64 * (BATCH * g + b) + m.trailing_zeros() as usize) {
                        return true;
                    }
                    m &= m - 1;
                }
            }
        }
        false
    }

    fn mask_scalar(&self, chunk: &[u8]) -> u64 {
        debug_assert!(chunk.len() <= 64);
        chunk
            .iter()
            .enumerate()
            .fold(0, |m, (i, &b)| m | (u64::from(self.table.has(b)) << i))
    }

    /// [`ByteClass::masks`] with AVX2: one call for the whole batch (a
    /// call per 64 bytes cost as much as the classification).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn masks_avx2(&self, text: &[u8], out: &mut [u64; BATCH]) {
        use std::arch::x86_64::{
            __m256i, _mm_loadu_si128, _mm256_and_si256, _mm256_broadcastsi128_si256,
            _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
            _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
        };
        // SAFETY: each pointer reads 16 bytes of a `[u8; 16]` (unaligned
        // loads).
        let table = |t: &[u8; 16]| unsafe {
            _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast()))
        };
        let (lo0, lo1) = (table(&self.lo[0]), table(&self.lo[1]));
        let (hi0, hi1) = (table(&HI[0]), table(&HI[1]));
        let nib = _mm256_set1_epi8(0x0f);
        let zero = _mm256_setzero_si256();
        let half = |v: __m256i| {
            let l = _mm256_and_si256(v, nib);
            let h = _mm256_and_si256(_mm256_srli_epi16::<4>(v), nib);
            let a = _mm256_and_si256(_mm256_shuffle_epi8(lo0, l), _mm256_shuffle_epi8(hi0, h));
            let b = _mm256_and_si256(_mm256_shuffle_epi8(lo1, l), _mm256_shuffle_epi8(hi1, h));
            // Bit i: byte i is outside the class.
            let out = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_or_si256(a, b), zero));
            u64::from(!(out as u32))
        };
        let mut blocks = text.chunks_exact(64);
        let mut k = 0;
        for chunk in &mut blocks {
            // SAFETY: `chunk` is 64 bytes: the two unaligned loads read
            // `chunk[0..32]` and `chunk[32..64]`.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(chunk.as_ptr().cast()),
                    _mm256_loadu_si256(chunk.as_ptr().add(32).cast()),
                )
            };
            out[k] = half(a) | (half(b) << 32);
            k += 1;
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            out[k] = self.mask_scalar(rest);
        }
    }
}

/// Masks per call of [`ByteClass::masks`] (1 KiB of text).
pub(crate) const BATCH: usize = 16;

fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// The vector classification answers as the table does, for classes
    /// of every density and bytes of every value.
    #[test]
    fn vector_and_scalar_masks_agree() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut classes = vec![MayMatch::none(), MayMatch::syntax(), MayMatch::escapes()];
        for density in [1, 8, 64, 128, 250] {
            let mut m = MayMatch::none();
            for b in 0..=255u8 {
                if (xorshift(&mut x) % 256) < density {
                    m.add(&[b]);
                }
            }
            classes.push(m);
        }
        let mut all = MayMatch::none();
        all.add(&(0..=255u8).collect::<Vec<_>>());
        classes.push(all);
        let every: Vec<u8> = (0..=255u8).collect();
        assert_eq!(ByteClass::new(&classes[0]).avx2, avx2_available());
        for table in &classes {
            let (fast, slow) = (ByteClass::new(table), ByteClass::scalar(table));
            for _ in 0..40 {
                let n = xorshift(&mut x) as usize % (64 * BATCH + 1);
                let mut text: Vec<u8> = (0..n).map(|_| xorshift(&mut x) as u8).collect();
                if text.len() >= 256 {
                    text[..256].copy_from_slice(&every);
                }
                let mut want = [0u64; BATCH];
                for (i, b) in text.iter().enumerate() {
                    want[i / 64] |= u64::from(table.has(*b)) << (i % 64);
                }
                let (mut a, mut b) = ([0u64; BATCH], [0u64; BATCH]);
                fast.masks(&text, &mut a);
                slow.masks(&text, &mut b);
                assert_eq!(a, want, "{n}");
                assert_eq!(b, want, "{n}");
                let mut seen = Vec::new();
                assert!(!fast.any_at(&text, |i| {
                    seen.push(i);
                    false
                }));
                let all: Vec<usize> = (0..n).filter(|&i| table.has(text[i])).collect();
                assert_eq!(seen, all);
            }
        }
    }
}
