//! The egress host and pattern syntax: patterns, targets and decisions
//! never panic, and a target that is an address by the standard library
//! is an address to us (never a name an allow pattern could match).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_egress::{Pattern, Rules, Target};
use std::net::IpAddr;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = s.splitn(3, '\n');
    let pat = parts.next().unwrap_or_default();
    let host = parts.next().unwrap_or_default();
    let _ = Pattern::parse(pat);
    let target = Target::parse(host);
    if host.parse::<IpAddr>().is_ok() {
        assert!(
            matches!(target, Some(Target::Ip(_))),
            "{host:?} is an address: {target:?}"
        );
    }
    if let Ok(rules) = Rules::parse(&[pat], &[] as &[&str]) {
        if let Some(t) = &target {
            let _ = rules.check_target(t, 443);
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            let _ = rules.check_addr(ip, 443);
        }
    }
});
