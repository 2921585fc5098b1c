//! What the protected configuration of a writable grant other than the
//! workspace names (attack atk24l F11): the scripts its `.envrc` sources,
//! the files its mise configuration loads, and the files ADR 0249's
//! reader finds named by its agent, editor, git and pre-commit
//! configuration. Host tools run them when the user works in that
//! project, so they are kept read-only (reserved when missing) exactly as
//! the workspace's are.

use std::path::{Path, PathBuf};

use super::grants::Granted;

/// The files `top`'s configuration names that lie in a writable grant
/// (missing `PATH` directories left out: the tools make them, and the
/// checks after the run look at them).
pub(super) fn named(top: &Path, home: Option<&Path>, g: &Granted) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let envrc = top.join(".envrc");
    let envrc_path = crate::protect::envrc::path_dirs(&envrc);
    out.extend(
        crate::protect::envrc::sourced(&envrc)
            .into_iter()
            .filter(|p| !envrc_path.contains(p)),
    );
    out.extend(crate::protect::mise_env::named(top, home).files);
    out.extend(
        crate::protect::config_named::named(top)
            .into_iter()
            .map(|(p, _)| p),
    );
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| g.writable(p).is_some() && seen.insert(p.clone()));
    out
}
