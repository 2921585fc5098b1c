//! One directory entry of the walk classified.

use std::path::{Path, PathBuf};

use super::*;

/// Where a subdirectory is walked.
pub(super) enum Sub {
    /// With the other directories, level by level.
    Plain,
    /// Last: a [`SKIPPED`] tree.
    Late,
    /// Last, for sockets and other names only: a git directory.
    Git,
}

/// Record what `dir`'s `entries` hold; the subdirectories to walk, or
/// `None` when `dir` is a bare repository (not walked further unless it
/// is a root).
pub(super) fn classify(
    w: &mut Walk,
    dir: &Path,
    entries: Vec<std::fs::DirEntry>,
    is_root: bool,
    inodes: &Inodes,
) -> Option<Vec<(PathBuf, Sub)>> {
    // A bare repository (HEAD, objects, refs; or HEAD and a `commondir`):
    // host git uses it when run inside it. (A root too: with its `.git`
    // missing or spoiled, git takes it for one.)
    let has = |n: &str| entries.iter().any(|e| e.file_name() == n);
    // A virtual environment, or a conda prefix (conda, mamba, pixi's
    // `.pixi/envs/*`): its start-up files and activation scripts.
    let conda = entries
        .iter()
        .any(|e| e.file_name() == "conda-meta" && e.file_type().is_ok_and(|t| t.is_dir()));
    // (Its activation directories count as a marker too: atk22h F13.)
    if has("pyvenv.cfg") || conda || (has("etc") && is_conda_env(dir)) {
        w.venvs.push(dir.to_path_buf());
    }
    if has("HEAD") && ((has("objects") && has("refs")) || has("commondir")) {
        w.repos.push(dir.to_path_buf());
        if !is_root {
            return None;
        }
    }
    // The files its makefiles include: read by host make as makefile text,
    // judged like environment files (atk22m F10).
    if crate::protect::make_include::MAKEFILES
        .iter()
        .any(|m| has(m))
    {
        w.env_files
            .extend(crate::protect::make_include::included_files(dir));
    }
    let mut subdirs = Vec::new();
    for e in entries {
        let name = e.file_name();
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if note(w, &e, &ft, &path, inodes) {
            continue;
        }
        if crate::protect::dotenv::is_env_file(&name) && !w.env_files.contains(&path) {
            w.env_files.push(path.clone());
        }
        let customize = crate::protect::py_startup::customize_module(&name);
        if customize || !is_root || upward_at_root(&name) {
            if upward_entry(&name).is_some() {
                w.upward.push(path.clone());
            } else if customize
                || (crate::protect::persistence::any_depth_name(&name)
                    && !crate::protect::persistence_lint::exempt_below(&name, dir.iter()))
            {
                w.settings.push(path.clone());
            }
        }
        if name == ".git" {
            if !is_root {
                w.repos.push(path.clone());
            }
            if ft.is_dir() {
                subdirs.push((path, Sub::Git));
            }
        } else if !ft.is_dir()
            && crate::protect::stdlib_shadow::loose_candidate(dir, &name, ft.is_symlink())
            && dir.file_name().is_none_or(|d| d != "__pycache__")
        {
            w.pyc_files.push(path.clone());
        } else if ft.is_dir() {
            if SKIPPED.iter().any(|s| name == *s) {
                if name == "__pycache__" {
                    w.pycache.push(path.clone());
                }
                if is_python_env(&path) {
                    w.venvs.push(path.clone());
                }
                subdirs.push((path, Sub::Late));
            } else {
                subdirs.push((path, Sub::Plain));
            }
        }
    }
    Some(subdirs)
}
