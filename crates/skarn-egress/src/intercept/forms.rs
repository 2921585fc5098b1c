//! The forms in which a response may show a secret's value, each paired
//! with the same form of its placeholder (same length, position for
//! position), cut into windows: the scrubber replaces any run of at least
//! [`WINDOW`] bytes of the value's secret part (after the public format
//! prefix it shares with the placeholder) that appears
//!
//! - verbatim, in any ASCII case, and with each space written `+` (a
//!   form-encoded echo);
//! - reversed;
//! - as hexadecimal (either case);
//! - escaped in any way JSON strings or URLs allow (`\"`, `\uXXXX`,
//!   `%XX` for any byte): decoded by the scrubber ([`super::unescape`])
//!   and searched as verbatim text;
//! - as standard or URL-safe base64, at each of the three alignments a
//!   value can have inside a longer encoded text (so `user:value` in a
//!   `Basic` header, or the value inside a base64 JSON field, is found);
//! - as UTF-16, little- and big-endian (what Windows tools and some
//!   JSON encoders write), and UTF-16LE in base64 (PowerShell's encoded
//!   commands) (atk27g F6), and as UTF-32, little- and big-endian
//!   (atk27t F7).
//!
//! Overlapping windows are all replaced, so a longer run disappears whole.
//! What is not covered: runs shorter than [`WINDOW`], other encodings
//! (encryption, hashing, arbitrary transforms), and pieces of the value a
//! host can be made to return one by one.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use zeroize::Zeroizing;

/// The shortest run of the value's secret bytes that is replaced.
pub(crate) const WINDOW: usize = 10;

/// (pattern, replacement) pairs of equal length.
pub(crate) type Pairs = Vec<(Zeroizing<Vec<u8>>, Vec<u8>)>;

/// A form of the value and the same form of the placeholder, with the
/// window length that covers [`WINDOW`] value bytes in it.
struct Form {
    value: Zeroizing<Vec<u8>>,
    placeholder: Vec<u8>,
    window: usize,
}

fn hex(b: &[u8]) -> Vec<u8> {
    const H: &[u8; 16] = b"0123456789abcdef";
    b.iter()
        .flat_map(|c| [H[usize::from(c >> 4)], H[usize::from(c & 15)]])
        .collect()
}

/// `b` as UTF-16 code units (ASCII and Latin-1 bytes map one to one),
/// little- or big-endian.
fn utf16(b: &[u8], little: bool) -> Vec<u8> {
    b.iter()
        .flat_map(|&c| if little { [c, 0] } else { [0, c] })
        .collect()
}

/// `b` as UTF-32 code units (ASCII and Latin-1 bytes map one to one),
/// little- or big-endian (atk27t F7).
fn utf32(b: &[u8], little: bool) -> Vec<u8> {
    b.iter()
        .flat_map(|&c| if little { [c, 0, 0, 0] } else { [0, 0, 0, c] })
        .collect()
}

/// The base64 characters that depend only on `v`'s bytes when `v` starts
/// `align` bytes into an encoded text.
fn base64_middle(v: &[u8], align: usize, url: bool) -> Vec<u8> {
    let mut src = vec![0u8; align];
    src.extend_from_slice(v);
    let enc = if url {
        URL_SAFE_NO_PAD.encode(&src)
    } else {
        STANDARD_NO_PAD.encode(&src)
    };
    let first = (8 * align).div_ceil(6);
    let end = (8 * (align + v.len())) / 6;
    enc.as_bytes()[first..end.max(first)].to_vec()
}

