//! Distribution metadata outside an environment's packages (attack atk22l
//! F17). `importlib.metadata` reads every `*.egg-info` and `*.dist-info`
//! directory in each directory of `sys.path` as an installed distribution,
//! and `python -m TOOL` (test discovery at folder open, `python -m
//! pytest`) puts the current directory there: the `entry_points.txt` of
//! such a directory in the project names modules pytest (`pytest11`),
//! flake8 and every other plugin-loading tool import at their start. The
//! usual `.gitignore` hides both the metadata and a `build/` module, so
//! git shows nothing.
//!
//! So an `entry_points.txt` of a metadata directory the run made or
//! changed outside `site-packages`/`dist-packages` (where installers
//! write them, judged by the environment rules) is refused in the layer
//! ([`check_layer_change`]) and set aside after a run in place
//! ([`after_run`]). A build backend's copy in the project
//! (`pkg.egg-info/`) is not what an installed environment reads: PEP 660
//! installs keep their own in `site-packages`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Directories walked at most after a run in place.
const MAX_DIRS: usize = 200_000;

/// The file naming the modules plugin hosts import.
const ENTRY_POINTS: &str = "entry_points.txt";

/// Whether `name` is a distribution's metadata directory.
fn metadata_dir(name: &OsStr) -> bool {
    let n = name.to_string_lossy().to_ascii_lowercase();
    n.ends_with(".egg-info") || n.ends_with(".dist-info")
}

/// Where installers put distributions (judged by the environment rules).
fn packages_dir(name: &OsStr) -> bool {
    name == "site-packages" || name == "dist-packages"
}

/// Whether the names `n` (a path's) are an entry-point file of metadata
/// outside an environment's packages.
pub fn loose_entry_points(n: &[&OsStr]) -> bool {
    let [dir @ .., meta, last] = n else {
        return false;
    };
    *last == ENTRY_POINTS && metadata_dir(meta) && !dir.iter().any(|c| packages_dir(c))
}

/// The layer's rule: `Err` for a file or link made at such a place
/// (`delete`: a removal, always fine).
pub fn check_layer_change(n: &[&OsStr], delete: bool) -> Result<(), String> {
    if !delete && loose_entry_points(n) {
        return Err(
            "the entry points of distribution metadata in the project (python -m pytest and \
             other plugin hosts started here import the modules it names)"
                .into(),
        );
    }
    Ok(())
}

/// After a run in place: set aside each such file below `roots` made or
/// changed at or after `since`; one line each.
pub fn after_run(roots: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = roots.to_vec();
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            out.push(format!(
                "more than {MAX_DIRS} directories: distribution metadata past them was not \
                 vetted"
            ));
            break;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            if !e.file_type().is_ok_and(|t| t.is_dir())
                || name == ".git"
                || name == "node_modules"
                || packages_dir(&name)
            {
                continue;
            }
            if metadata_dir(&name) {
                out.extend(set_aside_one(&e.path().join(ENTRY_POINTS), since));
            } else {
                todo.push(e.path());
            }
        }
    }
    out
}

fn set_aside_one(p: &Path, since: std::time::SystemTime) -> Option<String> {
    if !crate::protect::grant_walk::changed_since(p, since) {
        return None;
    }
    let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
    Some(format!(
        "{} was made or changed during the run: python -m pytest and other plugin hosts \
         started in that directory import the modules it names; {}",
        p.display(),
        aside.describe("review it before renaming it back")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_outside_packages_are_refused() {
        fn n(s: &[&'static str]) -> Vec<&'static OsStr> {
            s.iter().map(|x| OsStr::new(*x)).collect()
        }
        let bad = n(&["zz.egg-info", "entry_points.txt"]);
        assert!(check_layer_change(&bad, false).is_err());
        assert!(check_layer_change(&bad, true).is_ok());
        let src = n(&["src", "p-1.dist-info", "entry_points.txt"]);
        assert!(check_layer_change(&src, false).is_err());
        let venv = n(&[
            ".venv",
            "lib",
            "python3.11",
            "site-packages",
            "p-1.dist-info",
            "entry_points.txt",
        ]);
        assert!(check_layer_change(&venv, false).is_ok());
        let other = n(&["zz.egg-info", "PKG-INFO"]);
        assert!(check_layer_change(&other, false).is_ok());
    }
}
