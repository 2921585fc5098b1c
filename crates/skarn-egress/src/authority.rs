//! `host[:port]` and `[v6][:port]` exactly as RFC 3986 §3.2.2-3.2.3 (and
//! RFC 9110 §7.2 for `Host`) write them (atk27h F1): brackets only around
//! an IPv6 literal, a port of 1 to 5 ASCII digits without a leading zero,
//! a name of RFC 3986 `reg-name` characters. Anything else is no authority,
//! so what a server behind the proxy reads as the host is what was checked.

use std::net::Ipv6Addr;

/// Split an authority `host[:port]` / `[v6][:port]`.
pub(crate) fn split_authority(a: &str, default_port: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        let end = rest.find(']')?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return None,
        };
        let inner = &rest[..end];
        inner.parse::<Ipv6Addr>().ok()?;
        (inner, port)
    } else {
        let (h, p) = match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        };
        let reg_name = |c: u8| c.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=".contains(&c);
        if !h.bytes().all(reg_name) {
            return None;
        }
        (h, p)
    };
    let port = match port {
        Some(p) => port_number(p)?,
        None => default_port?,
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// A port of 1 to 5 ASCII digits, no leading zero, 1..=65535.
fn port_number(p: &str) -> Option<u16> {
    let ok =
        (1..=5).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit()) && !p.starts_with('0');
    ok.then(|| p.parse::<u16>().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::split_authority;

    #[test]
    fn authorities() {
        assert_eq!(
            split_authority("a.com:443", None),
            Some(("a.com".into(), 443))
        );
        assert_eq!(
            split_authority("a.com", Some(80)),
            Some(("a.com".into(), 80))
        );
        assert_eq!(split_authority("a.com", None), None);
        assert_eq!(
            split_authority("[::1]:8080", None),
            Some(("::1".into(), 8080))
        );
        assert_eq!(split_authority("[::1]", Some(80)), Some(("::1".into(), 80)));
        assert_eq!(split_authority("a.com:0", None), None);
        assert_eq!(split_authority("a.com:x", None), None);
        assert_eq!(split_authority("[::1", None), None);
    }

    /// atk27h F1: spellings a front end does not read as the checked name.
    #[test]
    fn only_the_rfc_spellings_are_authorities() {
        for a in [
            "[localhost]:18445",
            "[127.0.0.1]:443",
            "localhost:+18445",
            "localhost:018445",
            "localhost:08443",
            "localhost:",
            "localhost:99999",
            "localhost:18445\u{a0}",
            "\u{3000}localhost:18445",
            "local host:1",
            "a.com:1:2",
            "[::1]x",
        ] {
            assert_eq!(split_authority(a, Some(443)), None, "{a:?}");
        }
        assert_eq!(
            split_authority("localhost:65535", None),
            Some(("localhost".into(), 65535))
        );
        assert_eq!(
            split_authority("[::ffff:127.0.0.1]:1", None),
            Some(("::ffff:127.0.0.1".into(), 1))
        );
    }
}
