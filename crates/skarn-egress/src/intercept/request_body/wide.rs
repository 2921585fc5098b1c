//! Bodies in a wide encoding (f27s): a JSON body declared UTF-16 or
//! UTF-32 (or with such a byte-order mark) is decoded by Express's body
//! parser before `_method` is read, and a NUL between the letters hides the
//! name from a byte search. A body holding a NUL (every ASCII letter in
//! UTF-16/32 has one) is also judged as UTF-16 and UTF-32 in both byte
//! orders; a declared charset that is neither ASCII-compatible nor one of
//! those is refused (fail closed).

/// Whether the body may be UTF-16 or UTF-32: a byte-order mark or a NUL.
pub(super) fn may_be_wide(body: &[u8]) -> bool {
    body.starts_with(&[0xfe, 0xff]) || body.starts_with(&[0xff, 0xfe]) || body.contains(&0)
}

/// The body read as UTF-16 (`unit` 2) or UTF-32 (`unit` 4), little or big
/// endian, lossily as UTF-8, into one buffer of `cap` bytes (at most 3
/// bytes per 2 read: the caller takes that from the budget first).
pub(super) fn transcoding(body: &[u8], le: bool, unit: usize, cap: usize) -> Vec<u8> {
    let mut s = String::with_capacity(cap);
    if unit == 2 {
        let units = body.chunks_exact(2).map(|c| {
            let c = [c[0], c[1]];
            if le {
                u16::from_le_bytes(c)
            } else {
                u16::from_be_bytes(c)
            }
        });
        for c in char::decode_utf16(units) {
            s.push(c.unwrap_or('\u{fffd}'));
        }
    } else {
        for c in body.chunks_exact(4) {
            let c = [c[0], c[1], c[2], c[3]];
            let u = if le {
                u32::from_le_bytes(c)
            } else {
                u32::from_be_bytes(c)
            };
            s.push(char::from_u32(u).unwrap_or('\u{fffd}'));
        }
    }
    s.into_bytes()
}

/// The refusal of a request whose head declares a charset the judge does
/// not read (neither ASCII-compatible nor UTF-16/32), or a UTF-16/32
/// charset on a body that is not JSON (f27v, atk27u F1): Tomcat (and so
/// Spring's `HiddenHttpMethodFilter`) splits a form on the raw bytes `&`
/// and `=` and decodes each name alone in the declared charset, which no
/// reading of the whole body as wide text matches. No browser sends such a
/// form; it is refused (fail closed).
pub(crate) fn charset_refusal(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let types: Vec<&str> = text
        .split('\n')
        .skip(1)
        .filter_map(|l| l.strip_prefix("content-type:"))
        .collect();
    let all_json = types.iter().all(|t| {
        let media = t.split(';').next().unwrap_or("").trim();
        media == "application/json" || media.ends_with("+json")
    });
    for v in &types {
        for p in v.split(';').skip(1) {
            let Some((k, cs)) = p.split_once('=') else {
                continue;
            };
            if k.trim() != "charset" {
                continue;
            }
            let cs = cs.trim().trim_matches('"');
            let judged = [
                "utf-8",
                "utf8",
                "us-ascii",
                "ascii",
                "iso-8859-1",
                "latin1",
                "iso-8859-15",
                "windows-1252",
                "cp1252",
            ];
            let wide = cs.starts_with("utf-16") || cs.starts_with("utf-32") || cs == "ucs-2";
            if wide && !all_json {
                return Some(format!(
                    "the request body is declared in charset {cs} and is not JSON: a framework \
                     (Tomcat, so Spring's _method filter) splits such a form on raw bytes and \
                     decodes each name alone, which the _method check does not read: refused"
                ));
            }
            if !judged.contains(&cs) && !wide {
                return Some(format!(
                    "the request body is declared in charset {cs}, which the _method check \
                     does not read (a framework may decode a _method name from it): refused"
                ));
            }
        }
    }
    None
}
