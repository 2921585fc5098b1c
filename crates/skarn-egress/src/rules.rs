//! Decisions: may a connection to (host, port) be made, and may it go to
//! this resolved address?

use std::fmt;
use std::net::IpAddr;

use crate::addr::{canonical, forms, is_metadata, special};
use crate::error::PatternError;
use crate::pattern::{HostMatch, Pattern, Ports};

/// A requested destination host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A host name (normalised: lower-case, no trailing dot).
    Name(String),
    /// A literal address.
    Ip(IpAddr),
}

impl Target {
    /// Parse a host as sent by a client (`[v6]` brackets already removed).
    /// `None` when it is neither an address nor a valid host name.
    pub fn parse(host: &str) -> Option<Target> {
        if let Some(ip) = crate::pattern::parse_ip(host) {
            return Some(Target::Ip(canonical(ip)));
        }
        let name = crate::pattern::normalise_name(host)?;
        // A name whose last label is a number is an address to the
        // resolver (`127.1`, `0x7f.0.0.1`, `2130706433`, `1.2.3.4.`):
        // decide it as that address, never as a name a pattern matches.
        if ends_in_number(&name) {
            return numeric_v4(&name).map(|a| Target::Ip(IpAddr::V4(a)));
        }
        Some(Target::Name(name))
    }
}

fn number(part: &str) -> Option<u32> {
    if let Some(hex) = part.strip_prefix("0x") {
        return if hex.is_empty() {
            Some(0)
        } else {
            u32::from_str_radix(hex, 16).ok()
        };
    }
    if part.len() > 1 && part.starts_with('0') {
        return u32::from_str_radix(&part[1..], 8).ok();
    }
    part.parse().ok()
}

fn ends_in_number(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or("");
    !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last
                .strip_prefix("0x")
                .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())))
}

/// The C library's (`inet_aton`) reading of a dotted number: one to four
/// parts, decimal, octal (`0` prefix) or hex (`0x`), the last filling the
/// remaining bytes. `None` when it is not one.
fn numeric_v4(name: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<u32> = name.split('.').map(number).collect::<Option<_>>()?;
    let (last, head) = parts.split_last()?;
    if head.len() > 3 || head.iter().any(|p| *p > 255) {
        return None;
    }
    let room = 8 * (4 - head.len() as u32);
    if room < 32 && *last >> room != 0 {
        return None;
    }
    let mut n = 0u32;
    for (i, p) in head.iter().enumerate() {
        n |= p << (24 - 8 * i as u32);
    }
    Some(std::net::Ipv4Addr::from(n | last))
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Name(n) => f.write_str(n),
            Target::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
            Target::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denial {
    /// No allow pattern names the host.
    #[error("not in the allow list")]
    NotListed,
    /// A deny pattern names the host or address.
    #[error("in the deny list ({0})")]
    DenyListed(String),
    /// The host is allowed, but not on this port.
    #[error("port {0} not allowed for this host")]
    Port(u16),
    /// An allowed name resolved to a special address no pattern names.
    #[error("resolves to {addr} ({why}), which only an explicit address pattern allows")]
    SpecialAddress {
        /// The address.
        addr: IpAddr,
        /// Its class (loopback, private, ...).
        why: &'static str,
    },
    /// The plain-HTTP request's Host header names another host.
    #[error("Host header {0:?} does not match the request target")]
    HostMismatch(String),
    /// The request is not something the proxy carries.
    #[error("{0}")]
    Unsupported(String),
    /// The run's byte bound (`max_total_bytes`) is used up.
    #[error("the byte limit of this run ({0} bytes, both directions) is used up")]
    ByteLimit(u64),
}

/// Allow and deny patterns. Deny patterns win.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
}

impl Rules {
    /// Parse allow and deny lists. Every entry must parse.
    pub fn parse<S: AsRef<str>>(allow: &[S], deny: &[S]) -> Result<Rules, PatternError> {
        let p = |v: &[S]| -> Result<Vec<Pattern>, PatternError> {
            v.iter().map(|s| Pattern::parse(s.as_ref())).collect()
        };
        Ok(Rules {
            allow: p(allow)?,
            deny: p(deny)?,
        })
    }

