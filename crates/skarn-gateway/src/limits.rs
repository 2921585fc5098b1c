//! `[gateway.limits]`: the per-script limits of `execute`, written with the
//! shared size and duration syntax (`skarn-units`).
//!
//! ```toml
//! [gateway.limits]
//! memory = "64M"        # a bare number is MiB (or memory_bytes = 67108864)
//! stack = "1M"          # a bare number is MiB (or stack_bytes)
//! timeout = "30s"       # a bare number is seconds
//! max_output = "1M"     # a bare number is MiB (or max_output_bytes)
//! max_log_bytes = "256K"  # a bare number is bytes (the name says so)
//! max_log_lines = 1000
//! max_tool_calls = 256
//! ```
//!
//! `deadline` (the old name of `timeout`) took milliseconds as a bare
//! number. Reading `deadline = 30000` as seconds would silently turn 30 s
//! into 8 hours, and as milliseconds would break the rule that a bare number
//! is seconds, so a bare number there is refused with a message saying how
//! to write it; `deadline = "30s"` or `"30000ms"` work.

use std::time::Duration;

use serde::de::Error;
use serde::{Deserialize, Deserializer};
use skarn_codemode::Limits;
use skarn_units::{DurationUnit, SizeUnit, Value};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    #[serde(default, deserialize_with = "mib")]
    memory: Option<u64>,
    #[serde(default, deserialize_with = "bytes")]
    memory_bytes: Option<u64>,
    #[serde(default, deserialize_with = "mib")]
    stack: Option<u64>,
    #[serde(default, deserialize_with = "bytes")]
    stack_bytes: Option<u64>,
    #[serde(default, deserialize_with = "secs")]
    timeout: Option<Duration>,
    #[serde(default, deserialize_with = "deadline")]
    deadline: Option<Duration>,
    #[serde(default, deserialize_with = "mib")]
    max_output: Option<u64>,
    #[serde(default, deserialize_with = "bytes")]
    max_output_bytes: Option<u64>,
    #[serde(default, deserialize_with = "bytes")]
    max_log_bytes: Option<u64>,
    max_log_lines: Option<usize>,
    max_tool_calls: Option<u32>,
}

fn mib<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    v.size(SizeUnit::MiB).map(Some).map_err(D::Error::custom)
}

fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    v.size(SizeUnit::Bytes).map(Some).map_err(D::Error::custom)
}

fn secs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let v = Value::deserialize(d)?;
    v.duration(DurationUnit::Secs)
        .map(Some)
        .map_err(D::Error::custom)
}

fn deadline<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let v = Value::deserialize(d)?;
    if v.is_bare() {
        let n = v.text();
        return Err(D::Error::custom(format!(
            "deadline = {n}: a bare number here used to mean milliseconds, and a bare \
             number now means seconds everywhere; write deadline = \"{n}ms\" (or \
             \"{}s\"), or timeout = {}",
            n.parse::<f64>()
                .map_or(n.clone(), |ms| (ms / 1000.0).to_string()),
            n.parse::<f64>()
                .map_or(n.clone(), |ms| (ms / 1000.0).to_string()),
        )));
    }
    v.duration(DurationUnit::Secs)
        .map(Some)
        .map_err(D::Error::custom)
}

fn one_of<T>(a: Option<T>, b: Option<T>, names: &str) -> Result<Option<T>, String> {
    match (a, b) {
        (Some(_), Some(_)) => Err(format!("set only one of {names}")),
        (a, b) => Ok(a.or(b)),
    }
}

fn usize_of(v: u64, key: &str) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("{key} is too large"))
}

/// `deserialize_with` for `GatewayConfig::limits`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Limits, D::Error> {
    let raw = RawLimits::deserialize(d)?;
    build(raw).map_err(D::Error::custom)
}

fn build(raw: RawLimits) -> Result<Limits, String> {
    let mut l = Limits::default();
    if let Some(m) = one_of(raw.memory, raw.memory_bytes, "memory and memory_bytes")? {
        l.memory_bytes = usize_of(m, "memory")?;
    }
    if let Some(s) = one_of(raw.stack, raw.stack_bytes, "stack and stack_bytes")? {
        l.stack_bytes = usize_of(s, "stack")?;
    }
    if let Some(o) = one_of(
        raw.max_output,
        raw.max_output_bytes,
        "max_output and max_output_bytes",
    )? {
        l.max_output_bytes = usize_of(o, "max_output")?;
    }
    if let Some(t) = one_of(raw.timeout, raw.deadline, "timeout and deadline")? {
        if t.is_zero() {
            return Err("timeout must be positive".into());
        }
        l.deadline = t;
    }
    if let Some(b) = raw.max_log_bytes {
        l.max_log_bytes = usize_of(b, "max_log_bytes")?;
    }
    if let Some(n) = raw.max_log_lines {
        l.max_log_lines = n;
    }
    if let Some(n) = raw.max_tool_calls {
        l.max_tool_calls = n;
    }
    Ok(l)
}

/// The execute slots one session may hold at once, of `slots`.
pub fn session_share(slots: usize) -> usize {
    (slots / 2).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn limits(body: &str) -> Result<Limits, String> {
        Config::parse(&format!("[gateway]\n[gateway.limits]\n{body}\n"), "f")
            .map(|c| c.gateway.limits)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn units_in_every_key() {
        let l = limits(
            "memory = 128\nstack = \"512K\"\ntimeout = 10\nmax_output = \"2M\"\n\
             max_log_bytes = 1000\nmax_log_lines = 5\nmax_tool_calls = 7",
        )
        .unwrap();
        assert_eq!(l.memory_bytes, 128 << 20);
        assert_eq!(l.stack_bytes, 512 << 10);
        assert_eq!(l.deadline, Duration::from_secs(10));
        assert_eq!(l.max_output_bytes, 2 << 20);
        assert_eq!(l.max_log_bytes, 1000);
        assert_eq!((l.max_log_lines, l.max_tool_calls), (5, 7));
        let l =
            limits("memory_bytes = 67108864\nstack_bytes = \"2M\"\ntimeout = \"1.5s\"").unwrap();
        assert_eq!(l.memory_bytes, 64 << 20);
        assert_eq!(l.stack_bytes, 2 << 20);
        assert_eq!(l.deadline, Duration::from_millis(1500));
        assert_eq!(limits("").unwrap(), Limits::default());
    }

    #[test]
    fn deadline_needs_a_unit() {
        let e = limits("deadline = 30000").unwrap_err();
        assert!(e.starts_with("f:3:12: "), "{e}");
        assert!(
            e.contains("\"30000ms\"") && e.contains("timeout = 30"),
            "{e}"
        );
        let l = limits("deadline = \"30000ms\"").unwrap();
        assert_eq!(l.deadline, Duration::from_secs(30));
        assert_eq!(
            limits("deadline = \"5s\"").unwrap().deadline,
            Duration::from_secs(5)
        );
    }

    #[test]
    fn errors() {
        let e = limits("memory = \"lots\"").unwrap_err();
        assert!(
            e.starts_with("f:3:10: ") && e.contains("invalid size"),
            "{e}"
        );
        let e = limits("memory = 1\nmemory_bytes = 1").unwrap_err();
        assert!(e.contains("only one of memory and memory_bytes"), "{e}");
        let e = limits("timeout = 0").unwrap_err();
        assert!(e.contains("positive"), "{e}");
        let e = limits("heap = 1").unwrap_err();
        assert!(e.contains("heap"), "{e}");
    }
}
