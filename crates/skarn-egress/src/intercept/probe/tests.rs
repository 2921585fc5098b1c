use std::sync::Arc;

use zeroize::Zeroizing;

use super::*;
use crate::intercept::forms;
use crate::intercept::scrub::{Engine, Scrubber};

const REAL: &[u8] = b"Qx7Lm2Zp9Tv4Wn8Rc3Yb6Hs1Kd5Jf0Ga";
const PH: &[u8] = b"B393SeGVaaaaaaaaaaaaaaaaaaaaaaaa";

fn probes() -> Probes {
    Probes::new(&[(Zeroizing::new(REAL.to_vec()), PH.to_vec())])
}

/// Each byte of `s` as a braced escape of the most digits read (20 bytes).
fn braced(s: &[u8]) -> Vec<u8> {
    s.iter()
        .flat_map(|c| format!("\\u{{{:016x}}}", c).into_bytes())
        .collect()
}

/// atk27r F1: the probe's carry is the scrubber's hold-back plus one,
/// both from the same windows: what an echo's scrub can find whole, the
/// request's search saw whole.
#[test]
fn the_carry_is_the_scrubbers_hold_back() {
    let p = probes();
    let w = Arc::new(Windows::new(&forms::pairs(REAL, PH)));
    let whole = vec![(Zeroizing::new(REAL.to_vec()), PH.to_vec())];
    let e = Engine::new(&whole, w.clone());
    assert_eq!(p.carry, w.reach());
    assert_eq!(e.keep() + 1, p.carry);
    assert!(p.carry >= 20 * forms::WINDOW, "{}", p.carry);
}

/// atk27r F1: the hex form of a ten-byte piece, each digit a 20-byte
/// braced escape (400 bytes), split at any offset between two reads, is
/// found by the search exactly when the scrubber finds it in the echo.
#[test]
fn a_long_escaped_piece_split_anywhere_is_found() {
    let hex: Vec<u8> = REAL[3..13]
        .iter()
        .flat_map(|c| format!("{c:02x}").into_bytes())
        .collect();
    let mut body = b"x ".to_vec();
    body.extend(braced(&hex));
    body.extend_from_slice(b" y");
    let p = probes();
    for at in 1..body.len() {
        let mut b = BodyProbe::after(&p, b"POST / HTTP/1.1\r\n\r\n");
        let first = b.pass(&p, &body[..at]);
        let second = first && b.pass(&p, &body[at..]);
        assert!(!second && b.hit.is_some(), "split at {at} went up");
    }
    // The echo of the same bytes is scrubbed: the two sides agree.
    let w = Arc::new(Windows::new(&forms::pairs(REAL, PH)));
    let whole = vec![(Zeroizing::new(REAL.to_vec()), PH.to_vec())];
    let mut s = Scrubber::new(Arc::new(Engine::new(&whole, w)));
    let mut out = s.push(&body[..200]).to_vec();
    out.extend_from_slice(s.push(&body[200..]));
    out.extend_from_slice(s.finish());
    assert_ne!(out, body);
    // An ordinary escaped body of the same shape passes.
    let mut other = b"x ".to_vec();
    other.extend(braced(b"0123456789abcdef0123"));
    let mut b = BodyProbe::after(&p, b"");
    assert!(b.pass(&p, &other[..150]) && b.pass(&p, &other[150..]));
}
