//! Scrubbing of escaped echoes, end to end through the engine.

use super::{Engine, Scrubber, Windows};
use crate::intercept::unescape::{Shadow, decoded, rewrite};
#[test]
fn padded_braced_and_eight_digit_escapes_decode() {
    let raw = br"\u{00000074}\u{0000000000000074}\U00000074\u{7_4}\x{74}\u{00000000000000074}";
    let s = Shadow::of(raw).unwrap();
    assert_eq!(s.bytes, br"ttttt\u{00000000000000074}");
    assert_eq!(s.span(0, raw.len()), (0, 12));
    assert_eq!(s.span(2, raw.len()), (32, 42));
    for (slot, want) in [
        (&br"\u{00000074}"[..], &br"\u{0000005a}"[..]),
        (br"\U00000074", br"\U0000005a"),
        (br"\x{0074}", br"\x{005a}"),
    ] {
        let mut v = slot.to_vec();
        rewrite(&mut v, b'Z');
        assert_eq!(v, want, "{}", String::from_utf8_lossy(slot));
    }
    // The value whatever its padding, as one decoded form.
    let ph = b"CXU0rFRAWOveFdUj5qbJGnikGySyOHf";
    let real = b"gwREALvalue0123456789abcdefXYZ_";
    for f in [
        |c: u8| format!("\\u{{{c:08x}}}"),
        |c: u8| format!("\\U{c:08x}"),
        |c: u8| format!("\\u{{{}_{:x}}}", c >> 4, c & 15),
    ] {
        let body: String = real.iter().map(|c| f(*c)).collect();
        let out = scrub(real, ph, body.as_bytes());
        let dec = decoded(&out).unwrap_or(out.clone());
        assert!(
            !dec.windows(10).any(|w| real.windows(10).any(|r| r == w)),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
}

fn scrub(real: &[u8], ph: &[u8], body: &[u8]) -> Vec<u8> {
    use std::sync::Arc;
    let whole = vec![(zeroize::Zeroizing::new(real.to_vec()), ph.to_vec())];
    let w = Arc::new(Windows::new(&super::super::forms::pairs(real, ph)));
    let mut s = Scrubber::new(Arc::new(Engine::new(&whole, w)));
    let mut out = s.push(body).to_vec();
    out.extend_from_slice(s.finish());
    out
}

/// atk27d F7: an escaped echo of the value comes back as the
/// placeholder then filler, whatever the escaped characters' places
/// (HTML named references too); only the count of added bytes shows.
#[test]
fn escaped_echoes_do_not_show_where_the_escaped_characters_are() {
    let ph = b"CXU0rFRAWOveFdUj5qbJGnikGySyOHf";
    let mut seen = Vec::new();
    // Two values with the same escaped characters at other places.
    let first = br#"Xk7"Qz2\mN4"vR8\sL1"xT6\wB3"pY9"#.to_vec();
    let second: Vec<u8> = first.iter().rev().copied().collect();
    for real in [&first[..], &second[..]] {
        assert_eq!(real.len(), ph.len());
        let json: Vec<u8> = real
            .iter()
            .flat_map(|c| match c {
                b'"' => b"\\\"".to_vec(),
                b'\\' => b"\\\\".to_vec(),
                c => vec![*c],
            })
            .collect();
        let html: Vec<u8> = real
            .iter()
            .flat_map(|c| match c {
                b'"' => b"&quot;".to_vec(),
                c => vec![*c],
            })
            .collect();
        for body in [json, html] {
            let out = scrub(real, ph, &body);
            assert_eq!(out.len(), body.len());
            assert!(out.starts_with(ph), "{}", String::from_utf8_lossy(&out));
            assert!(out[ph.len()..].iter().all(|c| *c == ph[ph.len() - 1]));
            seen.push(out);
        }
    }
    // The same shape for both values.
    assert_eq!(seen[0], seen[2]);
}