/// The part of `value` (byte range) its windows are cut from: the whole
/// value, less the structure a well-known format makes public or
/// guessable (atk27o F8, F9). Windows over public bytes would let 9 known
/// bytes plus guesses reach a window (the finder as a substring oracle),
/// and would mistake another token of the same format for this one.
///
/// - a JSON Web Token (`eyJ….….…`): the signature only (the header is
///   one of a handful of fixed texts, the claims are readable by anyone
///   holding a token of the same issuer);
/// - a PEM block: the base64 body, less its first 64 characters (the
///   ASN.1 preamble every key of a type shares), without the armour
///   lines;
/// - a Slack token (`xox?-team-bot-secret`): the part after the last `-`;
/// - a URL with userinfo (`scheme://user:password@host/…`): the password
///   (with the user name when the password alone is shorter than a
///   window).
pub(crate) fn unpredictable(value: &[u8]) -> (usize, usize) {
    let all = (0, value.len());
    let parts: Vec<&[u8]> = value.split(|&b| b == b'.').collect();
    let b64url = |s: &[u8]| {
        !s.is_empty()
            && s.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
    };
    if value.starts_with(b"eyJ") && parts.len() == 3 && parts.iter().all(|p| b64url(p)) {
        let sig = parts[2].len();
        if sig >= WINDOW {
            return (value.len() - sig, value.len());
        }
        return all;
    }
    if let Some(begin) = find(value, b"-----BEGIN ") {
        let body = value[begin..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(value.len(), |i| begin + i + 1);
        let end = find(&value[body..], b"-----END").map_or(value.len(), |i| body + i);
        let from = (body + 64).min(end);
        if end - from >= WINDOW {
            return (from, end);
        }
        return all;
    }
    if value.len() > 5
        && value.starts_with(b"xox")
        && value[4] == b'-'
        && let Some(i) = value.iter().rposition(|&b| b == b'-')
        && value.len() - i > WINDOW
    {
        return (i + 1, value.len());
    }
    if let Some(s) = find(value, b"://") {
        let auth_end = value[s + 3..]
            .iter()
            .position(|&b| b == b'/' || b == b'?' || b == b'#')
            .map_or(value.len(), |i| s + 3 + i);
        let auth = &value[s + 3..auth_end];
        if let Some(at) = auth.iter().rposition(|&b| b == b'@')
            && let Some(colon) = auth[..at].iter().position(|&b| b == b':')
        {
            // A short password: with its user name, still not the host.
            if at - colon > WINDOW {
                return (s + 3 + colon + 1, s + 3 + at);
            }
            if at >= WINDOW {
                return (s + 3, s + 3 + at);
            }
        }
    }
    all
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The (pattern, replacement) pairs for one value and its placeholder.
pub(crate) fn pairs(value: &[u8], placeholder: &[u8]) -> Pairs {
    if value.len() != placeholder.len() || value.is_empty() {
        return Vec::new();
    }
    // The public prefix (`ghp_`, `sk-ant-`) is the same in both.
    let shared = value
        .iter()
        .zip(placeholder)
        .take_while(|(a, b)| a == b)
        .count();
    let (from, to) = unpredictable(value);
    let from = from.max(shared);
    if from >= to {
        return Vec::new();
    }
    let (v, p) = (&value[from..to], &placeholder[from..to]);
    if v.is_empty() {
        return Vec::new();
    }
    let n = WINDOW.min(v.len());
    let mut forms = vec![
        Form {
            value: Zeroizing::new(v.to_vec()),
            placeholder: p.to_vec(),
            window: n,
        },
        Form {
            value: Zeroizing::new(v.iter().rev().copied().collect()),
            placeholder: p.iter().rev().copied().collect(),
            window: n,
        },
        Form {
            value: Zeroizing::new(hex(v)),
            placeholder: hex(p),
            window: 2 * n,
        },
    ];
    for little in [true, false] {
        forms.push(Form {
            value: Zeroizing::new(utf16(v, little)),
            placeholder: utf16(p, little),
            window: 2 * n,
        });
        forms.push(Form {
            value: Zeroizing::new(utf32(v, little)),
            placeholder: utf32(p, little),
            window: 4 * n,
        });
    }
    // A form-encoded echo writes a space as `+` (f27v, atk27u F3: a
    // passphrase of short words left no verbatim window whole). As a form
    // of its own, not an escape the decoder reads: a value holding `+`
    // and an escaped byte still decodes to itself.
    if v.contains(&b' ') {
        let plus = |b: &[u8]| -> Vec<u8> {
            b.iter()
                .map(|c| if *c == b' ' { b'+' } else { *c })
                .collect()
        };
        forms.push(Form {
            value: Zeroizing::new(plus(v)),
            placeholder: plus(p),
            window: n,
        });
    }
    let wide_v = Zeroizing::new(utf16(v, true));
    let wide_p = utf16(p, true);
    for (bytes, ph, per) in [(v, p, 1), (&wide_v[..], &wide_p[..], 2)] {
        for url in [false, true] {
            for align in 0..3 {
                let a = Zeroizing::new(base64_middle(bytes, align, url));
                let b = base64_middle(ph, align, url);
                if a.len() == b.len() && !a.is_empty() {
                    forms.push(Form {
                        value: a,
                        placeholder: b,
                        window: (4 * per * n / 3).max(1),
                    });
                }
            }
        }
    }
    let mut out: Pairs = Vec::new();
    // Windows already cut, by a case-folded hash (f27s F5: a linear search
    // of every earlier window made a 4 KiB value's set-up quadratic, about
    // 10^10 comparisons: minutes before a run started): the last window
    // cut with each hash, the earlier ones with it through `prev` (s27e:
    // no allocation per window, and a multiply per byte, not SipHash; the
    // windows are the user's value, not a response's bytes).
    let mut seen: HashMap<u64, usize, BuildHasherDefault<Mixed>> = HashMap::default();
    let mut prev: Vec<Option<usize>> = Vec::new();
    for f in forms {
        let w = f.window.min(f.value.len());
        for i in 0..=f.value.len() - w {
            let pat = &f.value[i..i + w];
            let h = folded_hash(pat);
            let last = seen.get(&h).copied();
            let mut k = last;
            while let Some(j) = k {
                if out[j].0[..].eq_ignore_ascii_case(pat) {
                    break;
                }
                k = prev[j];
            }
            if k.is_some() {
                continue;
            }
            seen.insert(h, out.len());
            prev.push(last);
            out.push((
                Zeroizing::new(pat.to_vec()),
                f.placeholder[i..i + w].to_vec(),
            ));
        }
    }
    out
}

/// A hash of `b` in ASCII lower case (no folded copy of the bytes kept).
fn folded_hash(b: &[u8]) -> u64 {
    b.iter().fold(0x243f_6a88_85a3_08d3, |h: u64, c| {
        (h.rotate_left(23) ^ u64::from(c.to_ascii_lowercase())).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// The dedup table's hasher: its keys are [`folded_hash`]es already.
#[derive(Default)]
struct Mixed(u64);

impl Hasher for Mixed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v ^ (v >> 32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// atk27o F8/F9: no window is cut from a format's public structure.
    #[test]
    fn windows_skip_public_structure() {
        let jwt = b"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoiYSJ9.Qk3xZ9pL0vT7mWq2Rb8N";
        let (a, b) = unpredictable(jwt);
        assert_eq!(&jwt[a..b], b"Qk3xZ9pL0vT7mWq2Rb8N");
        let url = b"postgres://admin:S3cretPassw0rdXYZ@db.example.test:5432/app";
        let (a, b) = unpredictable(url);
        assert_eq!(&url[a..b], b"S3cretPassw0rdXYZ");
        let slack = b"xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrSt";
        let (a, b) = unpredictable(slack);
        assert_eq!(&slack[a..b], b"AbCdEfGhIjKlMnOpQrSt");
        let plain = b"just-a-random-secret-value";
        assert_eq!(unpredictable(plain), (0, plain.len()));
    }

    #[test]
    fn windows_cover_each_form_and_keep_lengths() {
        let v = b"ghp_REALvalue0123456789";
        let p = b"ghp_PLACEHOLDERxyzabcde";
        let ps = pairs(v, p);
        assert!(ps.iter().all(|(a, b)| a.len() == b.len()));
        // No pattern is made of the public prefix alone.
        assert!(ps.iter().all(|(a, _)| !a.starts_with(b"ghp_")));
        let has = |s: &[u8]| ps.iter().any(|(a, _)| a[..].eq_ignore_ascii_case(s));
        assert!(has(b"REALvalue0"));
        assert!(has(b"9876543210"));
        assert!(has(&hex(b"REALvalue0")));
        assert!(has(&utf16(b"REALvalue0", true)));
        assert!(has(&utf16(b"REALvalue0", false)));
        assert!(has(&utf32(b"REALvalue0", true)));
        assert!(has(&utf32(b"REALvalue0", false)));
        let wide = STANDARD_NO_PAD.encode(utf16(b"x ghp_REALvalue0123456789", true));
        assert!(
            ps.iter()
                .any(|(a, _)| wide.as_bytes().windows(a.len()).any(|w| w == &a[..]))
        );
        let b64 = STANDARD_NO_PAD.encode(b"u:ghp_REALvalue0123456789");
        assert!(
            ps.iter()
                .any(|(a, _)| b64.as_bytes().windows(a.len()).any(|w| w == &a[..]))
        );
    }

    /// atk27u F3: a value with spaces, form-encoded (`+` for a space).
    #[test]
    fn spaces_written_plus_are_a_form() {
        let v = b"correct horse battery staple mule ink 42";
        let p = b"ktNdTjROheJmFfO4XGBCORatto0BOtYIEt0QC6fS";
        let ps = pairs(v, p);
        assert!(ps.iter().all(|(a, b)| a.len() == b.len()));
        let has = |s: &[u8]| ps.iter().any(|(a, _)| a[..].eq_ignore_ascii_case(s));
        assert!(has(b"horse+batt"));
        assert!(has(b"correct+ho"));
    }
}
