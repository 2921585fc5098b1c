//! The decoded forms of a text judged for credential URLs (atk27r F5):
//! one JSON-unescape pass (`\/`, `\\`, `\"`, `\uXXXX`, ...) and one
//! percent-decode pass (`%2F`). Each is one linear pass, never repeated,
//! and gives `None` when the text has nothing to decode.

/// `text` with its JSON string escapes undone once.
pub(super) fn json_unescaped(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => {
                let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(d) => out.push(d),
                    None => out.push_str(&hex),
                }
            }
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(d) => out.push(d),
            None => {}
        }
    }
    Some(out)
}

/// `text` with its `%XX` escapes undone once (bytes that are not UTF-8
/// become U+FFFD).
pub(super) fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |x: u8| (x as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}
