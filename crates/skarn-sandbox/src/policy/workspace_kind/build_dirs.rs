//! Build directories host tools trust by their records, not by their
//! content (attack atk22m F7): cargo's target directory and its profile
//! directories. Host cargo runs a compiled build script, links an rlib or
//! runs a test from there when the fingerprints say it is up to date; a
//! workspace that is such a directory, or lies in one, would let a run
//! replace what cargo runs next (the check after the run looks only below
//! the workspace for profile directories).

use std::path::{Path, PathBuf};

/// What cargo writes at the top of a target directory it made.
const CACHEDIR_TAG: &str = "CACHEDIR.TAG";

/// The tag's signature line (the cache directory tag standard).
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// A build directory `ws` is or lies in, with what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuildDir {
    /// The directory (`ws` or an ancestor).
    pub dir: PathBuf,
    /// What it is, for the message.
    pub what: &'static str,
}

/// Whether `dir` is a target directory cargo made: a `CACHEDIR.TAG`
/// naming cargo, or a profile directory below it.
fn is_cargo_target(dir: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(dir.join(CACHEDIR_TAG)) else {
        return false;
    };
    let mut text = String::new();
    let _ = f.take(4096).read_to_string(&mut text);
    text.starts_with(TAG_SIGNATURE) && text.contains("cargo")
}

/// The outermost cargo target or profile directory `ws` (canonical) is
/// or lies in (a profile directory holds `.fingerprint`).
pub(crate) fn holding(ws: &Path) -> Option<BuildDir> {
    let mut found = None;
    for a in ws.ancestors() {
        if a.parent().is_none() {
            break;
        }
        if is_cargo_target(a) {
            found = Some(BuildDir {
                dir: a.to_path_buf(),
                what: "cargo's target directory",
            });
        } else if is_profile(a) {
            found = Some(BuildDir {
                dir: a.to_path_buf(),
                what: "a cargo profile directory",
            });
        }
    }
    found
}

/// Whether `dir` is a cargo profile directory (it holds `.fingerprint`;
/// as `protect::cargo_target::is_profile`, which is built on unix only).
fn is_profile(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(".fingerprint")).is_ok_and(|m| m.is_dir())
}
