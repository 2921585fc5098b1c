//! The escapes of a text, listed once (issue 27): what the yes/no
//! search of the decoded text groups and decodes ([`super::super::scrub`]).

use super::html_named::HTML_NAMED;
use super::{Dec, escape};

/// For each byte, which escapes it may follow (bit 0: `%`, 1: `&`,
/// 2: `\`): every escape [`super::escape`] reads has such a second byte.
const SECOND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let hex = c.is_ascii_hexdigit();
        if hex || c == b'u' || c == b'U' {
            t[b] |= 1;
        }
        if c == b'#' || c.is_ascii_alphabetic() {
            t[b] |= 2;
        }
        let simple = matches!(c, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't');
        if simple || matches!(c, b'x' | b'X' | b'u' | b'U' | b'0'..=b'3') {
            t[b] |= 4;
        }
        b += 1;
    }
    t
};

/// Whether an escape may start at `raw[i]` (one of `%`, `&`, `\`): its
/// next byte is one an escape of that kind has (issue 27: in random
/// text most of these bytes start none, and the full parse was a tenth
/// of the search).
fn may_start(raw: &[u8], i: usize) -> bool {
    let bit = match raw[i] {
        b'%' => 1,
        b'&' => 2,
        _ => 4,
    };
    raw.get(i + 1)
        .is_some_and(|c| SECOND[usize::from(*c)] & bit != 0)
}

/// One escape of `raw` as [`super::Shadow::of`] reads it: where it starts, how
/// long it is, what it decodes to.
pub(crate) struct Esc {
    pub(crate) at: usize,
    pub(crate) len: usize,
    dec: Dec,
}

impl Esc {
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.dec
    }
}

/// The escapes of `raw`, left to right as [`super::Shadow::of`] decodes them.
#[cfg(test)]
pub(crate) fn escapes(raw: &[u8]) -> Vec<Esc> {
    let mut out = Vec::new();
    escapes_in(raw, 0, raw.len(), &mut out);
    out
}

/// Into `out`, the escapes that start in `raw[from..to]` when `raw` is
/// decoded from `from` (issue 27: a yes/no search decodes only stretches
/// of the text, each starting where no escape is cut: see
/// [`super::super::scrub`]). One may end past `to`.
pub(crate) fn escapes_in(raw: &[u8], from: usize, to: usize, out: &mut Vec<Esc>) {
    out.clear();
    let mut next = from;
    for i in memchr::memchr3_iter(b'\\', b'%', b'&', &raw[from..to]) {
        let i = from + i;
        if i < next || !may_start(raw, i) {
            continue;
        }
        if let Some((dec, len)) = escape(&raw[i..]) {
            out.push(Esc { at: i, len, dec });
            next = i + len;
        }
    }
}

/// Whether an escape starting in `raw[from..to]` may decode to a byte
/// `pat` holds, each possible start read alone (s27e): the escapes
/// [`escapes_in`] lists there are read in sequence, each at one of these
/// starts, so when this is false none of them decodes to such a byte.
/// `named`: whether a named HTML reference does ([`named_decode_to`]);
/// when none does, `&name;` is not parsed (a lookup in the names at
/// every `&amp;` was the top of the search of JSON-like text).
pub(crate) fn any_may_decode(
    raw: &[u8],
    (from, to): (usize, usize),
    named: bool,
    pat: impl Fn(u8) -> bool,
) -> bool {
    let at = |i: usize| may_decode_at(raw, from + i, named, &pat);
    let text = &raw[from..to];
    // A short stretch (most are) byte by byte: the vector search's set-up
    // cost more than the search (s27e).
    if text.len() < 64 {
        return (0..text.len()).any(|i| matches!(text[i], b'\\' | b'%' | b'&') && at(i));
    }
    memchr::memchr3_iter(b'\\', b'%', b'&', text).any(at)
}

/// Whether an escape read alone at `raw[i]` (one of `\\`, `%`, `&`)
/// decodes to a byte `pat` holds ([`any_may_decode`]).
pub(crate) fn may_decode_at(raw: &[u8], i: usize, named: bool, pat: impl Fn(u8) -> bool) -> bool {
    if !may_start(raw, i) {
        return false;
    }
    if !named && raw[i] == b'&' && raw[i + 1].is_ascii_alphabetic() {
        return false;
    }
    escape(&raw[i..]).is_some_and(|(dec, _)| dec.iter().any(|b| pat(*b)))
}

/// Whether any named HTML reference the unescaper reads decodes to a
/// byte `pat` holds.
pub(crate) fn named_decode_to(pat: impl Fn(u8) -> bool) -> bool {
    HTML_NAMED.iter().any(|(_, c)| {
        let mut b = [0u8; 4];
        c.encode_utf8(&mut b).bytes().any(&pat)
    })
}
