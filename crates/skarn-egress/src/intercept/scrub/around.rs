//! The unescaped search without the whole decoded copy (issue 27): a
//! window found in the decoded text either holds no decoded escape (then
//! the raw bytes hold it, searched already) or holds bytes of escapes
//! that lie closer together than a window is long. So the escapes are
//! grouped in clusters (a gap of at least `longest` literal bytes ends
//! one), and each cluster is decoded with `longest - 1` literal bytes on
//! either side and searched alone: the same yes/no as the search of the
//! whole decoded copy, for a fraction of the copying on text whose
//! escapes are sparse (random bytes, prose, code).

use crate::intercept::unescape::Esc;

/// Whether `search` finds a window (of at most `longest` bytes) holding
/// a decoded escape in `raw` unescaped (`escs`: its escapes).
pub(super) fn any_around(
    raw: &[u8],
    escs: &[Esc],
    longest: usize,
    scratch: &mut Vec<u8>,
    mut search: impl FnMut(&[u8]) -> bool,
) -> bool {
    if longest == 0 {
        return false;
    }
    let mut i = 0;
    if !escs.is_empty() {
        scratch.reserve(raw.len());
    }
    while i < escs.len() {
        let first = i;
        let mut end = escs[i].at + escs[i].len;
        i += 1;
        while i < escs.len() && escs[i].at - end < longest {
            end = escs[i].at + escs[i].len;
            i += 1;
        }
        // The previous cluster ended `longest` bytes or more before
        // `lo`, the next starts as far after `hi`: both sides literal.
        let lo = escs[first].at.saturating_sub(longest - 1);
        let hi = (end + longest - 1).min(raw.len());
        scratch.clear();
        scratch.extend_from_slice(&raw[lo..escs[first].at]);
        for (k, e) in escs[first..i].iter().enumerate() {
            scratch.extend_from_slice(e.bytes());
            let to = escs.get(first + k + 1).filter(|_| first + k + 1 < i);
            let to = to.map_or(hi, |n| n.at);
            scratch.extend_from_slice(&raw[e.at + e.len..to]);
        }
        if search(scratch) {
            return true;
        }
    }
    false
}
