//! The sieve's differential check (ADR 0337): on a text made from any
//! bytes, with forms of a value planted in it (pieces verbatim, reversed,
//! hex, base64, UTF-16, UTF-32, whole), bytes escaped in every way the unescaper
//! reads and ASCII case changed, fed to a scrubber in random reads, the
//! fast path gives byte for byte what the full search of every byte and
//! of the decoded copy gives, and the probe search finds the same. Run by
//! the unit tests and by `fuzz/fuzz_targets/scrub_sieve.rs`.

use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use zeroize::Zeroizing;

use super::{Engine, Scrubber, Windows};
use crate::intercept::forms;

const VALUES: &[&str] = &[
    "sk-live-Qx7pL0vT7mWq2Rb8NzK3aa91",
    "ghp_REALvalue0123456789abcdefABCDEF",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Qk3xZ9pL0vT7mWq2Rb8N4s",
    "p@ss w0rd%&\\\"<>x",
    "Qz7Xw2\u{e9}9Lm4Kp8Vn3Rb6",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64)) as usize
    }
}

struct Case {
    value: Vec<u8>,
    engine: Arc<Engine>,
    search: Windows,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        VALUES
            .iter()
            .map(|v| v.to_string())
            .filter_map(case_of)
            .collect()
    })
}

/// The case of [`long_value`] (its windows in the hash table).
#[cfg(test)]
fn long_case() -> &'static Case {
    static CASE: OnceLock<Option<Case>> = OnceLock::new();
    CASE.get_or_init(|| case_of(long_value()))
        .as_ref()
        .expect("a placeholder for the long value")
}

fn case_of(v: String) -> Option<Case> {
    let ph = crate::secrets::placeholder::make(&v)?;
    let pairs = forms::pairs(v.as_bytes(), ph.as_bytes());
    let whole = vec![(Zeroizing::new(v.as_bytes().to_vec()), ph.into_bytes())];
    Some(Case {
        value: v.as_bytes().to_vec(),
        // The contiguous automaton: the same matches as the proxy's DFA
        // (the kind only changes speed), built many times faster (the
        // DFA's build under the fuzzer's comparison tracing outlasted
        // its per-input time).
        engine: Arc::new(Engine::new(&whole, Arc::new(Windows::for_search(&pairs)))),
        search: Windows::for_search(&pairs),
    })
}

/// A value long enough that its windows go into the hash table
/// ([`super::matcher::SET_FROM`]), not the automaton: 1,400 characters
/// as a long key or certificate body has.
#[cfg(test)]
fn long_value() -> String {
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let abc = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..1400).map(|_| char::from(abc[rng.below(64)])).collect()
}

/// One byte escaped in one of the ways [`super::super::unescape`] reads.
fn escaped(b: u8, rng: &mut Rng) -> Vec<u8> {
    let s = match rng.below(12) {
        0 => format!("%{b:02X}"),
        1 => format!("%u{:04x}", b),
        2 => format!("\\u{:04X}", b),
        3 => format!("\\x{b:02x}"),
        4 => format!("\\{b:03o}"),
        5 => format!("&#{b};"),
        6 => format!("&#x{b:x}"),
        7 => format!("&#{:07}", b),
        8 => format!("\\u{{{:x}}}", b),
        9 => format!("\\u{{{:012x}}}", b),
        10 => format!("\\U{:08x}", b),
        _ => return vec![b'\\', b],
    };
    s.into_bytes()
}

/// An escape that decodes to none of most values' bytes (a quote, a
/// newline, a space, an accent, an ampersand): what the fast path skips
/// when it groups escapes (issue 27).
fn noise(rng: &mut Rng) -> &'static [u8] {
    const N: &[&[u8]] = &[
        b"\\\"",
        b"\\n",
        b"\\\\",
        b"%0A",
        b"%20",
        b"\\u00e9",
        b"\\u00E9\\u00e8",
        b"&amp;",
        b"&quot;",
        b"&#10;",
        b"\\t",
        b"\\uD83D\\uDE00",
    ];
    N[rng.below(N.len())]
}

