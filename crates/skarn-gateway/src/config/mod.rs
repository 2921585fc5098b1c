//! `skarn.toml`: the `[gateway]` section and one `[servers.<alias>]` table
//! per downstream MCP server.
//!
//! Other top-level sections (e.g. `[run]`, owned by the sandbox) are ignored
//! here; unknown keys *inside* `[gateway]` or a server table are errors.
//! Every error names the file, line and column.
//!
//! `load` reads the file; `gateway_section` and `server_table` hold
//! each section's keys and checks.

mod gateway_section;
mod load;
pub mod programs;
mod server_table;
#[cfg(test)]
mod tests;
mod untrusted;
mod untrusted_gateway;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use gateway_section::GatewayConfig;
pub use server_table::{
    Auth, EnvValue, FromEnv, SecretRef, ServerConfig, ServerTransport, StateFile, TransportKind,
};
/// Where `execute` runs scripts (`auto`, `worker`, `in_process`): the
/// Code Mode worker's setting, re-exported.
pub use skarn_worker::Isolation;

/// The whole file, validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// The file it came from (`None` when built in memory).
    pub path: Option<PathBuf>,
    pub gateway: GatewayConfig,
    /// Sorted by alias.
    pub servers: Vec<ServerConfig>,
}

/// A configuration error, located in its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// `deserialize_with` for a size whose bare number is bytes.
fn bytes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    use serde::Deserialize;
    use serde::de::Error;
    let v = skarn_units::Value::deserialize(d)?;
    let n = v
        .size(skarn_units::SizeUnit::Bytes)
        .map_err(D::Error::custom)?;
    usize::try_from(n).map_err(|_| D::Error::custom("size too large"))
}

fn secs(v: f64, what: &str) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "{what} must be a duration between 0 and 24h (e.g. 30, \"30s\", \"2m\")"
        ))
    }
}
