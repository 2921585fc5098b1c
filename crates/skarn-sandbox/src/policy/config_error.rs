//! The error of reading or parsing a configuration file (its own module:
//! both the reader, `config_read`, and the parser, `config`, return it).

/// A config error with its location.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Unreadable file.
    #[error("{path}: {err}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        err: std::io::Error,
    },
    /// Syntax or type error.
    #[error("{path}:{line}:{column}: {msg}")]
    At {
        /// File.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Message.
        msg: String,
    },
}
