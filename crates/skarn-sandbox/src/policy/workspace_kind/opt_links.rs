//! The links of the `PATH` directories, as entries of the host's
//! launcher list ([`super::launchers`]; attacks atk22n F3, atk22o F3):
//! `/usr/local/bin/go -> /opt/go/bin/go`, `/usr/bin/google-chrome ->
//! /etc/alternatives/... -> /opt/google/chrome/google-chrome`,
//! `/usr/local/bin/tool -> /srv/apps/tool/tool`. Each link is resolved
//! fully; where its target lies does not matter here (the launcher list
//! decides the installation it belongs to).

use std::path::{Path, PathBuf};

use crate::fact_deps::{Deps, Node};

/// `PATH` directories the host's next call also searches.
const SYSTEM_BIN: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Directory entries looked at, at most, over every `PATH` directory;
/// past it the list is incomplete and a workspace is refused (never a
/// silent cap).
pub(super) const MAX_NAMES: usize = 50_000;

/// The targets (canonical) of the links in the `PATH` directories
/// (`reals`: canonical, shown) and the system ones, with how each is
/// named; and whether [`MAX_NAMES`] was reached.
pub(super) fn links(
    reals: &[(PathBuf, PathBuf)],
    deps: &mut Deps,
) -> (Vec<(PathBuf, String)>, bool) {
    let mut dirs: Vec<(PathBuf, PathBuf)> = reals.to_vec();
    for s in SYSTEM_BIN {
        let real = deps
            .resolve(Path::new(s))
            .map_or_else(|| PathBuf::from(s), |(r, _)| r);
        if !dirs.iter().any(|(r, _)| *r == real) {
            dirs.push((real, PathBuf::from(s)));
        }
    }
    let mut out = Vec::new();
    let mut seen = 0usize;
    for (real, shown) in &dirs {
        // (Resolved again: the listing's directory is stamped.)
        let Some((real, Node::Dir)) = deps.resolve(real) else {
            continue;
        };
        let Ok(rd) = std::fs::read_dir(&real) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_NAMES {
                return (out, true);
            }
            if !e.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            // A link to a name of the same directory (`python3 ->
            // python3.12`) leads where that entry leads: looked at there.
            let p = e.path();
            if let Node::Link(t) = deps.node(&p)
                && t.components().count() == 1
                && !t.has_root()
            {
                continue;
            }
            let Some((target, _)) = deps.resolve(&p) else {
                continue;
            };
            let how = format!(
                "a link in the PATH directory {} ({}) leads to {}",
                shown.display(),
                e.file_name().to_string_lossy(),
                target.display()
            );
            out.push((target, how));
        }
    }
    (out, false)
}
