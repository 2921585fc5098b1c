//! The workspace's store vetted before each run (attack atk22k F19). The
//! python preset keeps the user site (`~/.local/lib/python3.X/
//! site-packages`) in the store, for `pip install --user`; Python's
//! start-up reads it at every start: its `.pth` lines that start with
//! `import` run, so do `sitecustomize` / `usercustomize` and the modules
//! those lines name. What one run left there would run at the start of
//! every later run of the workspace, one given a secret included.
//!
//! So before each run, in every store layer, each site-packages directory
//! (`<layer>/site-packages`, `<layer>/<dir>/site-packages`, and their
//! `dist-packages` forms) loses what would run at start: a `.pth` that
//! runs code, is no regular file, or names a place inside a store layer
//! (whose customize modules would then be imported); a start-up module
//! in any form (`sitecustomize`, `usercustomize`, `_distutils_hack`,
//! `readline`, `apport_python_hook`); a module an import line of the
//! host's own `.pth` files there names; their compiled files in
//! `__pycache__`. A link in place of a `pythonX.Y` or site-packages
//! directory goes too. Only the store's upper layer changes: the host's
//! files below show again. What cannot be removed keeps the store from
//! this run (see [`crate::linux::helper`]'s store).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Entries of a layer's top directories looked through for site-packages
/// directories, at most, per layer (a cache of many entries is no user
/// site; what lies past the bound is no site-packages of Python's).
const MAX_LISTED: usize = 4096;

/// Directory names of installed packages Python's start-up reads.
const SITE_DIRS: &[&str] = &["site-packages", "dist-packages"];

/// One store layer: the path its cache has in the sandbox, and its
/// upper directory in the store.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The cache's path inside the sandbox (and the host's, below).
    pub path: PathBuf,
    /// Its upper directory in the store.
    pub upper: PathBuf,
}

/// Vet `layers` (all of one store): `Ok` with one line per entry removed,
/// `Err` naming what could not be removed.
pub fn vet(layers: &[Layer]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let caches: Vec<&Path> = layers.iter().map(|l| l.path.as_path()).collect();
    for l in layers {
        for (site, rel) in sites(&l.upper, &mut out)? {
            let inside = l.path.join(&rel);
            vet_site(&site, &inside, &caches, &mut out)?;
        }
    }
    Ok(out)
}

/// A name Python's user site path goes through (`python3.11`, `pypy3.10`).
fn versioned_dir(n: &OsStr) -> bool {
    let b = n.as_encoded_bytes();
    b.starts_with(b"python") || b.starts_with(b"pypy")
}

fn is_site_dir(n: &OsStr) -> bool {
    SITE_DIRS.iter().any(|d| n == *d)
}

/// The site-packages directories of the layer `upper` (real directories),
/// with their paths relative to it; links in place of one, or of a
/// `pythonX.Y` directory, are removed on the way.
fn sites(upper: &Path, out: &mut Vec<String>) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let mut found = Vec::new();
    let mut listed = 0usize;
    let Ok(top) = std::fs::read_dir(upper) else {
        return Ok(found);
    };
    for e in top.flatten() {
        let n = e.file_name();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_symlink() {
            if versioned_dir(&n) || is_site_dir(&n) {
                remove(
                    &e.path(),
                    "a link in place of a Python library directory",
                    out,
                )?;
            }
            continue;
        }
        if !ft.is_dir() {
            continue;
        }
        if is_site_dir(&n) {
            found.push((e.path(), PathBuf::from(&n)));
            continue;
        }
        let Ok(inner) = std::fs::read_dir(e.path()) else {
            continue;
        };
        for i in inner.flatten() {
            listed += 1;
            if listed > MAX_LISTED {
                return Ok(found);
            }
            let m = i.file_name();
            if !is_site_dir(&m) {
                continue;
            }
            match i.file_type() {
                Ok(t) if t.is_symlink() => remove(
                    &i.path(),
                    "a link in place of a site-packages directory",
                    out,
                )?,
                Ok(t) if t.is_dir() => found.push((i.path(), Path::new(&n).join(&m))),
                _ => {}
            }
        }
    }
    Ok(found)
}

