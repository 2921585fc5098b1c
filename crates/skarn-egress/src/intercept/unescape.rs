//! Escaped text, decoded for the scrubber (atk27 F13): JSON string
//! escapes (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX` for
//! any character, a surrogate pair for one past the BMP; ECMAScript's
//! `\u{H..}`) and URL `%XX` escapes (JavaScript's `%uXXXX` too); C-style `\xHH` and octal `\NNN`; HTML numeric character
//! references `&#DDD;` and `&#xHH;`, the `;` optional (atk27c F1, atk27k F5) and the named ones for
//! ASCII characters and the no-break space (`&quot;`, `&lt;`, `&amp;`,
//! `&apos;`, `&sol;`, ..., the four legacy ones without `;` too: atk27d
//! F7). The shadow copy holds the
//! decoded bytes and, for each, where
//! its escape (or raw byte) starts, so a match found in the shadow is
//! rewritten in the original, each escape keeping its length. Decoding is
//! one pass, no larger than its input, one level deep.

/// Most bytes of escaped text one decoded byte can come from
/// (`\u{000000000000000074}`: a braced escape's digits are bounded to
/// [`BRACE_DIGITS`]; `&#x0000041;`: an HTML reference's digits to 7; the
/// named references kept are at most 10 bytes, `&UnderBar;`).
pub(crate) const ESCAPE_MAX: usize = 3 + BRACE_DIGITS + 1;

/// Digits (and `_` separators) a braced escape `\u{...}`, `\x{...}` may
/// have, leading zeros included. ECMAScript takes any number of leading
/// zeros and Rust `_` between digits (atk27l F11): up to this many are
/// read; a longer one is left as it is (SECURITY.md).
const BRACE_DIGITS: usize = 16;

/// Digits an HTML numeric reference may have (leading zeros included).
const HTML_DIGITS: usize = 7;

pub(crate) struct Shadow {
    /// The decoded bytes.
    pub(crate) bytes: Vec<u8>,
    /// For each decoded byte, where its source starts.
    starts: Vec<usize>,
}

fn hex_val(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

fn hex4(b: &[u8]) -> Option<u32> {
    if b.len() < 4 {
        return None;
    }
    b[..4]
        .iter()
        .try_fold(0u32, |acc, c| Some(acc * 16 + hex_val(*c)?))
}

/// An HTML numeric character reference at the start of `b` (`&#65;`,
/// `&#x41;`): (character, length).
fn html_ref(b: &[u8]) -> Option<(u32, usize)> {
    let rest = b.strip_prefix(b"&#")?;
    let (radix, digits, skip) = match rest.first() {
        Some(b'x' | b'X') => (16, &rest[1..], 3),
        _ => (10, rest, 2),
    };
    let n = digits
        .iter()
        .take(HTML_DIGITS + 1)
        .take_while(|c| (**c as char).is_digit(radix))
        .count();
    if n == 0 || n > HTML_DIGITS {
        return None;
    }
    // HTML decodes a reference without its `;` too (a parse error that
    // every parser forgives: `&#66&#101`, atk27k F5); it then ends at the
    // first byte that is not a digit.
    let semi = usize::from(digits.get(n) == Some(&b';'));
    let v = digits[..n].iter().try_fold(0u32, |acc, c| {
        Some(acc * radix + (*c as char).to_digit(radix)?)
    })?;
    Some((v, skip + n + semi))
}

use html_named::HTML_NAMED;

/// An HTML named reference at the start of `b` (`&quot;`): (character,
/// length); the longest name that matches.
fn html_named(b: &[u8]) -> Option<(char, usize)> {
    let rest = b.strip_prefix(b"&")?;
    // Every name starts with a letter: only the names of that letter are
    // compared (issue 27: a scan of the whole table at every `&` was a
    // fifth of the search's time on random and JSON-like text).
    let first = *rest.first().filter(|c| c.is_ascii_alphabetic())?;
    HTML_NAMED
        .iter()
        .filter(|(n, _)| {
            let n = n.as_bytes();
            // Compared in place (names are at most 9 bytes: a call to the
            // library's comparison cost more than the comparison).
            n[0] == first && rest.len() >= n.len() && n.iter().zip(rest).all(|(a, b)| a == b)
        })
        .max_by_key(|(n, _)| n.len())
        .map(|(n, c)| (*c, n.len() + 1))
}

/// The digits of a braced escape after its `{` and the `}`: (value,
/// length of digits and separators). A `_` may stand between digits
/// (Rust); at most [`BRACE_DIGITS`] of both, at least one digit first.
fn braced(b: &[u8]) -> Option<(u32, usize)> {
    let n = b
        .iter()
        .take(BRACE_DIGITS + 1)
        .take_while(|c| c.is_ascii_hexdigit() || **c == b'_')
        .count();
    if n == 0 || n > BRACE_DIGITS || !b[0].is_ascii_hexdigit() || b.get(n) != Some(&b'}') {
        return None;
    }
    let v = b[..n]
        .iter()
        .filter(|c| **c != b'_')
        .try_fold(0u32, |acc, c| {
            acc.checked_mul(16)?.checked_add(hex_val(*c)?)
        })?;
    Some((v, n))
}

/// One decoded character's bytes (UTF-8, or one byte), kept inline: an
/// escape decodes without an allocation (issue 27: the decoded copy is
/// made of every response).
struct Dec {
    b: [u8; 4],
    n: usize,
}

impl std::ops::Deref for Dec {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.b[..self.n]
    }
}

