//! Part names as Rack and PHP read them (f27u, atk27t F1, F6): Rack takes
//! a part's name from the last `; name=` of its head (even inside another
//! parameter's quoted value), as a token ending at any separator, and
//! from a `Content-ID` header when there is none; PHP quotes a value with
//! `'` as well as `"`. Each reading is judged: a part whose head names
//! `_method` under any of them is refused (fail closed).

use super::parts::find_ci;

/// The ways a name's raw bytes may be read: as they are, `\x` undone
/// (Rack's dequoting), the text inside `'` quotes (PHP) and with `'`
/// trimmed.
pub(super) fn readings(raw: &[u8]) -> Vec<&[u8]> {
    let mut all = vec![raw];
    if let Some(rest) = raw.strip_prefix(b"'") {
        all.push(rest.split(|c| *c == b'\'').next().unwrap_or(b""));
    }
    let trimmed = trim_quotes(raw);
    if trimmed.len() != raw.len() {
        all.push(trimmed);
    }
    all
}

fn trim_quotes(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !matches!(c, b'\'' | b'"' | b'<' | b'>'))
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !matches!(c, b'\'' | b'"' | b'<' | b'>'))
        .map_or(s, |i| i + 1);
    &b[s..e.max(s)]
}

/// `\x` read as `x`.
pub(super) fn unescaped(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            i += 1;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The value Rack reads after `name=`: a quoted string (`\x` is `x`) or a
/// token ending at any of its separators.
pub(super) fn rack_token(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .position(|c| {
            c.is_ascii_whitespace()
                || matches!(
                    c,
                    b'(' | b')'
                        | b'<'
                        | b'>'
                        | b','
                        | b';'
                        | b':'
                        | b'\\'
                        | b'"'
                        | b'/'
                        | b'['
                        | b']'
                        | b'?'
                        | b'='
                )
        })
        .unwrap_or(b.len());
    &b[..end]
}

/// A `Content-ID` header (Rack names a part by it when its disposition
/// gives no name) whose value, read any of the ways above (also with
/// `\x` undone and `<>` stripped), is `_method`. Each line is judged once,
/// at its first `content-id:` (what Rack's search of the head finds
/// first): the search goes on from the line's end, so a line of
/// repetitions costs its length, not its square (atk27u F5).
pub(super) fn content_id_names(body: &[u8]) -> bool {
    const KEY: &[u8] = b"content-id";
    let mut at = 0;
    while let Some(i) = find_ci(&body[at..], KEY) {
        at += i + KEY.len();
        let rest = &body[at..];
        let s = rest
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t'))
            .unwrap_or(rest.len());
        let Some(rest) = rest[s..].strip_prefix(b":") else {
            continue;
        };
        let end = rest
            .iter()
            .position(|c| matches!(c, b'\r' | b'\n'))
            .unwrap_or(rest.len());
        at += s + 1 + end;
        let v = rest[..end].trim_ascii();
        let u = unescaped(v);
        if [v, &u[..]]
            .iter()
            .flat_map(|v| readings(v))
            .any(|n| super::is_method(n) || super::is_method(rack_token(n)))
        {
            return true;
        }
    }
    false
}

/// A name longer than this that may start `_method` is refused without
/// being read every way (atk27u F5: no real form names a field so).
pub(super) const LONG_NAME: usize = 256;

/// Whether a raw name may read as `_method` any way the judge reads it:
/// once the bytes a reading may drop or turn into `_` at its start
/// (spaces, brackets, quotes, `<>`, `\`, `+`, `_`, `.`, 0x80-0x9f, also as
/// `%XX`) are passed, the next six (`\` dropped, `%XX` decoded) are
/// `method` in any case. Reads only that start: a cheap test before the
/// whole reading, which costs the name's length.
pub(super) fn may_start_method(raw: &[u8]) -> bool {
    let mut i = 0;
    let mut got = 0;
    while i < raw.len() {
        let (c, len) = match raw[i] {
            b'%' => match (
                raw.get(i + 1).and_then(|h| (*h as char).to_digit(16)),
                raw.get(i + 2).and_then(|l| (*l as char).to_digit(16)),
            ) {
                (Some(h), Some(l)) => ((h * 16 + l) as u8, 3),
                _ => (b'%', 1),
            },
            c => (c, 1),
        };
        i += len;
        if c == b'\\' {
            continue;
        }
        let pad = c.is_ascii_whitespace()
            || matches!(
                c,
                b'[' | b']' | b'\'' | b'"' | b'<' | b'>' | b'+' | b'_' | b'.'
            )
            || (0x80..=0x9f).contains(&c);
        if got == 0 && pad {
            continue;
        }
        if !c.eq_ignore_ascii_case(&b"method"[got]) {
            return false;
        }
        got += 1;
        if got == 6 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::names_method;

    /// atk27t F1, F6: the bodies Rack and PHP read as naming `_method`.
    #[test]
    fn part_names_as_rack_and_php_read_them() {
        for b in [
            &b"--XyZb\r\nContent-ID: _method\r\n\r\nDELETE\r\n--XyZb--\r\n"[..],
            b"--XyZb\r\nContent-Disposition: form-data\r\nContent-ID: _method\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-ID : <_method>\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; x=\"; name=_method\"\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; name='_method'\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; x='; name=\"\\_method\"'\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; name='.method'\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; name=\"_method]\"\r\n\r\nDELETE\r\n",
            b"--XyZb\r\nContent-Disposition: form-data; name=\"[_method\"\r\n\r\nDELETE\r\n",
            b"[_method=DELETE",
            b"a=1&[[_method]]=DELETE",
        ] {
            assert!(names_method(b).is_some(), "{}", String::from_utf8_lossy(b));
        }
        for b in [
            &b"--XyZb\r\nContent-Disposition: form-data; name=\"payment_method\"\r\n\r\ncard\r\n"[..],
            b"--XyZb\r\nContent-ID: <part1@example>\r\n\r\nx\r\n",
            b"payment_method=card&[a]=1",
        ] {
            assert!(names_method(b).is_none(), "{}", String::from_utf8_lossy(b));
        }
    }
}
