//! The bearer token of `skarn serve --http`: how a presented credential is
//! read from an `Authorization` header and compared with the gateway's
//! token. Used by the request check (`crate::http`) and by the connection
//! bounds (`crate::http_conn`), which look at a request head before it is
//! served to put authorized clients first.

/// Whether the presented credential `given` equals `token`, in time that
/// depends only on the length of `given` (which the client chose): every
/// byte of it is compared, also when the lengths differ, so neither the
/// token's bytes nor its length shape the time taken.
pub(crate) fn ct_eq(given: &[u8], token: &[u8]) -> bool {
    let mut acc = u8::from(given.len() != token.len()) | u8::from(token.is_empty());
    let n = token.len().max(1);
    for (i, x) in given.iter().enumerate() {
        let y = token.get(i % n).copied().unwrap_or(0);
        acc |= x ^ y;
    }
    std::hint::black_box(acc) == 0
}

/// The credentials of an `Authorization: Bearer <token>` header (the
/// scheme name is case-insensitive, RFC 9110 section 11.1).
pub(crate) fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// Whether a header value, as raw bytes, carries exactly `token` as its
/// bearer credential (the same reading as the request check: visible ASCII
/// only, the `Bearer` scheme case-insensitive).
pub(crate) fn shows_token(value: &[u8], token: &str) -> bool {
    if !value.iter().all(|b| (32..127).contains(b) || *b == b'\t') {
        return false;
    }
    std::str::from_utf8(value)
        .ok()
        .and_then(bearer)
        .is_some_and(|t| ct_eq(t.as_bytes(), token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::{bearer, ct_eq};

    #[test]
    fn the_token_comparison_is_exact() {
        let t = b"0123456789abcdef";
        assert!(ct_eq(t, t));
        // Every prefix, every longer string, every one-byte change fails.
        for n in 0..t.len() {
            assert!(!ct_eq(&t[..n], t), "prefix {n}");
        }
        let mut longer = t.to_vec();
        longer.extend_from_slice(t);
        assert!(!ct_eq(&longer, t));
        // A repetition of the token (the comparison wraps around it) too.
        assert!(!ct_eq(b"0123456789abcdef0", t));
        for i in 0..t.len() {
            let mut c = *t;
            c[i] ^= 1;
            assert!(!ct_eq(&c, t), "byte {i}");
        }
        // An empty token never matches, not even an empty credential.
        assert!(!ct_eq(b"", b""));
        assert!(!ct_eq(b"x", b""));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
    }
}