    /// The allow patterns.
    pub fn allow(&self) -> &[Pattern] {
        &self.allow
    }

    /// First check, on the requested host and port (before resolution).
    pub fn check_target(&self, t: &Target, port: u16) -> Result<(), Denial> {
        let matches = |p: &Pattern| match t {
            Target::Name(n) => p.names(n),
            Target::Ip(ip) => p.contains(*ip),
        };
        let denied = |p: &Pattern| match t {
            Target::Name(n) => p.names(n),
            Target::Ip(ip) => forms(*ip).into_iter().any(|f| p.contains(f)),
        };
        if let Some(d) = self.deny.iter().find(|p| denied(p) && deny_port(p, port)) {
            return Err(Denial::DenyListed(d.text.clone()));
        }
        let named: Vec<&Pattern> = self.allow.iter().filter(|p| matches(p)).collect();
        if named.is_empty() {
            return Err(Denial::NotListed);
        }
        let ok: Vec<&&Pattern> = named.iter().filter(|p| p.ports.allows(port)).collect();
        if ok.is_empty() {
            return Err(Denial::Port(port));
        }
        if let Target::Ip(ip) = t
            && is_metadata(*ip)
            && !ok.iter().any(|p| names_exactly(p, *ip))
        {
            return Err(Denial::SpecialAddress {
                addr: *ip,
                why: "cloud metadata",
            });
        }
        Ok(())
    }

    /// Second check, on each address a name resolved to: deny ranges apply
    /// to the address and to every IPv4 address it embeds (NAT64, 6to4,
    /// ...); special addresses, including IPv6 forms embedding a special
    /// IPv4 address, need an allow pattern containing the address itself.
    pub fn check_addr(&self, ip: IpAddr, port: u16) -> Result<(), Denial> {
        let ip = canonical(ip);
        let all = forms(ip);
        if let Some(d) = self
            .deny
            .iter()
            .find(|p| all.iter().any(|f| p.contains(*f)) && deny_port(p, port))
        {
            return Err(Denial::DenyListed(d.text.clone()));
        }
        let Some(why) = special(ip) else {
            return Ok(());
        };
        // Metadata, in any form, only through a pattern naming the address.
        let md = is_metadata(ip) || why == "cloud metadata";
        let explicit = self
            .allow
            .iter()
            .any(|p| p.contains(ip) && p.ports.allows(port) && (!md || names_exactly(p, ip)));
        if explicit {
            Ok(())
        } else {
            Err(Denial::SpecialAddress { addr: ip, why })
        }
    }
}

/// A deny pattern without a port denies every port.
fn deny_port(p: &Pattern, port: u16) -> bool {
    p.ports == Ports::Web || p.ports.allows(port)
}

