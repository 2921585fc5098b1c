//! Compiled Python files a run leaves behind (attacks atk24e F9, atk24h
//! F11). Python loads `__pycache__/NAME.TAG.pyc` instead of `NAME.py` when
//! the header's size and time match the source (or, for an unchecked
//! hash-based file, without looking at the source at all), and imports a
//! sourceless `NAME.pyc` found in a directory of `sys.path` (the script's
//! own directory first) when no `NAME.py` is there: `json.pyc` next to a
//! script shadows the standard library's `json`. Neither shows in a diff.
//!
//! Whether a source "was changed" cannot be told from its metadata: a
//! no-op `chmod` or `utime` of it moves its change time without changing a
//! byte, so any rule that keeps a compiled file for a changed source is a
//! way around the guard. So after a run every file in a `__pycache__` made
//! or changed during it is removed (a cache: Python compiles it again from
//! the source), and every other `*.pyc` made or changed during it is set
//! aside. Under `--workspace-layer cow` neither is applied
//! ([`check_layer_change`]).

use std::path::{Path, PathBuf};

/// Whether `p` names a file [`vet`] removes or sets aside after a run: one
/// inside a `__pycache__` directory, or a `*.pyc` anywhere (any case).
/// For writers that bypass the sandbox (an agent's own file tools, judged
/// by `skarn hook`), which no check after a run follows.
pub fn compiled_path(p: &Path) -> bool {
    p.iter().any(|c| c.eq_ignore_ascii_case("__pycache__"))
        || p.file_name()
            .is_some_and(crate::protect::grant_walk::is_compiled)
}

/// Remove the compiled files in `dirs` (`__pycache__` directories found by
/// the walk after the run) and set aside the `loose` ones (`*.pyc` files
/// elsewhere) made or changed at or after `since`; one line for the user
/// when any were.
pub fn vet(dirs: &[PathBuf], loose: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut removed = 0usize;
    let mut left = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if !crate::protect::grant_walk::changed_since(&p, since) {
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
    if removed > 0 || !left.is_empty() {
        let mut line = format!(
            "{removed} compiled Python file(s) in __pycache__ written during the run were \
             removed (Python would load them instead of the source; it compiles them again)"
        );
        if !left.is_empty() {
            line.push_str(&format!(
                "; could not remove: {} (remove them before running Python there)",
                left.join(", ")
            ));
        }
        out.push(line);
    }
    for p in loose {
        if !crate::protect::grant_walk::changed_since(p, since)
            || std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
        {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
        out.push(format!(
            "a compiled Python file {} was written during the run: Python imports it as a \
             module (before the standard library's, next to a script) without any source; {}",
            p.display(),
            aside.describe("review it before renaming it back")
        ));
    }
    out
}

/// Under `--workspace-layer cow`: refuse a compiled Python file the layer
/// made or changed (`rel`, relative to the workspace; not for a deletion),
/// in a `__pycache__` or not: Python would load it instead of the source
/// or as a module of its own, and git shows nothing.
pub fn check_layer_change(rel: &Path) -> Result<(), String> {
    let in_cache = rel
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "__pycache__");
    if in_cache
        || rel
            .file_name()
            .is_some_and(crate::protect::grant_walk::is_compiled)
    {
        return Err(
            "a compiled Python file (python would load it instead of the source, or \
             as a module without one; it compiles its own from the sources)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compiled_file_of_the_layer_is_refused() {
        assert!(check_layer_change(Path::new("a/__pycache__/app.cpython-312.pyc")).is_err());
        assert!(check_layer_change(Path::new("json.pyc")).is_err());
        assert!(check_layer_change(Path::new("pkg/Mod.PYC")).is_err());
        assert!(check_layer_change(Path::new("app.py")).is_ok());
        assert!(check_layer_change(Path::new("notes.pyc.txt")).is_ok());
    }
}
