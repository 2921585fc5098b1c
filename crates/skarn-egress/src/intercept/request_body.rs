//! A method override in a request body (s27b): Rails (`Rack::MethodOverride`),
//! Laravel and Symfony read `_method` from a form body (urlencoded or
//! multipart; Laravel also from a JSON body, Express from whatever body its
//! getter reads), so a secret bound to GET could be used for DELETE by a
//! POST whose body names it. For a request that carries a method- or
//! path-bound secret and a body such a framework parses, the body is read
//! whole before the head goes up ([`MAX_HELD`] at most: past it the request
//! is refused), decoded when it is in a content coding, and searched for a
//! `_method` name in the three formats, each spelling PHP reads as that
//! name ([`super::overrides::parsed_name`]) or Rack and qs read as it
//! ([`super::overrides::bracket_key`]); a coded body is judged raw too
//! (frameworks read the raw bytes), off the proxy's async threads.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

mod budget;
mod heads;
mod judge;
mod parts;
mod wide;

pub(crate) use budget::{Lease, busy};
pub(crate) use judge::judged;
pub(crate) use wide::charset_refusal;

use super::decode::{Coding, Decoder};
use crate::fields::name_is;

/// The most of such a body held (raw, and decoded) before it goes up.
pub(crate) const MAX_HELD: usize = 8 << 20;

/// Whether a framework may read `_method` from this request's body: a
/// body with no `Content-Type` (Rack parses it as a form), or one whose
/// type names a form, multipart or JSON (anywhere in the value, so
/// parameters and lists do not hide it).
pub(crate) fn may_name_method(headers: &[httparse::Header<'_>]) -> bool {
    let types: Vec<String> = headers
        .iter()
        .filter(|h| name_is(h.name, "content-type"))
        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
        .collect();
    types.is_empty()
        || types.iter().any(|t| {
            t.trim().is_empty() || ["form", "multipart", "json"].iter().any(|k| t.contains(k))
        })
}

/// Why the (decoded) body is refused: it names `_method` as a form field,
/// a multipart part or a JSON key, read as bytes and, when it may be
/// UTF-16/32, as those ([`wide`]).
#[cfg(test)]
pub(crate) fn names_method(body: &[u8]) -> Option<&'static str> {
    judge::leased(body, &mut Lease::default(), body.len()).unwrap_or(Some("busy"))
}

fn names_method_in(body: &[u8]) -> Option<&'static str> {
    if form_names(body) {
        return Some(
            "the request body (form) names _method, which could override the bound method",
        );
    }
    if part_names(body) || heads::content_id_names(body) {
        return Some(
            "the request body (multipart) names _method, which could override the bound method",
        );
    }
    if let Some(why) = parts::disposition_refusal(body) {
        return Some(why);
    }
    if json_names(body) {
        return Some(
            "the request body (JSON) names _method, which could override the bound method",
        );
    }
    None
}

fn is_method(name: &[u8]) -> bool {
    let un;
    let mut all = heads::readings(name);
    if name.contains(&b'\\') {
        // Rack dequotes `\x` as `x`.
        un = heads::unescaped(name);
        all.extend(heads::readings(&un));
    }
    all.iter().any(|n| names(n))
}

use super::overrides::names_method as names;

/// `a=1&_method=DELETE` (also `;`-separated, as some parsers split).
fn form_names(body: &[u8]) -> bool {
    body.split(|c| *c == b'&' || *c == b';')
        .any(|kv| is_method(kv.split(|c| *c == b'=').next().unwrap_or(b"")))
}

/// `name="_method"`, `name=_method`, `name*=utf-8''%5Fmethod` anywhere
/// (the parts' headers; a part's content naming it is refused too). Linear
/// in the body (atk27u F5: every `name=` of `name=name=...` scanned to the
/// end of one long run): an unquoted value's end and last `'` are found
/// once per run, and a value is judged whole only when it may start
/// `_method` ([`heads::may_start_method`]); such a value longer than
/// [`heads::LONG_NAME`] is refused (fail closed).
fn part_names(body: &[u8]) -> bool {
    let low = body;
    let mut at = 0;
    // The unquoted run last scanned: (start, end, last `'` in it).
    let mut run: (usize, usize, Option<usize>) = (0, 0, None);
    while let Some(i) = parts::find_ci(&low[at..], b"name") {
        let mut j = at + i + 4;
        at = j;
        let skip = |j: &mut usize| {
            while *j < low.len() && matches!(low[*j], b' ' | b'\t' | b'*') {
                *j += 1;
            }
        };
        skip(&mut j);
        if low.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        skip(&mut j);
        let (value, quote): (&[u8], Option<usize>) = if low.get(j) == Some(&b'"') {
            let rest = &body[j + 1..];
            let end = rest.iter().position(|c| *c == b'"').unwrap_or(rest.len());
            let v = &rest[..end];
            (v, v.iter().rposition(|c| *c == b'\''))
        } else {
            if !(run.0 <= j && j < run.1) {
                let rest = &body[j..];
                let end = rest
                    .iter()
                    .position(|c| matches!(c, b';' | b'\r' | b'\n' | b' ' | b'\t'))
                    .unwrap_or(rest.len());
                let q = rest[..end].iter().rposition(|c| *c == b'\'').map(|q| j + q);
                run = (j, j + end, q);
            }
            let q = run.2.filter(|q| *q >= j).map(|q| q - j);
            (&body[j..run.1], q)
        };
        // Rack's token (atk27t F1): it ends at any of its separators.
        let token = heads::rack_token(&body[j..]);
        // RFC 2231: `charset'lang'percent-encoded`; judged before and
        // after the cut (PHP quotes with `'`: atk27t F6).
        let cut = match quote {
            Some(q) => &value[q + 1..],
            None => value,
        };
        for v in [value, cut, token] {
            if !heads::may_start_method(v) {
                continue;
            }
            if v.len() > heads::LONG_NAME || is_method(v) {
                return true;
            }
        }
    }
    false
}

