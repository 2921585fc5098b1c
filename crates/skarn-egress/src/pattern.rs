//! Host patterns: `example.com`, `*.example.com`, `10.0.0.5`, `10.0.0.0/8`,
//! `[::1]`, `[fd00::/8]`, each with an optional `:port` (`:*` = any port;
//! no port = 80 and 443).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

use crate::error::PatternError;

/// Which ports a pattern allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ports {
    /// No port written: 80 and 443.
    Web,
    /// Exactly this port.
    One(u16),
    /// `:*`: any port.
    Any,
}

impl Ports {
    /// Whether `port` is allowed.
    pub fn allows(self, port: u16) -> bool {
        match self {
            Ports::Web => port == 80 || port == 443,
            Ports::One(p) => p == port,
            Ports::Any => true,
        }
    }
}

/// What a pattern names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostMatch {
    /// Exactly this (lower-case, no trailing dot) host name.
    Exact(String),
    /// Any name ending in `.` + this suffix (subdomains only, not the
    /// suffix itself).
    Subdomains(String),
    /// An address range written explicitly (a single address is a /32 or
    /// /128).
    Net(IpNet),
}

/// One parsed host pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The host part.
    pub host: HostMatch,
    /// The port part.
    pub ports: Ports,
    /// The pattern as written (for messages).
    pub text: String,
}

impl Pattern {
    /// Parse one pattern.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(PatternError::new(text, "empty"));
        }
        if t.contains("://") || t.contains('/') && !looks_like_cidr(t) {
            return Err(PatternError::new(
                text,
                "write a host name or address, not a URL",
            ));
        }
        let (host, port) = split_host_port(t).map_err(|w| PatternError::new(text, w))?;
        let ports = match port {
            None => Ports::Web,
            Some("*") => Ports::Any,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Ports::One(n),
                _ => return Err(PatternError::new(text, format!("bad port {p:?}"))),
            },
        };
        let host = parse_host(host).map_err(|w| PatternError::new(text, w))?;
        Ok(Pattern {
            host,
            ports,
            text: t.to_string(),
        })
    }

    /// Whether the pattern names host name `name` (already normalised),
    /// ignoring the port.
    pub fn names(&self, name: &str) -> bool {
        match &self.host {
            HostMatch::Exact(h) => h == name,
            HostMatch::Subdomains(s) => {
                name.len() > s.len() + 1
                    && name.ends_with(s.as_str())
                    && name.as_bytes()[name.len() - s.len() - 1] == b'.'
            }
            HostMatch::Net(_) => false,
        }
    }

    /// Whether the pattern's explicit range contains `ip` (canonical form).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match &self.host {
            HostMatch::Net(n) => n.contains(&ip),
            _ => false,
        }
    }
}

fn looks_like_cidr(t: &str) -> bool {
    let h = t.trim_start_matches('[');
    h.split('/').count() == 2 && !h.contains("//")
}

/// Split `host[:port]` / `[v6][:port]` / bare v6.
fn split_host_port(t: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = t.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err("missing ']'".into());
        };
        let (h, after) = (&rest[..end], &rest[end + 1..]);
        return match after {
            "" => Ok((h, None)),
            a => match a.strip_prefix(':') {
                Some(p) if !p.is_empty() => Ok((h, Some(p))),
                _ => Err(format!("unexpected {a:?} after ']'")),
            },
        };
    }
    if t.matches(':').count() > 1 {
        // A bare IPv6 address or range, without a port.
        return Ok((t, None));
    }
    match t.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && !h.is_empty() => Ok((h, Some(p))),
        Some(_) => Err("empty host or port".into()),
        None => Ok((t, None)),
    }
}

