//! Small helpers every part of the gateway uses, kept in a leaf module so
//! that using them ties no module to the one that used to host them.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the value even if a thread panicked while holding it:
/// the gateway's shared state stays usable (each holder leaves it whole
/// between statements), and one failed task does not stop the others.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error's text, trimmed and cut at 400 bytes (on a character
/// boundary, with `…`), for messages that quote what a server said.
pub(crate) fn short(e: impl std::fmt::Display) -> String {
    let s = e.to_string();
    let s = s.trim();
    if s.len() > 400 {
        let mut end = 400;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_owned()
    }
}
