//! The egress proxy's HTTP and SOCKS5 front ends as a hostile sandboxed
//! client drives them: any bytes on a loopback connection to a proxy that
//! allows one loopback sink and nothing else. The first input byte picks
//! the listener (even: HTTP, odd: SOCKS5); `@PORT@` in the rest becomes
//! the sink's port (`@P@`: its two bytes, for SOCKS5). Never a panic; and whenever the sink is reached, the
//! request named the sink as the `http` crate (the request target, the
//! forwarded Host header) or RFC 1928 reads it (differential).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_fuzz::egress;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let p = egress::proxy();
    let input = skarn_fuzz::replace(rest, b"@PORT@", p.sink_port.to_string().as_bytes());
    let input = skarn_fuzz::replace(&input, b"@P@", &p.sink_port.to_be_bytes());
    let socks = pick & 1 == 1;
    let before = p.reached();
    let forwarded = p.exchange(socks, &input, Duration::from_secs(5));
    if p.reached() == before {
        return;
    }
    let named = if socks {
        egress::socks_destination(&input)
    } else {
        egress::http_destination(&input)
    };
    assert!(
        named
            .clone()
            .is_some_and(|a| egress::is_sink(a, p.sink_port)),
        "the sink was reached but the request named {named:?}: {:?}",
        String::from_utf8_lossy(&input)
    );
    if !socks && !egress::is_connect(&input) && !forwarded.is_empty() {
        let host = egress::forwarded_host(&forwarded);
        assert!(
            host.clone()
                .is_some_and(|a| egress::is_sink(a, p.sink_port)),
            "the forwarded request's Host is {host:?}: {:?}",
            String::from_utf8_lossy(&forwarded)
        );
    }
});
