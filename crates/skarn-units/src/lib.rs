//! One syntax for sizes and durations, shared by every `skarn` flag and
//! config key.
//!
//! **Sizes**: a number (decimals allowed) and an optional suffix, case-
//! insensitive: `B` (bytes); `K`, `KB`, `KiB`; `M`, `MB`, `MiB`; `G`, `GB`,
//! `GiB`; `T`, `TB`, `TiB`. Every multiple is binary (1 K = 1024 bytes):
//! Skarn never uses decimal kilobytes, so `512MB` and `512MiB` are the same
//! limit. A bare number means **MiB**, except where the key or flag name
//! carries its unit (`memory_bytes`, `--max-log-bytes`: bytes).
//!
//! **Durations**: a number (decimals allowed) and an optional suffix:
//! `ms`, `s`, `m`, `h`, `d`. A bare number means **seconds**.
//!
//! Config values may be TOML integers, floats or strings (`memory = 512`,
//! `memory = "512M"`); [`Value`] deserializes all three.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;

mod de;
pub use de::{opt_secs_f64, secs_f64};

/// One MiB in bytes.
pub const MIB: u64 = 1 << 20;
/// The largest size accepted (1 PiB): anything bigger is a typo.
pub const MAX_SIZE: u64 = 1 << 50;
/// The longest duration accepted (30 days).
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 86_400);

/// Why a size or duration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a number with a known suffix.
    #[error("invalid size {0:?} (write e.g. 512M, 64KiB, 2G, 100B; a bare number means {1})")]
    BadSize(String, &'static str),
    /// Not a number with a known suffix.
    #[error("invalid duration {0:?} (write e.g. 30s, 500ms, 2m, 1h, 7d; a bare number means {1})")]
    BadDuration(String, &'static str),
    /// Negative, not finite, or too large.
    #[error("{0:?} is out of range (0 to {1})")]
    OutOfRange(String, &'static str),
    /// A whole number of `unit` was required.
    #[error("{0:?} is not a whole number of {1}")]
    NotWhole(String, &'static str),
}

/// What a bare number (no suffix) means for a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    /// Bytes (keys and flags whose name says `bytes`).
    Bytes,
    /// MiB (everything else).
    MiB,
}

impl SizeUnit {
    fn factor(self) -> u64 {
        match self {
            SizeUnit::Bytes => 1,
            SizeUnit::MiB => MIB,
        }
    }
    fn name(self) -> &'static str {
        match self {
            SizeUnit::Bytes => "bytes",
            SizeUnit::MiB => "MiB",
        }
    }
}

/// What a bare number means for a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    /// Seconds (everywhere, today).
    Secs,
    /// Milliseconds.
    Millis,
}

impl DurationUnit {
    fn secs(self) -> f64 {
        match self {
            DurationUnit::Secs => 1.0,
            DurationUnit::Millis => 0.001,
        }
    }
    fn name(self) -> &'static str {
        match self {
            DurationUnit::Secs => "seconds",
            DurationUnit::Millis => "milliseconds",
        }
    }
}

/// Split "12.5GiB" into ("12.5", "gib").
fn split(s: &str) -> (&str, String) {
    let t = s.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    (&t[..end], t[end..].trim().to_ascii_lowercase())
}

fn number(n: &str) -> Option<f64> {
    if n.is_empty() || n.starts_with('.') && n.len() == 1 {
        return None;
    }
    n.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// Parse a size into bytes; `bare` says what a number without suffix means.
pub fn parse_size(s: &str, bare: SizeUnit) -> Result<u64, UnitError> {
    let (num, suffix) = split(s);
    let bad = || UnitError::BadSize(s.trim().to_owned(), bare.name());
    let factor: u64 = match suffix.as_str() {
        "" => bare.factor(),
        "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    let v = number(num).ok_or_else(bad)?;
    let bytes = (v * factor as f64).floor();
    if bytes > MAX_SIZE as f64 {
        return Err(UnitError::OutOfRange(s.trim().to_owned(), "1P"));
    }
    Ok(bytes as u64)
}

/// Parse a duration; `bare` says what a number without suffix means.
pub fn parse_duration(s: &str, bare: DurationUnit) -> Result<Duration, UnitError> {
    let (num, suffix) = split(s);
    let bad = || UnitError::BadDuration(s.trim().to_owned(), bare.name());
    let secs = match suffix.as_str() {
        "" => bare.secs(),
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return Err(bad()),
    };
    let v = number(num).ok_or_else(bad)? * secs;
    if v > MAX_DURATION.as_secs_f64() {
        return Err(UnitError::OutOfRange(s.trim().to_owned(), "30 days"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// A size in whole MiB (for limits kept in MiB, e.g. `skarn run --memory`).
pub fn parse_size_mib(s: &str) -> Result<u64, UnitError> {
    let b = parse_size(s, SizeUnit::MiB)?;
    if b % MIB != 0 {
        return Err(UnitError::NotWhole(s.trim().to_owned(), "MiB"));
    }
    Ok(b / MIB)
}

/// A duration in whole seconds (for limits kept in seconds).
pub fn parse_duration_secs(s: &str) -> Result<u64, UnitError> {
    let d = parse_duration(s, DurationUnit::Secs)?;
    if d.subsec_nanos() != 0 {
        return Err(UnitError::NotWhole(s.trim().to_owned(), "seconds"));
    }
    Ok(d.as_secs())
}

/// A size or duration as written in a config file: an integer, a float or
/// a string with a suffix.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// `memory = 512`
    Int(i64),
    /// `timeout = 1.5`
    Float(f64),
    /// `memory = "512M"`
    Text(String),
}

impl Value {
    /// The value as text the parsers take (numbers unchanged).
    pub fn text(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Text(s) => s.clone(),
        }
    }
    /// Whether it was written as a bare number (no unit).
    pub fn is_bare(&self) -> bool {
        match self {
            Value::Int(_) | Value::Float(_) => true,
            Value::Text(s) => split(s).1.is_empty(),
        }
    }
    /// As a size in bytes.
    pub fn size(&self, bare: SizeUnit) -> Result<u64, UnitError> {
        parse_size(&self.text(), bare)
    }
    /// As a whole number of MiB.
    pub fn size_mib(&self) -> Result<u64, UnitError> {
        parse_size_mib(&self.text())
    }
    /// As a duration.
    pub fn duration(&self, bare: DurationUnit) -> Result<Duration, UnitError> {
        parse_duration(&self.text(), bare)
    }
    /// As whole seconds.
    pub fn duration_secs(&self) -> Result<u64, UnitError> {
        parse_duration_secs(&self.text())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

#[cfg(test)]
mod tests;
