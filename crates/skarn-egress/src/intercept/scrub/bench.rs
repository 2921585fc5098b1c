//! The search's own cost, for `benches/secrets.rs` (issue 27): the echo
//! scrubber and the probe search over a body in reads of one size, one
//! value bound, with the sieve (ADR 0337) or with the full automaton
//! over every byte and the whole decoded copy (the path before it).

use std::sync::Arc;
use std::time::Instant;

use zeroize::Zeroizing;

use super::{Engine, Scrubber, Windows};
use crate::intercept::forms;

/// The calling thread's CPU time where the system has it (s27e: on a
/// loaded machine the wall clock measured the other processes too),
/// else the wall clock.
struct Clock(f64);

impl Clock {
    fn now() -> f64 {
        #[cfg(unix)]
        {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `t` is a valid, writable timespec.
            if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
                return t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9;
            }
        }
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    }

    fn start() -> Clock {
        Clock(Clock::now())
    }

    fn seconds(&self) -> f64 {
        Clock::now() - self.0
    }
}

/// CPU seconds the scrubber and the probe search take over `body` in
/// `chunk`-byte reads (`full`: without the sieve); `None` when `value`
/// has no placeholder.
pub fn search_seconds(value: &str, body: &[u8], chunk: usize, full: bool) -> Option<(f64, f64)> {
    let ph = crate::secrets::placeholder::make(value)?;
    let pairs = forms::pairs(value.as_bytes(), ph.as_bytes());
    let whole = vec![(Zeroizing::new(value.as_bytes().to_vec()), ph.into_bytes())];
    let engine = Arc::new(Engine::new(&whole, Arc::new(Windows::new(&pairs))));
    let mut s = if full {
        Scrubber::reference(engine)
    } else {
        Scrubber::new(engine)
    };
    let t = Clock::start();
    let mut n = 0;
    for c in body.chunks(chunk.max(1)) {
        n += s.push(c).len();
    }
    n += s.finish().len();
    let scrub = t.seconds();
    assert_eq!(n, body.len());
    let search = Windows::for_search(&pairs);
    let reach = search.reach();
    let t = Clock::start();
    let mut carry = Vec::new();
    for c in body.chunks(chunk.max(1)) {
        carry.extend_from_slice(c);
        let hit = if full {
            search.found_in_reference(&carry)
        } else {
            search.found_in(&carry)
        };
        std::hint::black_box(hit);
        let drop = carry.len().saturating_sub(reach);
        carry.drain(..drop);
    }
    Some((scrub, t.seconds()))
}

/// Seconds a run's start-up spends on a value's windows (s27e): cutting
/// the forms into windows, the scrubber's matcher, the probe search's.
pub fn startup_seconds(value: &str) -> Option<(f64, f64, f64)> {
    let ph = crate::secrets::placeholder::make(value)?;
    let t = Clock::start();
    let pairs = forms::pairs(value.as_bytes(), ph.as_bytes());
    let cut = t.seconds();
    let t = Clock::start();
    std::hint::black_box(Windows::new(&pairs));
    let scrub = t.seconds();
    let t = Clock::start();
    std::hint::black_box(Windows::for_search(&pairs));
    Some((cut, scrub, t.seconds()))
}

/// For each way the windows can be kept (f27v, atk27u F2, F4): the DFA,
/// the contiguous NFA, the hash tables ([`super::matcher::WindowSet`]):
/// (name, seconds to build, seconds to search `body` in 64 KiB reads
/// with the yes/no search), for one `value`.
pub fn kind_seconds(value: &str, body: &[u8]) -> Vec<(&'static str, f64, f64)> {
    use super::matcher::{Matcher, WindowSet};
    use aho_corasick::AhoCorasickKind;
    let Some(ph) = crate::secrets::placeholder::make(value) else {
        return Vec::new();
    };
    let pairs = forms::pairs(value.as_bytes(), ph.as_bytes());
    let mut out = Vec::new();
    for name in ["dfa", "nfa", "set"] {
        let t = Instant::now();
        let w = match name {
            "dfa" => Windows::of_kind(&pairs, AhoCorasickKind::DFA),
            "nfa" => Windows::of_kind(&pairs, AhoCorasickKind::ContiguousNFA),
            _ => {
                let t = Instant::now();
                let set = WindowSet::new(pairs.iter().map(|(a, _)| &a[..]));
                let built = t.elapsed().as_secs_f64();
                let w = Windows {
                    ac: Some(Matcher::Set(set)),
                    ..Windows::of_kind(&pairs, AhoCorasickKind::ContiguousNFA)
                };
                out.push((name, built, search(&w, body)));
                continue;
            }
        };
        let built = t.elapsed().as_secs_f64();
        out.push((name, built, search(&w, body)));
    }
    out
}

fn search(w: &Windows, body: &[u8]) -> f64 {
    let reach = w.reach();
    let t = Instant::now();
    let mut carry = Vec::new();
    for c in body.chunks(64 * 1024) {
        carry.extend_from_slice(c);
        std::hint::black_box(w.found_in(&carry));
        let drop = carry.len().saturating_sub(reach);
        carry.drain(..drop);
    }
    t.elapsed().as_secs_f64()
}
