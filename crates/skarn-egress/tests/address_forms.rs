//! The egress decisions against the standard library's and the C
//! library's reading of addresses: every spelling of an IPv4 address (as
//! the resolver would read it: `127.1`, `0x7f.0.0.1`, `2130706433`, a
//! trailing dot) and every IPv6 form that embeds it (mapped, compatible,
//! translated, NAT64, 6to4) is decided as the address itself, so a deny
//! pattern or the special-address rule cannot be stepped around.
#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use skarn_egress::{Rules, Target};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

/// The final decision for `host`: the target check, then (for a name) the
/// check of every address the resolver gives for it, numerically only.
fn decide(rules: &Rules, host: &str) -> Option<bool> {
    let t = Target::parse(host)?;
    if rules.check_target(&t, 443).is_err() {
        return Some(false);
    }
    let addrs: Vec<IpAddr> = match &t {
        Target::Ip(ip) => vec![*ip],
        Target::Name(n) => {
            // Only numeric spellings: glibc reads them without DNS.
            if !n
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b'.' || b == b'x')
            {
                return None;
            }
            (n.as_str(), 0)
                .to_socket_addrs()
                .ok()?
                .map(|s| s.ip())
                .collect()
        }
    };
    Some(addrs.iter().all(|a| rules.check_addr(*a, 443).is_ok()))
}

fn spellings(a: Ipv4Addr) -> Vec<String> {
    let o = a.octets();
    let n = u32::from(a);
    let mut v = vec![
        a.to_string(),
        format!("{a}."),
        format!("{n}"),
        format!("0x{n:x}"),
        format!("0{:o}.{}.{}.{}", o[0], o[1], o[2], o[3]),
        format!("0x{:x}.{}.{}.{}", o[0], o[1], o[2], o[3]),
        format!("{}.{}", o[0], n & 0xff_ffff),
        format!("{}.{}.{}", o[0], o[1], n & 0xffff),
    ];
    let m = a.to_ipv6_mapped();
    let c = a.to_ipv6_compatible();
    let s = m.segments();
    for six in [
        m,
        c,
        Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, s[6], s[7]),
        Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, s[6], s[7]),
        Ipv6Addr::new(0x2002, s[6], s[7], 0, 0, 0, 0, 1),
    ] {
        v.push(six.to_string());
        v.push(
            format!("{:x}:{:x}:{:x}:{:x}:{:x}:{:x}:{}", 0, 0, 0, 0, 0, 0xffff, a).to_uppercase(),
        );
        let seg = six.segments();
        v.push(
            seg.iter()
                .map(|x| format!("{x:04X}"))
                .collect::<Vec<_>>()
                .join(":"),
        );
    }
    v
}

fn v4() -> impl Strategy<Value = Ipv4Addr> {
    prop_oneof![
        any::<u32>().prop_map(Ipv4Addr::from),
        (
            prop::sample::select(&[127u8, 10, 169, 192, 172, 100, 0, 224][..]),
            any::<[u8; 3]>()
        )
            .prop_map(|(a, r)| Ipv4Addr::new(a, r[0], r[1], r[2])),
        Just(Ipv4Addr::new(169, 254, 169, 254)),
    ]
}

#[test]
fn every_spelling_of_an_address_is_decided_as_the_address() {
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(300),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&(v4(), 0..4usize), |(a, which)| {
            // Allowed by name/any pattern, denied by the address; or only
            // the special-address rule (no pattern names it).
            let (allow, deny): (Vec<String>, Vec<String>) = match which {
                0 => (vec!["*.h.example".into()], vec![format!("{a}")]),
                1 => (vec![format!("{a}")], vec![format!("{a}/32")]),
                // A name wildcard over the address's own trailing labels.
                2 => {
                    let o = a.octets();
                    (vec![format!("*.{}.{}.{}", o[1], o[2], o[3])], vec![])
                }
                _ => (vec!["*.h.example".into(), "h.example".into()], vec![]),
            };
            let rules = Rules::parse(&allow, &deny).unwrap();
            let literal = decide(&rules, &a.to_string()).unwrap();
            for s in spellings(a) {
                // The C library's numeric reading, where it has one, is ours.
                let trimmed = s.strip_suffix('.').unwrap_or(&s);
                if let Ok(mut it) = (trimmed, 0).to_socket_addrs() {
                    let libc = it.next().map(|x| x.ip());
                    let ours = match Target::parse(&s) {
                        Some(Target::Ip(ip)) => Some(ip),
                        _ => None,
                    };
                    let libc = libc.map(skarn_egress::addr::canonical);
                    prop_assert_eq!(ours, libc, "{:?}", s);
                }
                if let Some(d) = decide(&rules, &s) {
                    prop_assert!(
                        d == literal || !d,
                        "{s:?} is allowed but {a} is not (allow {allow:?}, deny {deny:?})"
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}

/// An address spelled as a name (trailing dot, short or hex forms) was
/// allowed by a name wildcard and then connected to (failed before the
/// fix).
#[test]
fn an_address_spelled_as_a_name_is_an_address() {
    let rules = Rules::parse(&["*.0.0.0", "*.1.2"], &[] as &[&str]).unwrap();
    for host in ["1.0.0.0.", "9.0.0.0", "0x1.0.0.0", "7.1.2", "7.1.2."] {
        assert!(
            rules
                .check_target(&Target::parse(host).unwrap(), 443)
                .is_err(),
            "{host}"
        );
    }
    assert_eq!(
        Target::parse("0x7f.1"),
        Some(Target::Ip("127.0.0.1".parse().unwrap()))
    );
    assert_eq!(
        Target::parse("2130706433."),
        Some(Target::Ip("127.0.0.1".parse().unwrap()))
    );
    assert_eq!(Target::parse("1.256.0.0"), None);
}