/// A JSON key (a string followed by `:`), unescaped, at any depth.
fn json_names(body: &[u8]) -> bool {
    let mut i = 0;
    while i < body.len() {
        if body[i] != b'"' {
            i += 1;
            continue;
        }
        let (s, end) = json_string(body, i + 1);
        i = end;
        let mut k = end;
        while k < body.len() && body[k].is_ascii_whitespace() {
            k += 1;
        }
        if body.get(k) == Some(&b':') && is_method(&s) {
            return true;
        }
    }
    false
}

/// The unescaped string starting after its opening quote at `i`, and the
/// index past its closing quote.
fn json_string(b: &[u8], mut i: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'"' => return (out, i + 1),
            b'\\' if i + 1 < b.len() => {
                let e = b[i + 1];
                i += 2;
                match e {
                    b'u' => {
                        let hex = b.get(i..i + 4).and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u32::from_str_radix(h, 16).ok()) {
                            Some(c) => {
                                let ch = char::from_u32(c).unwrap_or('\u{fffd}');
                                let mut buf = [0u8; 4];
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                i += 4;
                            }
                            None => out.push(b'u'),
                        }
                    }
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    c => out.push(c),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, i)
}

/// The held body decoded from its coding, at most [`MAX_HELD`] bytes,
/// taken from the proxy's budget (`Err((true, _))` past it).
pub(crate) fn decoded(c: Coding, raw: &[u8], lease: &mut Lease) -> Result<Vec<u8>, (bool, String)> {
    let base = lease.taken().max(raw.len());
    let mut d = Decoder::new(c);
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let (n, o) = d.step(rest).map_err(|e| (false, e.0))?;
        rest = &rest[n..];
        grow(&mut out, &o, lease, base)?;
        if n == 0 && o.is_empty() {
            break;
        }
    }
    if !rest.is_empty() {
        return Err((false, "the decoder made no progress".into()));
    }
    let o = d.finish().map_err(|e| (false, e.0))?;
    grow(&mut out, &o, lease, base)?;
    Ok(out)
}

/// `out` extended by `o`, its whole allocation taken from `lease` (on top
/// of `base`) before it grows.
fn grow(out: &mut Vec<u8>, o: &[u8], lease: &mut Lease, base: usize) -> Result<(), (bool, String)> {
    let need = out.len() + o.len();
    if need > MAX_HELD {
        return Err((false, too_big()));
    }
    if need > out.capacity() {
        let cap = need.max(out.capacity() * 2).clamp(64 << 10, MAX_HELD);
        if !lease.cover(base + cap) {
            return Err((true, busy()));
        }
        out.reserve_exact(cap - out.len());
    }
    out.extend_from_slice(o);
    Ok(())
}

/// The refusal past the bound (fail closed).
pub(crate) fn too_big() -> String {
    format!(
        "the request body is read before a method- or path-bound secret goes (a form, \
         multipart or JSON body can name _method) and is larger than {} MiB: refused",
        MAX_HELD >> 20
    )
}

/// A body held in memory, refused past [`MAX_HELD`] or past the proxy's
/// budget of held bytes (`busy`).
#[derive(Default)]
pub(crate) struct Held {
    pub(crate) data: Vec<u8>,
    pub(crate) over: bool,
    pub(crate) busy: bool,
    pub(crate) lease: Lease,
}

impl AsyncWrite for Held {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let need = me.data.len() + b.len();
        if need > MAX_HELD {
            me.over = true;
            return Poll::Ready(Err(io::Error::other(too_big())));
        }
        // Taken as bytes arrive (atk27t F5), the whole allocation counted.
        if need > me.data.capacity() {
            let cap = need.max(me.data.capacity() * 2).clamp(64 << 10, MAX_HELD);
            if !me.lease.cover(cap) {
                me.busy = true;
                return Poll::Ready(Err(io::Error::other(busy())));
            }
            me.data.reserve_exact(cap - me.data.len());
        }
        me.data.extend_from_slice(b);
        Poll::Ready(Ok(b.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::names_method;

    #[test]
    fn method_names_in_the_three_formats_are_found() {
        for b in [
            &b"a=1&_method=DELETE"[..],
            b"a=1&%5Fmethod=DELETE",
            b"x=1;.method=PUT",
            b"--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nDELETE\r\n--b--",
            b"--b\r\nContent-Disposition: form-data; NAME = _method\r\n\r\nDELETE",
            b"--b\r\nContent-Disposition: form-data; name*=utf-8''%5Fmethod\r\n\r\nX",
            b"{\"a\":1,\"_method\":\"DELETE\"}",
            b"{\"a\": {\"\\u005fmethod\" : \"DELETE\"}}",
        ] {
            assert!(names_method(b).is_some(), "{}", String::from_utf8_lossy(b));
        }
        for b in [
            &b"a=1&payment_method=card"[..],
            b"{\"payment_method\":\"_method\"}",
            b"--b\r\nContent-Disposition: form-data; name=\"method_x\"\r\n\r\n_method\r\n",
        ] {
            assert!(names_method(b).is_none(), "{}", String::from_utf8_lossy(b));
        }
    }
}

#[cfg(test)]
mod tests_f27s;