/// `form` with irrelevant escapes ([`noise`]) planted around it, some
/// `0..=80` bytes of `value` away (so at, inside and past the edges of
/// the regions the fast path decodes), and sometimes inside it.
fn with_noise(value: &[u8], form: Vec<u8>, rng: &mut Rng) -> Vec<u8> {
    let filler = |rng: &mut Rng| -> Vec<u8> {
        let n = rng.below(81);
        value
            .iter()
            .cycle()
            .skip(rng.below(value.len()))
            .take(n)
            .copied()
            .collect()
    };
    let mut out = Vec::new();
    if rng.below(2) == 0 {
        out.extend_from_slice(noise(rng));
        out.extend_from_slice(&filler(rng));
    }
    let inside = if rng.below(3) == 0 {
        rng.below(form.len() + 1)
    } else {
        usize::MAX
    };
    for (i, c) in form.iter().enumerate() {
        if i == inside {
            out.extend_from_slice(noise(rng));
        }
        out.push(*c);
    }
    if rng.below(2) == 0 {
        out.extend_from_slice(&filler(rng));
        out.extend_from_slice(noise(rng));
    }
    out
}

/// A form of a piece of `value` (or of all of it).
fn planted(value: &[u8], rng: &mut Rng) -> Vec<u8> {
    let a = rng.below(value.len());
    let b = (a + 8 + rng.below(value.len())).min(value.len());
    let piece = if rng.below(4) == 0 {
        value
    } else {
        &value[a..b]
    };
    let mut pre = vec![b'x'; rng.below(3)];
    pre.extend_from_slice(piece);
    let mut form = match rng.below(9) {
        0 => piece.iter().rev().copied().collect(),
        1 => piece
            .iter()
            .flat_map(|c| format!("{c:02x}").into_bytes())
            .collect(),
        2 => STANDARD_NO_PAD.encode(&pre).into_bytes(),
        3 => URL_SAFE_NO_PAD.encode(&pre).into_bytes(),
        4 => piece.iter().flat_map(|&c| [c, 0]).collect(),
        5 => piece.iter().flat_map(|&c| [0, c]).collect(),
        6 => piece.iter().flat_map(|&c| [c, 0, 0, 0]).collect(),
        7 => piece.iter().flat_map(|&c| [0, 0, 0, c]).collect(),
        _ => piece.to_vec(),
    };
    if rng.below(3) == 0 {
        for c in &mut form {
            if rng.below(2) == 0 {
                *c ^= if c.is_ascii_alphabetic() { 0x20 } else { 0 };
            }
        }
    }
    if rng.below(2) == 0 {
        let every = 1 + rng.below(6);
        let mut out = Vec::new();
        for (i, c) in form.into_iter().enumerate() {
            if i % every == 0 {
                out.extend_from_slice(&escaped(c, rng));
            } else {
                out.push(c);
            }
        }
        form = out;
    } else if rng.below(2) == 0 && form.len() > 1 {
        // Only the two ends escaped (or one byte): escapes as far apart
        // as a window is long, the edges of the clusters the fast path
        // decodes alone (issue 27).
        let last = form.len() - 1;
        let one = rng.below(form.len());
        let ends: Vec<usize> = if rng.below(2) == 0 {
            vec![0, last]
        } else {
            vec![one]
        };
        let mut out = Vec::new();
        for (i, c) in form.into_iter().enumerate() {
            if ends.contains(&i) {
                out.extend_from_slice(&escaped(c, rng));
            } else {
                out.push(c);
            }
        }
        form = out;
    }
    if rng.below(2) == 0 {
        form = with_noise(value, form, rng);
    }
    form
}

/// Compare the fast path and the reference on a text made from `data`
/// (what the fuzz target calls): `Err` says how they differ.
pub fn check_seeded(data: &[u8]) -> Result<(), String> {
    let seed = data.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    }) | 1;
    let mut rng = Rng(seed);
    let cases = cases();
    // The long value's case (hash tables) is the unit tests' only: its
    // set-up alone outlasts a fuzz run's per-input time in the dev build.
    let case = &cases[rng.below(cases.len())];
    seeded_in(case, data, rng)
}

/// [`check_seeded`] for one case: the seeded plants and reads.
fn seeded_in(case: &Case, data: &[u8], mut rng: Rng) -> Result<(), String> {
    let mut text = data.to_vec();
    for _ in 0..rng.below(5) {
        let at = rng.below(text.len() + 1);
        let form = planted(&case.value, &mut rng);
        text.splice(at..at, form);
    }
    let mut cuts = vec![0];
    while *cuts.last().unwrap_or(&0) < text.len() {
        let last = *cuts.last().unwrap_or(&0);
        cuts.push((last + 1 + rng.below(64)).min(text.len()));
    }
    check(case, &text, &cuts)
}

