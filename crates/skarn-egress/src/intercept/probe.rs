//! What the sandbox sends is never a piece of a real value (atk27o F8):
//! the command only ever had the placeholders, so a request carrying a
//! window of a value (in any form the echo scrubber knows) is someone
//! guessing at it, the scrubber's answer (the echo changed or not) the
//! oracle. Such a request is refused before it leaves, and its secret is
//! switched off for the rest of the run: no more substitution, and every
//! later request holding a piece refused too, so no echo ever answers a
//! guess. The hook the proxy's owner set records the secret as exposed
//! (later runs granted it refuse to start until the user clears it).
//!
//! The windows are those of [`super::forms`], cut from the value's
//! unpredictable part only, so a request carrying another token of the
//! same format (a JWT with the same header) is not taken for a probe.

use std::sync::Mutex;

use super::scrub::Windows;
use crate::secrets::Found;

/// Called once per secret switched off: its name and where the piece was
/// sent (for the user's log, never for the sandboxed side).
pub type ProbeHook = Box<dyn Fn(&str, &str) + Send + Sync>;

/// The run's per-secret windows and which secrets are switched off.
pub(crate) struct Probes {
    windows: Vec<Windows>,
    off: Mutex<Vec<bool>>,
    /// Bytes kept from one read to the next so a window split across two
    /// is still found: the scrubber's reach ([`Windows::reach`]), so the
    /// search and the echo's scrub cannot drift apart (atk27r F1).
    carry: usize,
}

impl Probes {
    pub(crate) fn new(pairs: &[(zeroize::Zeroizing<Vec<u8>>, Vec<u8>)]) -> Probes {
        let windows: Vec<Windows> = pairs
            .iter()
            .map(|(v, p)| Windows::for_search(&super::forms::pairs(v, p)))
            .collect();
        let off = Mutex::new(vec![false; windows.len()]);
        let carry = windows.iter().map(Windows::reach).max().unwrap_or(0);
        Probes {
            windows,
            off,
            carry,
        }
    }

    /// The first secret a piece of which `text` holds.
    pub(crate) fn found(&self, text: &[u8]) -> Option<Found> {
        self.windows
            .iter()
            .position(|w| w.found_in(text))
            .map(Found)
    }

    /// Switch `f` off; whether it was on.
    pub(crate) fn switch_off(&self, f: Found) -> bool {
        let mut off = self.off.lock().unwrap_or_else(|e| e.into_inner());
        match off.get_mut(f.0) {
            Some(o) if !*o => {
                *o = true;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn is_off(&self, f: Found) -> bool {
        let off = self.off.lock().unwrap_or_else(|e| e.into_inner());
        off.get(f.0).copied().unwrap_or(false)
    }
}

/// A request body on its way up, searched as it passes.
#[derive(Default)]
pub(crate) struct BodyProbe {
    carry: Vec<u8>,
    /// The secret whose piece the body held.
    pub(crate) hit: Option<Found>,
}

impl BodyProbe {
    /// A probe whose stream began with `before` (already searched): its
    /// tail is the carry, so a window split between `before` and the
    /// next read is still found (atk27q F7: one stream per request).
    pub(crate) fn after(probes: &Probes, before: &[u8]) -> BodyProbe {
        let from = before.len().saturating_sub(probes.carry);
        BodyProbe {
            carry: before[from..].to_vec(),
            hit: None,
        }
    }

    /// Whether `d` may go on: no piece of a value in it (nor across the
    /// end of the bytes before it).
    pub(crate) fn pass(&mut self, probes: &Probes, d: &[u8]) -> bool {
        if self.hit.is_some() {
            return false;
        }
        self.carry.extend_from_slice(d);
        if let Some(f) = probes.found(&self.carry) {
            self.hit = Some(f);
            return false;
        }
        let drop = self.carry.len().saturating_sub(probes.carry);
        self.carry.drain(..drop);
        true
    }
}

#[cfg(test)]
mod tests;
