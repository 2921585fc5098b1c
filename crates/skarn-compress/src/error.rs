//! Typed errors of the compression library.

use std::path::PathBuf;

/// A rules file could not be read, parsed or compiled.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("cannot read rules file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid rules in {origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("profile {profile:?}: bad pattern: {message}")]
    Pattern { profile: String, message: String },
    #[error("invalid rules: {0}")]
    Invalid(String),
}

/// The recall store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no state directory: set XDG_STATE_HOME or HOME, or pass --state-dir")]
    NoStateDir,
    #[error("refusing to keep raw output inside the workspace ({0}); choose another --state-dir")]
    InsideWorkspace(PathBuf),
    #[error("recall directory {path} is unsafe: {why}")]
    Unsafe { path: PathBuf, why: String },
    #[error("invalid recall id {0:?} (expected 12 lowercase hex digits)")]
    BadId(String),
    #[error("no saved output with id {0} (it may have been pruned)")]
    NotFound(String),
    #[error("recall store I/O on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Running and capturing a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("capturing output: {0}")]
    Io(#[from] std::io::Error),
}
