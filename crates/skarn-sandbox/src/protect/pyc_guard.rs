//! Compiled Python files a run leaves next to sources it did not change
//! (attack atk24e F9). Python loads `__pycache__/NAME.TAG.pyc` instead of
//! `NAME.py` when the header's size and time match the source (or, for
//! an unchecked hash-based file, without looking at the source at all),
//! and `__pycache__` is ignored by git: a run could leave its own code
//! there under an untouched source, unseen by any diff. So after a run,
//! every file in a `__pycache__` made or changed during it whose source
//! exists and was not changed during it is removed; it is a cache, Python
//! compiles it again from the source. One written for a source the run
//! changed (the user sees that change) is kept, as is everything else.
//! Under `--workspace-layer cow` such a file is not applied
//! ([`check_layer_change`]).

use std::path::{Path, PathBuf};

/// Entries of one `__pycache__` looked at at most; past it every changed
/// entry is removed, whatever its source (fails closed).
const MAX_ENTRIES: usize = 100_000;

/// Remove the compiled files in `dirs` (`__pycache__` directories found by
/// the walk after the run) made or changed at or after `since` whose
/// source was not; returns one line for the user when any were.
pub fn vet(dirs: &[PathBuf], since: std::time::SystemTime) -> Option<String> {
    let mut removed = 0usize;
    let mut left = Vec::new();
    for d in dirs {
        let Some(parent) = d.parent() else { continue };
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for (i, e) in rd.flatten().enumerate() {
            let p = e.path();
            if !crate::protect::grant_walk::changed_since(&p, since) {
                continue;
            }
            if i < MAX_ENTRIES && !stale_plant(parent, &e.file_name(), since) {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                continue; // Python never loads a directory from here.
            }
            match std::fs::remove_file(&p) {
                Ok(()) => removed += 1,
                Err(err) => left.push(format!("{}: {err}", p.display())),
            }
        }
    }
    if removed == 0 && left.is_empty() {
        return None;
    }
    let mut line = format!(
        "{removed} compiled Python file(s) in __pycache__ written during the run for sources \
         it did not change were removed (Python loads them instead of the source; it \
         compiles them again)"
    );
    if !left.is_empty() {
        line.push_str(&format!(
            "; could not remove: {} (remove them before running Python there)",
            left.join(", ")
        ));
    }
    Some(line)
}

/// Whether the entry `name` of `parent/__pycache__` would be loaded for a
/// source that exists and did not change at or after `since`.
fn stale_plant(parent: &Path, name: &std::ffi::OsStr, since: std::time::SystemTime) -> bool {
    let name = name.to_string_lossy();
    // A module name has no dot: `NAME.cpython-311.pyc`, `NAME.TAG.opt-1.pyc`.
    let Some(stem) = name.split('.').next().filter(|s| !s.is_empty()) else {
        return false;
    };
    let src = parent.join(format!("{stem}.py"));
    std::fs::symlink_metadata(&src).is_ok()
        && !crate::protect::grant_walk::changed_since(&src, since)
}

/// Under `--workspace-layer cow`: refuse a file in a `__pycache__` for a source (`NAME.py` next to it) that the
/// workspace has and the layer did not change: Python would load it
/// instead of the source, and git shows nothing (attack atk24e F9).
pub fn check_layer_change(ws: &Path, rel: &Path, upper: &Path) -> Result<(), String> {
    let Some(dir) = rel
        .parent()
        .filter(|d| d.file_name() == Some(std::ffi::OsStr::new("__pycache__")))
    else {
        return Ok(());
    };
    let Some(stem) = rel
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .and_then(|f| f.split('.').next().map(str::to_owned))
        .filter(|s| !s.is_empty())
    else {
        return Ok(());
    };
    let src = dir
        .parent()
        .unwrap_or(Path::new(""))
        .join(format!("{stem}.py"));
    let Some(upper_root) = upper.ancestors().nth(rel.components().count()) else {
        return Ok(());
    };
    let on_host = std::fs::symlink_metadata(ws.join(&src)).is_ok();
    let changed = std::fs::symlink_metadata(upper_root.join(&src)).is_ok();
    if on_host && !changed {
        return Err(
            "a compiled Python file for a source the run did not change (python would \
             load it instead of the source)"
                .into(),
        );
    }
    Ok(())
}
