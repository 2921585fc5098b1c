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
//!
//! The same holds for a module named like the standard library's in any
//! form (an extension module `json.abi3.so`, a package
//! `json/__init__.py`; atk22k F3, F14): see [`crate::protect::stdlib_shadow`].

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::protect::stdlib_shadow::{self, Form};

/// Whether `p` names a file [`vet`] removes or sets aside after a run: one
/// inside a `__pycache__` directory, a `*.pyc` anywhere (any case), or a
/// compiled module named like the standard library's (`json.abi3.so`).
/// For writers that bypass the sandbox (an agent's own file tools, judged
/// by `skarn hook`), which no check after a run follows.
pub fn compiled_path(p: &Path) -> bool {
    let n: Vec<&OsStr> = p.iter().collect();
    p.iter().any(|c| c.eq_ignore_ascii_case("__pycache__"))
        || p.file_name()
            .is_some_and(crate::protect::grant_walk::is_compiled)
        || stdlib_shadow::of_path(&n, false).is_some_and(|s| s.form == Form::Compiled)
}

/// Whether `dir` was a regular package before `since`: an `__init__`
/// module of it was made or changed before.
fn package_since(dir: &Path, since: std::time::SystemTime) -> bool {
    stdlib_shadow::inits(dir)
        .iter()
        .any(|p| !crate::protect::grant_walk::changed_since(p, since))
}

/// What a loose file `p` the run made or changed is, when [`vet`] must
/// set it aside: its description, None to keep it (a source module inside
/// a directory that was a regular package before the run).
fn loose_reason(p: &Path, since: std::time::SystemTime) -> Option<String> {
    let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let n: Vec<&OsStr> = p.iter().collect();
    let shadow = stdlib_shadow::of_path(&n, link);
    if p.file_name()
        .is_some_and(crate::protect::grant_walk::is_compiled)
    {
        return Some(format!(
            "a compiled Python file {} was written during the run: Python imports it as a \
             module (before the standard library's, next to a script) without any source",
            p.display()
        ));
    }
    if let (Some(d), Some(name)) = (p.parent(), p.file_name())
        && let Some(why) = crate::protect::py_ext_twin::shadows(&[d], name)
    {
        return Some(format!("{} was written during the run: {why}", p.display()));
    }
    let s = shadow?;
    let dir: PathBuf = n[..s.dir].iter().collect();
    let changed = |q: &Path| crate::protect::grant_walk::changed_since(q, since);
    if s.form == Form::Source
        && !link
        && (package_since(&dir, since) || crate::protect::shadow_visible::shown_by_git(p, &changed))
    {
        return None;
    }
    Some(format!(
        "{} was written during the run: {}",
        p.display(),
        stdlib_shadow::describe(&s)
    ))
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
        let Some(why) = loose_reason(p, since) else {
            continue;
        };
        let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
        out.push(format!(
            "{why}; {}",
            aside.describe("review it before renaming it back")
        ));
    }
    out
}

/// Under `--workspace-layer cow`: refuse a compiled Python file the layer
/// made or changed (`rel`, relative to the workspace `ws`; not for a
/// deletion; `link`: the entry is a link), in a `__pycache__` or not:
/// Python would load it instead of the source or as a module of its own,
/// and git shows nothing; and a module named like the standard library's
/// ([`stdlib_shadow`]), judged on disk, a source one (no link) kept inside
/// a directory that was a regular package before the layer or when
/// `git status` shows it by the ignore rules of before the run
/// ([`crate::protect::shadow_visible`]; `upper_root`: the layer's top).
pub fn check_layer_change(
    ws: &Path,
    rel: &Path,
    link: bool,
    upper_root: Option<&Path>,
) -> Result<(), String> {
    compiled_layer_change(rel)?;
    let n: Vec<&OsStr> = rel.iter().collect();
    let Some((last, parent)) = n.split_last() else {
        return Ok(());
    };
    let at = |k: usize| -> PathBuf { ws.join(n[..k].iter().collect::<PathBuf>()) };
    if stdlib_shadow::is_init(last) {
        // Asked before this `__init__` lands, so that it does not make its
        // directory an earlier package for the modules beside it.
        stdlib_shadow::package_before(&at(parent.len()));
    }
    let Some(s) = stdlib_shadow::of_path(&n, link) else {
        return Ok(());
    };
    if s.form != Form::Source || link {
        return Err(stdlib_shadow::describe(&s));
    }
    // Made or changed by the run: in the layer (a removal included).
    let changed = |q: &Path| {
        q.strip_prefix(ws).ok().is_some_and(|r| {
            !r.as_os_str().is_empty()
                && upper_root.is_none_or(|u| std::fs::symlink_metadata(u.join(r)).is_ok())
        })
    };
    if stdlib_shadow::package_before(&at(s.dir))
        || crate::protect::shadow_visible::shown_by_git(&ws.join(rel), &changed)
    {
        return Ok(());
    }
    Err(stdlib_shadow::describe(&s))
}

fn compiled_layer_change(rel: &Path) -> Result<(), String> {
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
        let ws = Path::new("/nonexistent-ws");
        let check = |p: &str| check_layer_change(ws, Path::new(p), false, None);
        assert!(check("a/__pycache__/app.cpython-312.pyc").is_err());
        assert!(check("json.pyc").is_err());
        assert!(check("pkg/Mod.PYC").is_err());
        assert!(check("app.py").is_ok());
        assert!(check("notes.pyc.txt").is_ok());
        assert!(check("tools/json.abi3.so").is_err());
        assert!(check("json/__init__.py").is_err());
        assert!(check("app/_core.cpython-311-x86_64-linux-gnu.so").is_ok());
        assert!(check_layer_change(ws, Path::new("bin/json"), true, None).is_err());
        assert!(compiled_path(Path::new(
            "/w/json.cpython-311-x86_64-linux-gnu.so"
        )));
        assert!(!compiled_path(Path::new("/w/json.py")));
    }

    #[test]
    fn a_source_module_inside_an_earlier_package_is_kept() {
        let t = skarn_test_support::TempDir::new("pyc-guard-pkg");
        let ws = t.path();
        std::fs::create_dir_all(ws.join("app")).unwrap();
        std::fs::write(ws.join("app/__init__.py"), "").unwrap();
        let check = |p: &str| check_layer_change(ws, Path::new(p), false, None);
        assert!(check("app/types.py").is_ok());
        assert!(check("app/http/__init__.py").is_ok());
        assert!(check("app/types.abi3.so").is_err());
        assert!(check("types.py").is_err());
        // A directory the layer makes a package.
        stdlib_shadow::scoped(|| {
            assert!(check("tools/__init__.py").is_ok());
            std::fs::create_dir_all(ws.join("tools")).unwrap();
            std::fs::write(ws.join("tools/__init__.py"), "").unwrap();
            assert!(check("tools/json.py").is_err());
        });
    }
}
