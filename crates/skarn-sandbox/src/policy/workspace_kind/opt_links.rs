//! Installations under `/opt` that a `PATH` entry links to, as workspaces
//! (attack atk22n F3): `/usr/local/bin/go -> /opt/go/bin/go`,
//! `/usr/bin/google-chrome -> /etc/alternatives/... -> /opt/google/chrome/
//! google-chrome`, an AppImage's directory. The planner takes a link chain
//! that stays in the system directories as unchangeable and carries none
//! of them, but `/opt/<dir>` may be a workspace: a run there would rewrite
//! what the host runs next by that name. Decided from the links (resolved
//! fully), not from a `bin` layout: the installation prefix is the
//! target's directory, or the directory above it when that is named
//! `bin`; a workspace that is, lies in or holds it is refused.

use std::path::{Path, PathBuf};

/// The system directory a workspace may lie in that links reach.
const OPT: &str = "/opt";

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
/// past it a workspace under `/opt` is refused (never a silent cap).
const MAX_NAMES: usize = 50_000;

/// Why `ws` (canonical) is, lies in or holds an installation under
/// `/opt` that a link in a `PATH` directory (`reals`: canonical, shown)
/// leads to; `homes`: no prefix may be or hold one.
pub(super) fn reason(ws: &Path, reals: &[(PathBuf, PathBuf)], homes: &[PathBuf]) -> Option<String> {
    if !ws.starts_with(OPT) {
        return None;
    }
    let mut dirs: Vec<(PathBuf, PathBuf)> = reals.to_vec();
    for s in SYSTEM_BIN {
        let real = std::fs::canonicalize(s).unwrap_or_else(|_| PathBuf::from(s));
        if !dirs.iter().any(|(r, _)| *r == real) {
            dirs.push((real, PathBuf::from(s)));
        }
    }
    let mut seen = 0usize;
    for (real, shown) in &dirs {
        let Ok(rd) = std::fs::read_dir(real) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_NAMES {
                return Some(format!(
                    "{} lies in {OPT}, and the PATH directories hold more than {MAX_NAMES} \
                     names: whether a program there links into it was not finished",
                    ws.display()
                ));
            }
            if !e.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            let Ok(target) = std::fs::canonicalize(e.path()) else {
                continue;
            };
            let Some(prefix) = prefix_of(&target, homes) else {
                continue;
            };
            if !(ws.starts_with(&prefix) || prefix.starts_with(ws)) {
                continue;
            }
            let how = if ws == prefix {
                "is"
            } else if ws.starts_with(&prefix) {
                "lies in"
            } else {
                "holds"
            };
            return Some(format!(
                "{} {how} {}, the installation of {} (a link in the PATH directory {} leads to \
                 {}): code the command put there would run in the host's next call",
                ws.display(),
                prefix.display(),
                e.file_name().to_string_lossy(),
                shown.display(),
                target.display()
            ));
        }
    }
    None
}

/// The installation prefix of the program `target` (canonical) under
/// `/opt`: its directory, or the one above when that is a `bin`.
fn prefix_of(target: &Path, homes: &[PathBuf]) -> Option<PathBuf> {
    if !target.starts_with(OPT) {
        return None;
    }
    let dir = target.parent()?;
    let prefix = if dir.file_name().is_some_and(|n| n == "bin") {
        dir.parent()?
    } else {
        dir
    };
    super::is_prefix(prefix, homes).then(|| prefix.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_under_opt() {
        let h: Vec<PathBuf> = Vec::new();
        assert_eq!(
            prefix_of(Path::new("/opt/go/bin/go"), &h),
            Some(PathBuf::from("/opt/go"))
        );
        assert_eq!(
            prefix_of(Path::new("/opt/app/app"), &h),
            Some(PathBuf::from("/opt/app"))
        );
        assert_eq!(prefix_of(Path::new("/opt/app"), &h), None);
        assert_eq!(prefix_of(Path::new("/usr/lib/x/bin/x"), &h), None);
    }
}
