//! Address checks: which destinations are never reached through an allowed
//! *name* (loopback, private, link-local, metadata, ...), whatever form the
//! address takes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The IPv4 address of an IPv4-mapped IPv6 address, else the address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// Cloud instance-metadata addresses: only a pattern naming exactly one of
/// them reaches it.
pub fn is_metadata(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => v4 == Ipv4Addr::new(169, 254, 169, 254),
        IpAddr::V6(v6) => v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
    }
}

/// Why `ip` is special (not a public unicast address), or `None`.
pub fn special(ip: IpAddr) -> Option<&'static str> {
    if is_metadata(ip) {
        return Some("cloud metadata");
    }
    match canonical(ip) {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    Some(match o {
        [0, ..] => "unspecified",
        [127, ..] => "loopback",
        [10, ..] => "private",
        [172, b, ..] if (16..32).contains(&b) => "private",
        [192, 168, ..] => "private",
        [169, 254, ..] => "link-local",
        [100, b, ..] if (64..128).contains(&b) => "shared (CGNAT)",
        [192, 0, 0, _] => "IETF protocol assignment",
        [198, 18 | 19, ..] => "benchmarking",
        [a0, ..] if (224..240).contains(&a0) => "multicast",
        [a0, ..] if a0 >= 240 => "reserved",
        _ => return None,
    })
}

/// An IPv6 form that carries IPv4 addresses: its name and the IPv4
/// addresses it reaches or names. IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
/// NAT64 (`64:ff9b::/96`; the local-use `64:ff9b:1::/48`, whose prefix
/// length is not known here, gives every RFC 6052 position), 6to4
/// (`2002:aabb:ccdd::/48`) and Teredo (`2001::/32`: the server, and the
/// client stored inverted in the last 32 bits).
pub fn embedded_v4(a: Ipv6Addr) -> Option<(&'static str, Vec<Ipv4Addr>)> {
    let s = a.segments();
    let o = a.octets();
    let v4 = |b: &[u8]| Ipv4Addr::new(b[0], b[1], b[2], b[3]);
    let low = v4(&o[12..16]);
    Some(match s {
        [0, 0, 0, 0, 0, 0xffff, ..] => ("IPv4-mapped", vec![low]),
        [0, 0, 0, 0, 0xffff, 0, ..] => ("IPv4-translated", vec![low]),
        [0, 0, 0, 0, 0, 0, ..] if !a.is_unspecified() && !a.is_loopback() => {
            ("IPv4-compatible", vec![low])
        }
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => ("NAT64", vec![low]),
        [0x64, 0xff9b, 1, ..] => (
            "NAT64",
            vec![
                v4(&[o[6], o[7], o[9], o[10]]),
                v4(&[o[7], o[9], o[10], o[11]]),
                v4(&o[9..13]),
                low,
            ],
        ),
        [0x2002, ..] => ("6to4", vec![v4(&o[2..6])]),
        [0x2001, 0, ..] => {
            let c = [!o[12], !o[13], !o[14], !o[15]];
            ("Teredo", vec![v4(&o[4..8]), v4(&c)])
        }
        _ => return None,
    })
}

fn special_v6(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    if a.is_unspecified() {
        return Some("unspecified");
    }
    if a.is_loopback() {
        return Some("loopback");
    }
    // Forms that embed an IPv4 address reach (or name) the embedded
    // address, so they are judged by it; those that are not IPv4-mapped are
    // special in themselves (a tunnel or translator outside the host's
    // control).
    if let Some((form, v4s)) = embedded_v4(a) {
        return v4s
            .into_iter()
            .find_map(|v4| {
                if v4 == Ipv4Addr::new(169, 254, 169, 254) {
                    Some("cloud metadata")
                } else {
                    special_v4(v4)
                }
            })
            .or(Some(form));
    }
    Some(match s[0] {
        x if x & 0xfe00 == 0xfc00 => "unique-local",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] < 0x200 => "IETF special purpose",
        0x2001 if s[1] == 0xdb8 => "documentation",
        0x0100 if s[1..4] == [0, 0, 0] => "discard",
        _ => return None,
    })
}

/// The address and every IPv4 address it embeds: what deny ranges and
/// allow ranges are matched against.
pub fn forms(ip: IpAddr) -> Vec<IpAddr> {
    let ip = canonical(ip);
    let mut out = vec![ip];
    if let IpAddr::V6(v6) = ip
        && let Some((_, v4s)) = embedded_v4(v6)
    {
        out.extend(v4s.into_iter().map(IpAddr::V4));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(s: &str) -> Option<&'static str> {
        special(s.parse().unwrap())
    }

    #[test]
    fn classifies() {
        for (a, why) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.2.3.4", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.1.1", "link-local"),
            ("169.254.169.254", "cloud metadata"),
            ("100.64.0.1", "shared (CGNAT)"),
            ("100.127.255.255", "shared (CGNAT)"),
            ("224.0.0.1", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("255.255.255.255", "reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fd12:3456::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("fd00:ec2::254", "cloud metadata"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:169.254.169.254", "cloud metadata"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::10.0.0.1", "private"),
            ("2002:c0a8:0101::1", "private"),
            ("::ffff:0:127.0.0.1", "loopback"),
            ("64:ff9b::169.254.169.254", "cloud metadata"),
            ("64:ff9b:1:7f00:0001::", "loopback"),
            ("2002:7f00:1::", "loopback"),
            // Teredo: server 192.0.2.1 (protocol assignment range is
            // 192.0.0.0/24, so public here), client 10.0.0.1 inverted.
            ("2001:0:c000:201::f5ff:fffe", "private"),
            ("2001:0:a00:1::1", "private"),
            ("64:ff9b::93.184.216.34", "NAT64"),
            ("2002:5db8:d822::1", "6to4"),
            ("::93.184.216.34", "IPv4-compatible"),
            ("2001:0:5db8:d822::a247:27dd", "Teredo"),
        ] {
            assert_eq!(sp(a), Some(why), "{a}");
        }
        for a in ["93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1"] {
            assert_eq!(sp(a), None, "{a}");
        }
    }
}

#[cfg(test)]
mod form_tests {
    use super::*;

    fn v4s(s: &str) -> Vec<String> {
        forms(s.parse().unwrap())
            .iter()
            .skip(1)
            .map(|a| a.to_string())
            .collect()
    }

    #[test]
    fn embedded_addresses_are_found() {
        assert_eq!(v4s("64:ff9b::10.1.2.3"), ["10.1.2.3"]);
        assert_eq!(v4s("::ffff:0:10.1.2.3"), ["10.1.2.3"]);
        assert_eq!(v4s("::10.1.2.3"), ["10.1.2.3"]);
        assert_eq!(v4s("2002:0a01:0203::"), ["10.1.2.3"]);
        assert_eq!(
            v4s("2001:0:5db8:d822::f5fe:fdfc"),
            ["93.184.216.34", "10.1.2.3"]
        );
        assert!(v4s("64:ff9b:1:0a01:2:0300::").contains(&"10.1.2.3".to_string()));
        assert!(v4s("2606:4700::1").is_empty());
        // IPv4-mapped addresses are canonicalised to IPv4 first.
        assert_eq!(
            forms("::ffff:10.1.2.3".parse().unwrap()),
            ["10.1.2.3".parse::<IpAddr>().unwrap()]
        );
    }
}
