//! Bodies in a wide encoding (f27s): a JSON body declared UTF-16 or
//! UTF-32 (or with such a byte-order mark) is decoded by Express's body
//! parser before `_method` is read, and a NUL between the letters hides the
//! name from a byte search. A body holding a NUL (every ASCII letter in
//! UTF-16/32 has one) is also judged as UTF-16 and UTF-32 in both byte
//! orders; a declared charset that is neither ASCII-compatible nor one of
//! those is refused (fail closed).

/// The body read as UTF-16 and UTF-32 (little and big endian) when it may
/// be one of them, each lossily as UTF-8.
pub(super) fn transcodings(body: &[u8]) -> Vec<Vec<u8>> {
    let bom = body.starts_with(&[0xfe, 0xff]) || body.starts_with(&[0xff, 0xfe]);
    if !bom && !body.contains(&0) {
        return Vec::new();
    }
    let mut all = Vec::new();
    for le in [true, false] {
        let units = body.chunks_exact(2).map(|c| {
            let c = [c[0], c[1]];
            if le {
                u16::from_le_bytes(c)
            } else {
                u16::from_be_bytes(c)
            }
        });
        let s: String = char::decode_utf16(units)
            .map(|c| c.unwrap_or('\u{fffd}'))
            .collect();
        all.push(s.into_bytes());
        let s: String = body
            .chunks_exact(4)
            .map(|c| {
                let c = [c[0], c[1], c[2], c[3]];
                let u = if le {
                    u32::from_le_bytes(c)
                } else {
                    u32::from_be_bytes(c)
                };
                char::from_u32(u).unwrap_or('\u{fffd}')
            })
            .collect();
        all.push(s.into_bytes());
    }
    all
}

/// The refusal of a request whose head declares a charset the judge does
/// not read (neither ASCII-compatible nor UTF-16/32).
pub(crate) fn charset_refusal(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    for line in text.split('\n').skip(1) {
        let Some(v) = line.strip_prefix("content-type:") else {
            continue;
        };
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
