//! Multipart part names as RFC 7578 / RFC 2231 readers read them (f27s):
//! Go's `mime.ParseMediaType` joins `name*0`, `name*1`… pieces and decodes
//! `name*N*=charset''%XX` ones, so the part's name is judged once joined.
//! A Content-Disposition whose name parameters a reader could read two
//! ways (the same parameter twice, `name` with `name*`, a gap in the
//! pieces, an unterminated quote, a charset other than UTF-8/ASCII/Latin-1)
//! is refused: fail closed.

use super::is_method;

/// A part named `_method`.
const NAMED: &str =
    "the request body (multipart) names _method, which could override the bound method";
/// A part whose name cannot be read one way only.
const AMBIGUOUS: &str = "the request body (multipart) has a part whose name parameters are \
     ambiguous or unparseable (RFC 2231 pieces), which could name _method: refused";

/// Why a multipart body is refused for the names its parts' headers give.
/// Each header line is read once, from its first `content-disposition:`;
/// a second one in the same (unfolded) line is refused as ambiguous, and
/// the search goes on from the line's end (atk27u F5: every occurrence
/// re-read its line to the end, so one long line cost its square).
pub(super) fn disposition_refusal(body: &[u8]) -> Option<&'static str> {
    const KEY: &[u8] = b"content-disposition";
    let mut at = 0;
    while let Some(i) = find_ci(&body[at..], KEY) {
        at += i + KEY.len();
        // Only a `:` (after blanks and folds) makes it a header.
        let colon = body[at..]
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'));
        if colon.is_none_or(|k| body[at + k] != b':') {
            continue;
        }
        let (line, used) = unfolded(&body[at..]);
        at += used;
        let line = trim_start(&line);
        let Some(rest) = line.strip_prefix(b":") else {
            continue;
        };
        if find_ci(rest, KEY).is_some() {
            return Some(AMBIGUOUS);
        }
        match name_of(rest) {
            Ok(Some(n)) if is_method(&n) => return Some(NAMED),
            Ok(_) => {}
            Err(()) => return Some(AMBIGUOUS),
        }
    }
    None
}

/// Case-insensitive search for an ASCII needle.
pub(super) fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// The header line starting at `b`, its folds (a line break followed by
/// a space or tab) joined, up to its end; and how many bytes of `b` it
/// took.
fn unfolded(b: &[u8]) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' | b'\n' => {
                let mut k = i;
                while k < b.len() && matches!(b[k], b'\r' | b'\n') {
                    k += 1;
                }
                if !matches!(b.get(k), Some(b' ' | b'\t')) {
                    break;
                }
                out.push(b' ');
                i = k;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, i)
}

fn trim_start(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[s..]
}

/// The `name` the disposition's parameters give (joined, decoded), or
/// `Err` when a reader could read it another way.
fn name_of(v: &[u8]) -> Result<Option<Vec<u8>>, ()> {
    let mut plain: Option<Vec<u8>> = None;
    let mut ext: Option<Vec<u8>> = None;
    let mut pieces: Vec<(usize, bool, Vec<u8>)> = Vec::new();
    let mut i = v.iter().position(|c| *c == b';').map_or(v.len(), |p| p + 1);
    while i < v.len() {
        while i < v.len() && (v[i].is_ascii_whitespace() || v[i] == b';') {
            i += 1;
        }
        let ks = i;
        while i < v.len() && !matches!(v[i], b'=' | b';') {
            i += 1;
        }
        let key: Vec<u8> = v[ks..i]
            .iter()
            .filter(|c| !c.is_ascii_whitespace())
            .map(u8::to_ascii_lowercase)
            .collect();
        let is_name = key.starts_with(b"name");
        if v.get(i) != Some(&b'=') {
            if is_name {
                return Err(());
            }
            continue;
        }
        i += 1;
        while i < v.len() && v[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = Vec::new();
        if v.get(i) == Some(&b'"') {
            i += 1;
            let mut closed = false;
            while i < v.len() {
                match v[i] {
                    b'"' => {
                        closed = true;
                        i += 1;
                        break;
                    }
                    b'\\' if i + 1 < v.len() => {
                        value.push(v[i + 1]);
                        i += 2;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
            if !closed && is_name {
                return Err(());
            }
        } else {
            while i < v.len() && !matches!(v[i], b';') && !v[i].is_ascii_whitespace() {
                value.push(v[i]);
                i += 1;
            }
        }
        if !is_name {
            continue;
        }
        match &key[4..] {
            b"" => once(&mut plain, value)?,
            b"*" => once(&mut ext, extended(&value)?)?,
            rest => {
                // `names=`, `name_x=`: another parameter.
                let Some(rest) = rest.strip_prefix(b"*") else {
                    continue;
                };
                let (digits, star) = match rest.strip_suffix(b"*") {
                    Some(d) => (d, true),
                    None => (rest, false),
                };
                if digits.is_empty()
                    || !digits.iter().all(u8::is_ascii_digit)
                    || (digits.len() > 1 && digits[0] == b'0')
                    || digits.len() > 4
                {
                    return Err(());
                }
                let n: usize = std::str::from_utf8(digits)
                    .map_err(|_| ())?
                    .parse()
                    .map_err(|_| ())?;
                if pieces.iter().any(|p| p.0 == n) {
                    return Err(());
                }
                pieces.push((n, star, value));
            }
        }
    }
    let given =
        usize::from(plain.is_some()) + usize::from(ext.is_some()) + usize::from(!pieces.is_empty());
    if given > 1 {
        return Err(());
    }
    if pieces.is_empty() {
        return Ok(plain.or(ext));
    }
    pieces.sort_by_key(|p| p.0);
    let mut joined = Vec::new();
    for (k, (n, star, value)) in pieces.iter().enumerate() {
        if *n != k {
            return Err(());
        }
        match (*star, k) {
            (true, 0) => joined.extend(extended(value)?),
            (true, _) => joined.extend(percent(value)?),
            (false, _) => joined.extend_from_slice(value),
        }
    }
    Ok(Some(joined))
}

fn once(slot: &mut Option<Vec<u8>>, v: Vec<u8>) -> Result<(), ()> {
    if slot.is_some() {
        return Err(());
    }
    *slot = Some(v);
    Ok(())
}

/// `charset'lang'%XX…` decoded; a charset readers may decode otherwise
/// than as bytes of ASCII is refused.
fn extended(v: &[u8]) -> Result<Vec<u8>, ()> {
    let mut it = v.splitn(3, |c| *c == b'\'');
    let (Some(cs), Some(_lang), Some(text)) = (it.next(), it.next(), it.next()) else {
        return Err(());
    };
    let cs = cs.to_ascii_lowercase();
    let known: [&[u8]; 7] = [
        b"",
        b"utf-8",
        b"utf8",
        b"us-ascii",
        b"ascii",
        b"iso-8859-1",
        b"latin1",
    ];
    if !known.contains(&&cs[..]) {
        return Err(());
    }
    percent(text)
}

fn percent(v: &[u8]) -> Result<Vec<u8>, ()> {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        if v[i] == b'%' {
            let h = v.get(i + 1..i + 3).ok_or(())?;
            let h = std::str::from_utf8(h).map_err(|_| ())?;
            out.push(u8::from_str_radix(h, 16).map_err(|_| ())?);
            i += 3;
        } else {
            out.push(v[i]);
            i += 1;
        }
    }
    Ok(out)
}
