//! Byte counts and durations written for people, in error messages.

use std::time::Duration;

/// `1500 ms`, or `2 s` for whole seconds.
pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// `8 MiB`, `64 KiB`, or `1000 bytes` when not a whole unit.
pub(crate) fn fmt_bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}
