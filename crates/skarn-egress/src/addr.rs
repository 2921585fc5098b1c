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

fn special_v6(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    if a.is_unspecified() {
        return Some("unspecified");
    }
    if a.is_loopback() {
        return Some("loopback");
    }
    // Forms that embed an IPv4 address: IPv4-compatible (::a.b.c.d),
    // NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16) reach the
    // embedded address, so they are judged by it.
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0; 6] {
        return Some(special_v4(low).unwrap_or("IPv4-compatible"));
    }
    if (s[0], s[1]) == (0x64, 0xff9b) {
        return special_v4(low).or(Some("NAT64"));
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return special_v4(v4).or(Some("6to4"));
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
        ] {
            assert_eq!(sp(a), Some(why), "{a}");
        }
        for a in ["93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1"] {
            assert_eq!(sp(a), None, "{a}");
        }
    }
}
