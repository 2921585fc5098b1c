//! `host[:port]` and `[v6][:port]` as clients write them.

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
        (&rest[..end], port)
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0)?,
        None => default_port?,
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
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
}
