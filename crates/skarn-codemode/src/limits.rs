//! Hard limits on one script run. Every field is enforced by the engine.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Limits for one `execute`. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// QuickJS heap limit in bytes (default 64 MiB).
    pub memory_bytes: usize,
    /// Native stack limit in bytes (default 1 MiB).
    pub stack_bytes: usize,
    /// Wall-clock deadline for the whole run (default 30 s).
    #[serde(with = "millis")]
    pub deadline: Duration,
    /// Maximum host calls (default 256).
    pub max_tool_calls: u32,
    /// Maximum size of the returned value serialized as JSON (default 1 MiB).
    pub max_output_bytes: usize,
    /// Maximum number of log lines kept (default 1000).
    pub max_log_lines: usize,
    /// Maximum total bytes of log lines kept (default 256 KiB).
    pub max_log_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            stack_bytes: 1 << 20,
            deadline: Duration::from_secs(30),
            max_tool_calls: 256,
            max_output_bytes: 1 << 20,
            max_log_lines: 1000,
            max_log_bytes: 256 << 10,
        }
    }
}

impl Limits {
    /// The error cap: the most bytes of text (message plus details, counted
    /// as JSON string contents, like the output cap) a failed run reports,
    /// namely the output cap bounded to between
    /// [`MIN_ERROR_BYTES`](crate::MIN_ERROR_BYTES) (1 KiB) and
    /// [`MAX_ERROR_BYTES`](crate::MAX_ERROR_BYTES) (64 KiB). Text past it
    /// is cut, and the cut is marked ("… [truncated N bytes]").
    pub fn error_bytes(&self) -> usize {
        self.max_output_bytes
            .clamp(crate::MIN_ERROR_BYTES, crate::MAX_ERROR_BYTES)
    }
}

mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().min(u128::from(u64::MAX)) as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}
