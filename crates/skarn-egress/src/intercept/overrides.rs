//! Requests naming another host, method or path than their own: a
//! request carrying a secret may not (atk27 F4, L5; atk27d L2), since the
//! credential would then be used for another virtual host, or beyond the
//! method or path it is bound to. Split out of `request.rs`.

use crate::fields::{name_in, name_is};

/// Request headers through which common frameworks and gateways let a
/// request name another method or path than its request line's.
pub(super) const OVERRIDE_HEADERS: &[&str] = &[
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
    "x-original-method",
    "x-original-url",
    "x-rewrite-url",
    "x-original-uri",
    "x-forwarded-path",
    "x-forwarded-prefix",
    "x-forwarded-uri",
    "x-envoy-original-path",
];

/// Request headers through which front ends and frameworks behind them
/// take another host (or a whole URL) than the request's own: a request
/// carrying a secret may not name one (atk27 L5, atk27d L2), since the
/// credential would then be used for, or links built towards, another
/// virtual host.
const HOST_OVERRIDE_HEADERS: &[&str] = &[
    "x-forwarded-host",
    "x-forwarded-server",
    "x-host",
    "x-original-host",
    "x-original-url",
    "x-rewrite-url",
];

/// Why a request carrying a secret is refused for naming another host.
pub(super) fn host_override(headers: &[httparse::Header<'_>]) -> Option<String> {
    headers.iter().find_map(|h| {
        let named = name_in(h.name, HOST_OVERRIDE_HEADERS)
            || name_is(h.name, "forwarded")
                && String::from_utf8_lossy(h.value)
                    .to_ascii_lowercase()
                    .split([';', ','])
                    .any(|p| p.trim_start().starts_with("host"));
        named.then(|| format!("header {} could name another host", h.name))
    })
}

/// Why a request that carries a method- or path-bound secret is refused
/// for naming another method or path (finding F4): an override header,
/// or a `_method` query parameter (Rails, Laravel, Symfony, Express)
/// under any spelling the frameworks' parameter parsers read as that
/// name ([`parsed_name`]: atk27r F10).
pub(super) fn route_override(headers: &[httparse::Header<'_>], path: &str) -> Option<String> {
    if let Some(h) = headers.iter().find(|h| name_in(h.name, OVERRIDE_HEADERS)) {
        return Some(format!(
            "header {} could override the bound method or path",
            h.name
        ));
    }
    let query = path.split_once('?').map_or("", |(_, q)| q);
    let named_method = query.split(['&', ';']).any(|kv| {
        let name = kv.split('=').next().unwrap_or("");
        names_method(name.as_bytes())
    });
    named_method.then(|| {
        "query parameter _method (in some spelling: PHP reads `.`, ` ` and `[` in a name as \
         `_`, Rack and qs drop brackets around it) could override the bound method"
            .into()
    })
}

/// Whether a parameter name is `_method` as any common framework reads
/// it (f27u, atk27t F2): PHP ([`parsed_name`]) or Rack and qs
/// ([`bracket_key`]).
pub(super) fn names_method(raw: &[u8]) -> bool {
    parsed_name(raw) == b"_method" || bracket_key(raw) == b"_method"
}

/// A parameter's key as Rack (`normalize_params`: leading `[`/`]` dropped,
/// the first run of bytes that are neither) and qs (`[_method]` is
/// `_method`) read it, lower-cased, percent-decoded, spaces trimmed.
pub(super) fn bracket_key(raw: &[u8]) -> Vec<u8> {
    let d = percent_decoded(raw).to_ascii_lowercase();
    let d = d.split(|c| *c == 0).next().unwrap_or(b"");
    let key = d
        .split(|c| matches!(c, b'[' | b']'))
        .find(|k| !k.is_empty())
        .unwrap_or(b"");
    key.trim_ascii().to_vec()
}

/// A query parameter's name as PHP (and so Laravel and Symfony) builds
/// it, lower-cased: percent-decoded (`+` a space), cut at a NUL (the
/// names are C strings), leading and trailing spaces dropped, the part
/// before a `[...]` index (`_method[]` is an array named `_method`), an
/// unmatched `[`, `.`, ` ` and the bytes 0x80-0x9f made `_`.
pub(super) fn parsed_name(raw: &[u8]) -> Vec<u8> {
    let mut d = percent_decoded(raw);
    if let Some(nul) = d.iter().position(|c| *c == 0) {
        d.truncate(nul);
    }
    let start = d
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(d.len());
    let end = d
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    let mut d = d[start..end].to_ascii_lowercase();
    if let Some(open) = d.iter().position(|c| *c == b'[')
        && open > 0
        && d[open..].contains(&b']')
    {
        d.truncate(open);
    }
    for c in &mut d {
        if matches!(*c, b' ' | b'.' | b'[' | 0x80..=0x9f) {
            *c = b'_';
        }
    }
    d
}

/// `s` with `%XX` escapes (and `+`) decoded.
fn percent_decoded(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parsed_name;

    /// atk27r F10: the spellings PHP reads as `_method` are `_method`.
    #[test]
    fn names_are_compared_as_php_reads_them() {
        for n in [
            "_method",
            ".method",
            "%2Emethod",
            "%2emethod",
            "[method",
            " _method",
            "+.method",
            "_method%00x",
            "_method[]",
            "_method[a]",
            "_METHOD",
            "%5Fmethod",
            "%80method",
            "%9Fmethod",
        ] {
            assert_eq!(parsed_name(n.as_bytes()), b"_method", "{n}");
        }
        for n in [
            "method",
            "%20method",
            "x_method",
            "_methods",
            "a.method",
            "[method]",
            "%A0method",
        ] {
            assert_ne!(parsed_name(n.as_bytes()), b"_method", "{n}");
        }
    }

    /// atk27t F2: the bracket spellings Rack and qs read as `_method`.
    #[test]
    fn names_are_compared_as_rack_and_qs_read_them() {
        for n in [
            "[_method",
            "_method]",
            "]_method",
            "_method%5D",
            "[[_method]]",
            "[_method]",
            "%5B_method%5D",
            "_method",
            ".method",
        ] {
            assert!(super::names_method(n.as_bytes()), "{n}");
        }
        for n in ["payment_method", "[method]", "x[_method]", "_methods]"] {
            assert!(!super::names_method(n.as_bytes()), "{n}");
        }
    }
}