fn parse_host(h: &str) -> Result<HostMatch, String> {
    if h.contains('/') {
        let net: IpNet = h.parse().map_err(|_| format!("bad address range {h:?}"))?;
        return Ok(HostMatch::Net(canonical_net(net.trunc())));
    }
    if let Ok(ip) = h.parse::<IpAddr>() {
        return Ok(HostMatch::Net(IpNet::from(crate::addr::canonical(ip))));
    }
    if h.contains(':') {
        return Err(format!("bad IPv6 address {h:?}"));
    }
    if h.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(format!("{h:?} is not a valid IPv4 address"));
    }
    let lower = h.to_ascii_lowercase();
    let lower = lower.strip_suffix('.').unwrap_or(&lower);
    if let Some(rest) = lower.strip_prefix("*.") {
        check_name(rest)?;
        if !rest.contains('.') {
            return Err("a wildcard needs at least two labels after '*.'".into());
        }
        return Ok(HostMatch::Subdomains(rest.to_string()));
    }
    check_name(lower)?;
    Ok(HostMatch::Exact(lower.to_string()))
}

/// An IPv4-mapped IPv6 range is treated as the IPv4 range it maps.
fn canonical_net(n: IpNet) -> IpNet {
    if let IpNet::V6(v6) = n
        && v6.prefix_len() >= 96
        && let Some(v4) = v6.addr().to_ipv4_mapped()
        && let Ok(net) = ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96)
    {
        return IpNet::V4(net);
    }
    n
}

/// Validate a normalised (lower-case) host name.
pub(crate) fn check_name(n: &str) -> Result<(), String> {
    if n.is_empty() || n.len() > 253 {
        return Err("host name empty or longer than 253 bytes".into());
    }
    for label in n.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!("bad label {label:?} in {n:?}"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!("bad character in {n:?}"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!("label {label:?} starts or ends with '-'"));
        }
    }
    Ok(())
}

/// Normalise a requested host name (lower-case, no trailing dot) and
/// validate it; `None` when it is not a valid name.
pub(crate) fn normalise_name(n: &str) -> Option<String> {
    let l = n.to_ascii_lowercase();
    let l = l.strip_suffix('.').unwrap_or(&l).to_string();
    check_name(&l).ok()?;
    Some(l)
}

/// Parse `v4`, `v6` (unbracketed) as an address.
pub(crate) fn parse_ip(s: &str) -> Option<IpAddr> {
    s.parse::<Ipv4Addr>()
        .map(IpAddr::V4)
        .or_else(|_| s.parse::<Ipv6Addr>().map(IpAddr::V6))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        let p = Pattern::parse("Example.COM.").unwrap();
        assert_eq!(p.host, HostMatch::Exact("example.com".into()));
        assert_eq!(p.ports, Ports::Web);
        let p = Pattern::parse("*.example.com:8443").unwrap();
        assert_eq!(p.host, HostMatch::Subdomains("example.com".into()));
        assert_eq!(p.ports, Ports::One(8443));
        assert_eq!(Pattern::parse("h.example:*").unwrap().ports, Ports::Any);
        let p = Pattern::parse("10.1.2.3/8:22").unwrap();
        assert_eq!(p.host, HostMatch::Net("10.0.0.0/8".parse().unwrap()));
        assert!(
            Pattern::parse("[::1]:80")
                .unwrap()
                .contains("::1".parse().unwrap())
        );
        assert!(
            Pattern::parse("fd00::/8")
                .unwrap()
                .contains("fd12::1".parse().unwrap())
        );
        assert!(
            Pattern::parse("[::ffff:127.0.0.1]")
                .unwrap()
                .contains("127.0.0.1".parse().unwrap())
        );
    }

    #[test]
    fn rejects_bad_patterns() {
        for bad in [
            "",
            "*",
            "*.com",
            "a.*.com",
            "foo*.com",
            "http://x.com",
            "x.com:0",
            "x.com:99999",
            "x.com:",
            ":80",
            "[::1",
            "[::1]x",
            "127.1",
            "1.2.3.4/40",
            "a b.com",
            "-a.com",
            "x.com/path",
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn wildcard_matches_subdomains_only() {
        let p = Pattern::parse("*.example.com").unwrap();
        assert!(p.names("a.example.com"));
        assert!(p.names("a.b.example.com"));
        assert!(!p.names("example.com"));
        assert!(!p.names("badexample.com"));
    }
}