fn byte(x: u8) -> Dec {
    Dec {
        b: [x, 0, 0, 0],
        n: 1,
    }
}

fn utf8(ch: u32) -> Option<Dec> {
    let ch = char::from_u32(ch)?;
    let mut b = [0u8; 4];
    let n = ch.encode_utf8(&mut b).len();
    Some(Dec { b, n })
}

/// One escape at the start of `b`: (decoded character's bytes, length).
fn escape(b: &[u8]) -> Option<(Dec, usize)> {
    match b {
        // JavaScript's `escape()`: `%uXXXX` (atk27k F5).
        [b'%', b'u' | b'U', rest @ ..] => {
            let u = hex4(rest)?;
            Some((utf8(u)?, 6))
        }
        [b'%', h, l, ..] => Some((byte((hex_val(*h)? * 16 + hex_val(*l)?) as u8), 3)),
        [b'&', b'#', ..] => {
            let (ch, len) = html_ref(b)?;
            Some((utf8(ch)?, len))
        }
        [b'&', ..] => {
            let (ch, len) = html_named(b)?;
            Some((utf8(u32::from(ch))?, len))
        }
        [b'\\', b'x' | b'X', h, l, ..] if *h != b'{' => {
            Some((byte((hex_val(*h)? * 16 + hex_val(*l)?) as u8), 4))
        }
        [
            b'\\',
            a @ b'0'..=b'3',
            o1 @ b'0'..=b'7',
            o2 @ b'0'..=b'7',
            ..,
        ] => Some((
            byte(((a - b'0') << 6) | ((o1 - b'0') << 3) | (o2 - b'0')),
            4,
        )),
        [b'\\', c, rest @ ..] => {
            let one = |x: u8| Some((byte(x), 2));
            match c {
                b'"' | b'\\' | b'/' => one(*c),
                b'b' => one(8),
                b'f' => one(12),
                b'n' => one(b'\n'),
                b'r' => one(b'\r'),
                b't' => one(b'\t'),
                // Code-point escapes in braces: ECMAScript's and PHP's
                // `\u{67}` (any leading zeros: atk27k F5, atk27l F11),
                // Rust's (`_` between digits), Perl's and C++23's `\x{67}`.
                b'u' | b'x' if rest.first() == Some(&b'{') => {
                    let (v, n) = braced(&rest[1..])?;
                    Some((utf8(v)?, 4 + n))
                }
                // Python's, YAML's and C's `\U0000XXXX` (atk27l F11b);
                // four digits where eight are not there.
                b'U' if rest.len() >= 8 && rest[..8].iter().all(u8::is_ascii_hexdigit) => {
                    let v = rest[..8]
                        .iter()
                        .try_fold(0u32, |acc, c| Some(acc * 16 + hex_val(*c)?))?;
                    Some((utf8(v)?, 10))
                }
                b'u' | b'U' => {
                    let u = hex4(rest)?;
                    let (ch, len) = if (0xD800..0xDC00).contains(&u) {
                        let lo = match &rest[4..] {
                            [b'\\', b'u' | b'U', more @ ..] => hex4(more)?,
                            _ => return None,
                        };
                        if !(0xDC00..0xE000).contains(&lo) {
                            return None;
                        }
                        (0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), 12)
                    } else {
                        (u, 6)
                    };
                    Some((utf8(ch)?, len))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The bytes of [`Shadow::of`] alone (no source positions), copied
/// between escapes in whole runs: what a yes/no search needs, at a
/// fraction of the cost (the check of a run's files reads megabytes).
#[cfg(test)]
pub(crate) fn decoded(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut copied = 0;
    for i in memchr::memchr3_iter(b'\\', b'%', b'&', raw) {
        if i < copied {
            continue;
        }
        if let Some((dec, len)) = escape(&raw[i..]) {
            if out.capacity() == 0 {
                out.reserve(raw.len());
            }
            out.extend_from_slice(&raw[copied..i]);
            out.extend_from_slice(&dec);
            copied = i + len;
        }
    }
    if copied == 0 {
        return None;
    }
    out.extend_from_slice(&raw[copied..]);
    Some(out)
}

impl Shadow {
    /// The decoded copy of `raw`; `None` when it holds no escape.
    pub(crate) fn of(raw: &[u8]) -> Option<Shadow> {
        let first = memchr::memchr3(b'\\', b'%', b'&', raw)?;
        let mut bytes = Vec::with_capacity(raw.len());
        let mut starts = Vec::with_capacity(raw.len());
        bytes.extend_from_slice(&raw[..first]);
        starts.extend(0..first);
        let mut i = first;
        let mut any = false;
        while i < raw.len() {
            if matches!(raw[i], b'\\' | b'%' | b'&')
                && let Some((dec, len)) = escape(&raw[i..])
            {
                starts.extend(std::iter::repeat_n(i, dec.len()));
                bytes.extend_from_slice(&dec);
                i += len;
                any = true;
                continue;
            }
            bytes.push(raw[i]);
            starts.push(i);
            i += 1;
        }
        any.then_some(Shadow { bytes, starts })
    }

    /// The source span of decoded byte `j` (`len`: the source's length).
    pub(crate) fn span(&self, j: usize, len: usize) -> (usize, usize) {
        let s = self.starts[j];
        let e = self.starts[j + 1..]
            .iter()
            .find(|x| **x != s)
            .copied()
            .unwrap_or(len);
        (s, e)
    }
}

/// Overwrite one escape `slot` so it carries byte `r` instead, as long as
/// it was and still an escape of its kind (`%XX`, `\u00XX`; a two-byte
/// escape becomes `r` twice).
pub(crate) fn rewrite(slot: &mut [u8], r: u8) {
    const H: &[u8; 16] = b"0123456789abcdef";
    let hx = [H[usize::from(r >> 4)], H[usize::from(r & 15)]];
    match slot.len() {
        3 if slot[0] == b'%' => slot[1..].copy_from_slice(&hx),
        // `\xHH`, `\NNN`.
        4 if slot[0] == b'\\' && matches!(slot[1], b'x' | b'X') => slot[2..].copy_from_slice(&hx),
        4 if slot[0] == b'\\' && slot[1].is_ascii_digit() => {
            slot[1..].copy_from_slice(&[b'0' + (r >> 6), b'0' + ((r >> 3) & 7), b'0' + (r & 7)]);
        }
        // `%uXXXX`.
        6 if slot[0] == b'%' && matches!(slot[1], b'u' | b'U') => {
            slot[2..].copy_from_slice(&[b'0', b'0', hx[0], hx[1]]);
        }
        // `\U000000HH`.
        10 if slot.starts_with(b"\\U") => {
            slot[2..].copy_from_slice(&[b'0', b'0', b'0', b'0', b'0', b'0', hx[0], hx[1]]);
        }
        // `\u{HH}` (`\x{HH}`) of the same length, zero-padded.
        n if n >= 5
            && (slot.starts_with(b"\\u{") || slot.starts_with(b"\\x{"))
            && slot[n - 1] == b'}' =>
        {
            let width = n - 4;
            let digits = format!("{r:0width$x}");
            if digits.len() == width {
                slot[3..n - 1].copy_from_slice(digits.as_bytes());
            } else {
                slot.fill(r);
            }
        }
        // `&#...;` (or without its `;`) of the same length and radix,
        // zero-padded.
        n if n >= 3 && slot.starts_with(b"&#") => {
            let hex = matches!(slot[2], b'x' | b'X');
            let semi = usize::from(slot[n - 1] == b';');
            let (at, width) = if hex {
                (3, n.saturating_sub(3 + semi))
            } else {
                (2, n - 2 - semi)
            };
            let digits = if hex {
                format!("{r:0width$x}")
            } else {
                format!("{r:0width$}")
            };
            if width > 0 && digits.len() == width {
                slot[at..at + width].copy_from_slice(digits.as_bytes());
            } else {
                slot.fill(r);
            }
        }
        n if n % 6 == 0 && slot[0] == b'\\' => {
            for c in slot.chunks_mut(6) {
                c.copy_from_slice(&[b'\\', b'u', b'0', b'0', hx[0], hx[1]]);
            }
        }
        _ => slot.fill(r),
    }
}

mod html_named;
mod list;
#[cfg(test)]
pub(crate) use list::escapes;
pub(crate) use list::{Esc, any_may_decode, escapes_in, may_decode_at, named_decode_to};
#[cfg(test)]
mod tests;
