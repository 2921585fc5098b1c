//! Header names and values read as the servers behind the proxy read them
//! (atk27h F1, F5).
//!
//! Names: CGI (RFC 3875 §4.1.18) and WSGI/Rack servers turn a header name
//! into `HTTP_` + the name upper-cased with `-` made `_`, so `X_Forwarded_Host`
//! and `x-forwarded-host` are one variable to the application. Every check on
//! a header name therefore compares with `-` and `_` alike, in any case.
//!
//! Values: only SP and HTAB are whitespace around a field value (RFC 9110
//! §5.5); a value the proxy judges (Host, framing, Connection) holds only
//! visible ASCII and inner SP/HTAB, and is forwarded as it was judged.

/// Whether header `name` is `known` (lower case, dashed) as a CGI/WSGI
/// server reads it: ASCII case and `-`/`_` ignored.
pub(crate) fn name_is(name: &str, known: &str) -> bool {
    name.len() == known.len()
        && name.bytes().zip(known.bytes()).all(|(a, b)| {
            let a = if a == b'_' {
                b'-'
            } else {
                a.to_ascii_lowercase()
            };
            a == b
        })
}

/// Whether `name` is any of `known`.
pub(crate) fn name_in(name: &str, known: &[&str]) -> bool {
    known.iter().any(|k| name_is(name, k))
}

/// `v` without leading and trailing SP/HTAB, if everything else in it is
/// visible ASCII or inner SP/HTAB; `None` otherwise (non-ASCII, controls).
pub(crate) fn strict_value(v: &[u8]) -> Option<&str> {
    let ows = |c: &u8| *c == b' ' || *c == b'\t';
    let start = v.iter().position(|c| !ows(c)).unwrap_or(v.len());
    let end = v.iter().rposition(|c| !ows(c)).map_or(start, |i| i + 1);
    let v = &v[start..end];
    v.iter()
        .all(|c| c.is_ascii_graphic() || ows(c))
        .then(|| std::str::from_utf8(v).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_dash_and_underscore_in_any_case() {
        assert!(name_is("X_HTTP_Method_Override", "x-http-method-override"));
        assert!(name_is("x-forwarded_HOST", "x-forwarded-host"));
        assert!(name_is("Host", "host"));
        assert!(!name_is("X-Forwarded-Hosts", "x-forwarded-host"));
        assert!(!name_is("X.Forwarded.Host", "x-forwarded-host"));
        // No Unicode case folding: the Kelvin sign is not a `k`.
        assert!(!name_is("\u{212a}eep", "keep"));
    }

    #[test]
    fn values_are_trimmed_of_sp_and_htab_only() {
        assert_eq!(strict_value(b" \tchunked\t "), Some("chunked"));
        assert_eq!(
            strict_value(b"keep-alive, close"),
            Some("keep-alive, close")
        );
        assert_eq!(strict_value(b"chunked\xc2\x85"), None);
        assert_eq!(strict_value(b"5\xc2\xa0"), None);
        assert_eq!(strict_value(b"\xe3\x80\x80localhost"), None);
        assert_eq!(strict_value(b"a\x0bb"), None);
        assert_eq!(strict_value(b"a\x00"), None);
        assert_eq!(strict_value(b""), Some(""));
    }
}
