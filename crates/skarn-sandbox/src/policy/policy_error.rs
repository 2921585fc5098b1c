//! Why a policy could not be assembled: the one error of the policy
//! layer's steps (assembly, the workspace, flags), kept apart so each of
//! them can return it without depending on the others.

use crate::policy::config::ConfigError;

/// Why a policy could not be assembled. Config errors carry `file:line:column`.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A config file is unreadable or holds a bad value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A bad or inconsistent flag (the message names it).
    #[error("{0}")]
    Flag(String),
    /// The workspace is missing or not a directory.
    #[error("{0}")]
    Workspace(String),
    /// The network allow list is empty or invalid once expanded.
    #[error("{0}")]
    Net(String),
}