/// Whether `st` is an overlayfs whiteout (a character device 0:0): it
/// only hides the host's entry, and stays.
fn whiteout(md: &std::fs::Metadata) -> bool {
    md.file_type().is_char_device() && md.rdev() == 0
}

/// Vet the site-packages directory `site` of a layer (`inside`: its path
/// in the sandbox, and the host's below it).
fn vet_site(
    site: &Path,
    inside: &Path,
    caches: &[&Path],
    out: &mut Vec<String>,
) -> Result<(), String> {
    // The host's `.pth` files below (unchanged: the host's) name modules
    // that run at every start; a module by such a name in the layer runs.
    let host_named = crate::protect::pth_imports::of_dir(inside);
    let Ok(rd) = std::fs::read_dir(site) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let p = e.path();
        let n = e.file_name();
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if whiteout(&md) {
            continue;
        }
        let why = if n.as_encoded_bytes().ends_with(b".pth") {
            pth_reason(&n, &p, inside, caches)
        } else if crate::protect::venv_guard::start_up_name(&n) {
            Some("a module Python imports at every start")
        } else if host_named.has_entry(n.as_encoded_bytes()) {
            Some("a module an import line of a .pth file there names")
        } else {
            None
        };
        if let Some(why) = why {
            remove(&p, why, out)?;
        } else if n == "__pycache__" && md.is_dir() {
            vet_cache(&p, &host_named, out)?;
        }
    }
    Ok(())
}

/// Why the `.pth` file `name` (at `p`) goes: it runs code (or cannot be
/// read as a small regular file), or a line names a place inside a store
/// layer; None to keep it (plain paths elsewhere: an editable install's
/// source directory).
fn pth_reason(name: &OsStr, p: &Path, inside: &Path, caches: &[&Path]) -> Option<&'static str> {
    if crate::protect::venv_guard::start_up_runs_code(name, p) {
        return Some("a .pth file Python runs at every start");
    }
    let bytes = crate::protect::small_file::read_bytes(p).ok().flatten()?;
    for text in crate::protect::pth_imports::decodings(&bytes) {
        for line in crate::protect::pth_imports::python_lines(&text) {
            let line = line.trim_end();
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let at = lexical(&inside.join(line));
            if caches.iter().any(|c| at.starts_with(c)) {
                return Some(
                    "a .pth file naming a directory of the store (its modules are not vetted)",
                );
            }
        }
    }
    None
}

/// `p` with `.` and `..` resolved by name, as Python's `os.path.abspath`.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// The compiled files of a site-packages `__pycache__` for start-up
/// modules (an unchecked one runs without looking at the source).
fn vet_cache(
    dir: &Path,
    named: &crate::protect::pth_imports::Imported,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let n = e.file_name();
        let module = n
            .as_encoded_bytes()
            .split(|b| *b == b'.')
            .next()
            .unwrap_or(b"");
        let start = crate::protect::venv_guard::start_up_name(OsStr::from_bytes(module))
            || named.has_entry(module);
        if start {
            remove(&e.path(), "a compiled start-up module", out)?;
        }
    }
    Ok(())
}

/// Remove `p` (a tree too) from the store's layer; its directory is made
/// writable for it first (the run may have taken the owner's write bit).
fn remove(p: &Path, why: &str, out: &mut Vec<String>) -> Result<(), String> {
    if let Some(parent) = p.parent() {
        writable(parent);
    }
    let md = std::fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let r = if md.is_dir() {
        open_tree(p);
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    };
    r.map_err(|e| format!("{}: {e}", p.display()))?;
    out.push(format!("{} ({why})", p.display()));
    Ok(())
}

/// Give the owner write and search on `d` when it lacks them.
fn writable(d: &Path) {
    if let Ok(m) = std::fs::symlink_metadata(d)
        && m.is_dir()
        && m.permissions().mode() & 0o300 != 0o300
    {
        let mode = m.permissions().mode() | 0o700;
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode));
    }
}

/// [`writable`] on every directory of the tree `d` (no link followed).
fn open_tree(d: &Path) {
    let mut stack = vec![d.to_path_buf()];
    let mut seen = 0usize;
    while let Some(x) = stack.pop() {
        writable(&x);
        let Ok(rd) = std::fs::read_dir(&x) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 100_000 {
                return;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
}

#[cfg(test)]
#[path = "store_vet_tests.rs"]
mod tests;
