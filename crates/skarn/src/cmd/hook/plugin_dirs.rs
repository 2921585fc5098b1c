//! Plugins Claude Code loads for one session only (`claude --plugin-dir
//! DIR`, repeatable): nothing in the hook input names them, but the
//! client is an ancestor of the hook's process, so its command line is
//! read ([`skarn_sandbox::protect::client_args`], Linux only). Their hooks
//! count like installed plugins' ([`super::claude_peers`]); `skarn run`
//! and the file guard keep the directories from the agent (ADR 0287).

use std::path::PathBuf;

/// The `--plugin-dir` directories of the hook's ancestors' command lines.
#[cfg(unix)]
pub fn from_parents() -> Vec<PathBuf> {
    skarn_sandbox::protect::client_args::from_parents().plugin_dirs
}

/// Elsewhere none are found (docs/hook.md says so).
#[cfg(not(unix))]
pub fn from_parents() -> Vec<PathBuf> {
    Vec::new()
}
