//! Typed errors of the library.

/// A host pattern that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad host pattern {pattern:?}: {why}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub why: String,
}

impl PatternError {
    pub(crate) fn new(pattern: &str, why: impl Into<String>) -> PatternError {
        PatternError {
            pattern: pattern.to_string(),
            why: why.into(),
        }
    }
}