fn names_exactly(p: &Pattern, ip: IpAddr) -> bool {
    matches!(&p.host, HostMatch::Net(n) if n.prefix_len() == n.max_prefix_len() && n.addr() == ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(a: &[&str], d: &[&str]) -> Rules {
        Rules::parse(a, d).unwrap()
    }
    fn name(s: &str) -> Target {
        Target::parse(s).unwrap()
    }

    #[test]
    fn names_ports_and_deny() {
        let r = rules(
            &["example.com", "*.svc.test:8080", "any.test:*"],
            &["bad.svc.test"],
        );
        assert_eq!(r.check_target(&name("EXAMPLE.com"), 443), Ok(()));
        assert_eq!(r.check_target(&name("example.com"), 80), Ok(()));
        assert_eq!(
            r.check_target(&name("example.com"), 22),
            Err(Denial::Port(22))
        );
        assert_eq!(
            r.check_target(&name("other.com"), 443),
            Err(Denial::NotListed)
        );
        assert_eq!(r.check_target(&name("a.svc.test"), 8080), Ok(()));
        assert_eq!(
            r.check_target(&name("svc.test"), 8080),
            Err(Denial::NotListed)
        );
        assert!(matches!(
            r.check_target(&name("bad.svc.test"), 8080),
            Err(Denial::DenyListed(_))
        ));
        assert_eq!(r.check_target(&name("any.test"), 5), Ok(()));
    }

    #[test]
    fn addresses_need_explicit_patterns() {
        let r = rules(&["example.com", "127.0.0.1:8000", "10.0.0.0/8:*"], &[]);
        // An allowed name resolving to loopback on another port is refused.
        assert!(matches!(
            r.check_addr("127.0.0.1".parse().unwrap(), 443),
            Err(Denial::SpecialAddress {
                why: "loopback",
                ..
            })
        ));
        assert_eq!(r.check_addr("127.0.0.1".parse().unwrap(), 8000), Ok(()));
        assert_eq!(r.check_addr("::ffff:10.1.1.1".parse().unwrap(), 22), Ok(()));
        // Metadata needs its exact address, even under 0.0.0.0/0.
        let md: IpAddr = "169.254.169.254".parse().unwrap();
        let r = rules(&["0.0.0.0/0:*"], &[]);
        assert!(r.check_addr(md, 80).is_err());
        assert!(r.check_target(&Target::Ip(md), 80).is_err());
        let r2 = rules(&["169.254.169.254"], &[]);
        assert_eq!(r2.check_target(&Target::Ip(md), 80), Ok(()));
        assert_eq!(r2.check_addr(md, 80), Ok(()));
        // A literal public address is allowed only when listed.
        let r3 = rules(&["example.com"], &[]);
        assert_eq!(
            r3.check_target(&name("93.184.216.34"), 443),
            Err(Denial::NotListed)
        );
        assert_eq!(r3.check_addr("93.184.216.34".parse().unwrap(), 443), Ok(()));
    }

    #[test]
    fn deny_ranges_apply_to_embedded_ipv4_addresses() {
        let r = rules(
            &["example.com", "[2000::/3]:*", "[64:ff9b::/96]:*"],
            &["93.184.0.0/16:*"],
        );
        for a in [
            "64:ff9b::93.184.216.34",
            "2002:5db8:d822::1",
            "::ffff:0:93.184.216.34",
            "2001:0:5db8:d822::1",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert!(
                matches!(r.check_addr(ip, 443), Err(Denial::DenyListed(_))),
                "{a}"
            );
            assert!(
                matches!(
                    r.check_target(&Target::Ip(ip), 443),
                    Err(Denial::DenyListed(_))
                ),
                "{a}"
            );
        }
    }

    #[test]
    fn embedded_special_addresses_need_a_pattern_naming_the_form() {
        // Allowing 127.0.0.1 does not allow a translator's address for it.
        let r = rules(&["example.com", "127.0.0.0/8:*", "10.0.0.0/8:*"], &[]);
        for (a, why) in [
            ("64:ff9b::127.0.0.1", "loopback"),
            ("64:ff9b::10.0.0.1", "private"),
            ("2002:7f00:1::", "loopback"),
            ("::127.0.0.1", "loopback"),
            ("::ffff:0:10.0.0.1", "private"),
            ("2001:0:c000:201::f5ff:fffe", "private"),
            ("64:ff9b::169.254.169.254", "cloud metadata"),
        ] {
            assert_eq!(
                r.check_addr(a.parse().unwrap(), 443),
                Err(Denial::SpecialAddress {
                    addr: a.parse().unwrap(),
                    why
                }),
                "{a}"
            );
        }
        let r = rules(&["example.com", "[64:ff9b::/96]:*"], &[]);
        assert_eq!(
            r.check_addr("64:ff9b::127.0.0.1".parse().unwrap(), 443),
            Ok(())
        );
        assert!(
            r.check_addr("64:ff9b::169.254.169.254".parse().unwrap(), 443)
                .is_err()
        );
    }

    #[test]
    fn deny_ranges_apply_to_resolved_addresses() {
        let r = rules(&["example.com"], &["93.184.0.0/16:*"]);
        assert!(matches!(
            r.check_addr("93.184.216.34".parse().unwrap(), 443),
            Err(Denial::DenyListed(_))
        ));
    }
}