fn check(case: &Case, text: &[u8], cuts: &[usize]) -> Result<(), String> {
    let mut fast = Scrubber::new(case.engine.clone());
    let mut full = Scrubber::reference(case.engine.clone());
    for w in cuts.windows(2) {
        let piece = &text[w[0]..w[1]];
        let a = fast.push(piece).to_vec();
        let b = full.push(piece);
        if a != b {
            return Err(format!("push {w:?} of {text:?}: {a:?} != {b:?}"));
        }
        if case.search.found_in(piece) != case.search.found_in_reference(piece) {
            return Err(format!("probe of {piece:?}"));
        }
    }
    if fast.finish() != full.finish() {
        return Err(format!("finish of {text:?}"));
    }
    let mut a = text.to_vec();
    case.engine.apply(&mut a);
    let mut b = text.to_vec();
    case.engine.apply_full(text, &mut b, &mut Vec::new());
    if a != b {
        return Err(format!("whole {text:?}: {a:?} != {b:?}"));
    }
    if case.search.found_in(text) != case.search.found_in_reference(text) {
        return Err(format!("probe of {text:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random bytes and text-like bytes with planted forms, escapes and
    /// case changes, in random reads: the sieve changes nothing.
    /// The fuzz target's entry, on a few inputs.
    #[test]
    fn the_fuzz_entry_checks_its_inputs() {
        for n in 0..24u8 {
            let data: Vec<u8> = (0..u32::from(n) * 7)
                .map(|i| (i * 31 + u32::from(n)) as u8)
                .collect();
            check_seeded(&data).unwrap();
        }
    }

    /// The long value's windows are in the hash table, and its fast
    /// path equals its full search too.
    #[test]
    fn the_long_value_is_searched_by_the_hash_table() {
        let v = long_value();
        let ph = crate::secrets::placeholder::make(&v).unwrap();
        let n = forms::pairs(v.as_bytes(), ph.as_bytes()).len();
        assert!(n >= super::super::matcher::SET_FROM, "{n}");
        let case = long_case();
        let mut rng = Rng(0x7a3c_1d2e_9f80_4b65);
        let mut found = 0;
        for i in 0..24u64 {
            let data: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
            seeded_in(case, &data, Rng(i * 2 + 1)).unwrap();
            let mut t = data.clone();
            t.extend_from_slice(&planted(&case.value, &mut rng));
            found += usize::from(case.search.found_in_reference(&t));
            check(case, &t, &[0, t.len() / 2, t.len()]).unwrap();
        }
        assert!(found > 8, "{found}");
    }

    #[test]
    fn the_fast_path_equals_the_full_search() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut found = 0;
        for i in 0..1500 {
            let n = rng.below(300);
            let data: Vec<u8> = (0..n)
                .map(|_| match i % 3 {
                    0 => rng.next() as u8,
                    1 => b"abcdefXYZ0123456789 \"\\%&#;{}u"[rng.below(29)],
                    _ => b" eyJQk3xZ9pL0vTREALvalue"[rng.below(24)],
                })
                .collect();
            let case = &cases()[i % cases().len()];
            seeded_in(case, &data, Rng(i as u64 * 2 + 1)).unwrap();
            let mut t = data.clone();
            t.extend_from_slice(&planted(&case.value, &mut rng));
            found += usize::from(case.search.found_in_reference(&t));
            check(case, &t, &[0, t.len() / 2, t.len()]).unwrap();
        }
        // The planted forms are found (most of them: short pieces, and
        // ones cut from a format's public part, are not windows).
        assert!(found > 500, "{found}");
    }

    /// An escape only one of whose decoded bytes is a pattern byte is
    /// relevant: `\u0129` (C4 A9) gives the A9 a window after the value's
    /// `é` (C3 A9) starts with.
    #[test]
    fn an_escape_sharing_one_decoded_byte_with_a_window_counts() {
        let case = cases()
            .iter()
            .find(|c| c.value.starts_with(b"Qz7Xw2"))
            .unwrap();
        let text = b"{\"a\":\"\\u01299Lm4Kp8Vn\"}".to_vec();
        assert!(case.search.found_in_reference(&text));
        check(case, &text, &[0, text.len()]).unwrap();
        assert!(case.search.found_in(&text));
    }
}
