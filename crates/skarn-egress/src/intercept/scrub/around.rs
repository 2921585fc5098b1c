//! The unescaped search without the whole decoded copy (issue 27): a
//! window found in the decoded text either holds no decoded escape (then
//! the raw bytes hold it, searched already) or holds bytes of escapes
//! that lie closer together than a window is long.
//!
//! Only relevant escapes count: a window is made of the patterns' bytes
//! alone (either ASCII case), so an escape none of whose decoded bytes is
//! one of them (`\"`, `\n`, `%20`, `&amp;`, `\u00e9` for most values) is
//! never inside a match: it ends the text a match can lie in, as a
//! literal byte outside the patterns does. The relevant escapes are
//! grouped in clusters (a gap of at least `longest` raw bytes ends one),
//! and each cluster is decoded (every escape in it, relevant or not, so
//! the copy is exactly that stretch of the decoded text) with up to
//! `longest - 1` bytes on either side and searched alone. A region's end
//! never cuts an escape: one straddling it is irrelevant (a relevant one
//! would be in the cluster) and is left out whole. The same yes/no as
//! the search of the whole decoded copy, for a fraction of the copying:
//! JSON whose escapes are quotes, newlines, spaces or accents decodes
//! nothing.

use super::may_match::MayMatch;
use crate::intercept::unescape::{Esc, any_may_decode, escapes_in};

/// Whether `search` finds a window (of at most `longest` bytes, made of
/// bytes `pat` has) holding a decoded escape in `raw[s..e]` unescaped: a
/// stretch that starts where no escape is cut and holds every match it
/// could be part of ([`super::stretch`]). `named`: whether a named HTML
/// reference decodes to a byte of `pat`. `escs` and `scratch`: buffers.
#[allow(clippy::too_many_arguments)]
pub(super) fn any_around(
    raw: &[u8],
    (s, e): (usize, usize),
    longest: usize,
    (pat, named): (&MayMatch, bool),
    escs: &mut Vec<Esc>,
    scratch: &mut Vec<u8>,
    mut search: impl FnMut(&[u8]) -> bool,
) -> bool {
    // Nearly every stretch has no escape that decodes to a pattern byte
    // (s27e): told without listing the escapes.
    if longest == 0 || !any_may_decode(raw, (s, e), named, |b| pat.has(b)) {
        return false;
    }
    escapes_in(raw, s, e, escs);
    let escs = &escs[..];
    let relevant = |x: &Esc| x.bytes().iter().any(|b| pat.has(*b));
    let mut i = 0;
    while i < escs.len() {
        if !relevant(&escs[i]) {
            i += 1;
            continue;
        }
        let first = i;
        let mut last = i;
        let mut end = escs[i].at + escs[i].len;
        i += 1;
        while i < escs.len() && escs[i].at - end < longest {
            if relevant(&escs[i]) {
                last = i;
                end = escs[i].at + escs[i].len;
            }
            i += 1;
        }
        let (k, lo, m, hi) = region((s, e), escs, first, last, longest);
        scratch.clear();
        let mut pos = lo;
        for x in &escs[k..m] {
            scratch.extend_from_slice(&raw[pos..x.at]);
            scratch.extend_from_slice(x.bytes());
            pos = x.at + x.len;
        }
        scratch.extend_from_slice(&raw[pos..hi]);
        if search(scratch) {
            return true;
        }
    }
    false
}

/// The raw region of the cluster `escs[first..=last]`: `longest - 1`
/// bytes on either side inside the stretch `s..e`, less an escape
/// straddling either end. Returns (first escape inside, start, one past
/// the last escape inside, end).
fn region(
    (s, e): (usize, usize),
    escs: &[Esc],
    first: usize,
    last: usize,
    longest: usize,
) -> (usize, usize, usize, usize) {
    let mut lo = escs[first].at.saturating_sub(longest - 1).max(s);
    let mut k = first;
    while k > 0 && escs[k - 1].at + escs[k - 1].len > lo {
        k -= 1;
    }
    if k < first && escs[k].at < lo {
        lo = escs[k].at + escs[k].len;
        k += 1;
    }
    let end = escs[last].at + escs[last].len;
    let mut hi = (end + longest - 1).min(e);
    let mut m = last + 1;
    while m < escs.len() && escs[m].at < hi {
        m += 1;
    }
    if m > last + 1 && escs[m - 1].at + escs[m - 1].len > hi {
        hi = escs[m - 1].at;
        m -= 1;
    }
    (k, lo, m, hi)
}
