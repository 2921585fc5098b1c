//! Modules named like the standard library's that a run leaves (attack
//! atk22k F3, F14). Python puts the directory of the script it runs (or
//! the current one, for `-m`, `-c` and the prompt) first on its path, so
//! `json.py`, a package `json/__init__.py`, or a compiled `json.pyc`,
//! `json.so`, `json.abi3.so`, `json.cpython-311-x86_64-linux-gnu.so` there
//! is imported instead of the standard library's `json`: the host's next
//! `python3 tool.py` runs it.
//!
//! Whether git shows such a file decides nothing (a `.gitignore` the run
//! writes may ignore itself and the plant: F14): what lies on disk in the
//! run's changes is judged. A compiled one (no source to review) is never
//! kept; a source one is kept only inside a directory that was a regular
//! package before the run (it holds an `__init__` module: its modules are
//! imported as `pkg.types`, and no script is run from there), as in
//! `django/http/__init__.py`. Installed packages (`site-packages`,
//! `dist-packages`, come after the standard library) and an installation's
//! own library (`lib/python3.X/`) are not judged here (the venv guard
//! judges them).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::protect::stdlib_names::is_stdlib;

/// How a file loads as a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A source (`NAME.py`, `NAME.pyw`), or a link by the module's name.
    Source,
    /// Bytecode (`NAME.pyc`) or an extension module (`NAME.so`,
    /// `NAME.TAG.so`, `NAME.pyd`, `NAME.TAG.pyd`).
    Compiled,
}

/// The module name and form of the file name `name` when Python's path
/// finder loads it as a module: the name ends at the first dot, the rest
/// is a source, bytecode or extension-module suffix. Every suffix of
/// `importlib.machinery.EXTENSION_SUFFIXES` starts with that dot and ends
/// in `.so` (`.pyd` on Windows): `.cpython-311-x86_64-linux-gnu.so`,
/// `.abi3.so`, `.so`, PyPy's `.pypy310-pp73-x86_64-linux-gnu.so`, macOS's
/// `.cpython-312-darwin.so`, debug and free-threaded tags: all covered.
pub fn module_file(name: &OsStr) -> Option<(&[u8], Form)> {
    let n = name.as_encoded_bytes();
    let dot = n.iter().position(|b| *b == b'.')?;
    let (module, suffix) = n.split_at(dot);
    if module.is_empty() {
        return None;
    }
    let lower = suffix.to_ascii_lowercase();
    let form = match lower.as_slice() {
        b".py" | b".pyw" => Form::Source,
        b".pyc" => Form::Compiled,
        s if s.ends_with(b".so") || s.ends_with(b".pyd") => Form::Compiled,
        _ => return None,
    };
    Some((module, form))
}

/// A path judged to be a module named like the standard library's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    /// The module it stands for (`json`).
    pub module: String,
    /// How it loads.
    pub form: Form,
    /// How many leading names of the path make the directory it is found
    /// in (`pkg/json.py` and `pkg/json/__init__.py`: 1).
    pub dir: usize,
}

/// Directories of installed packages (after the standard library on the
/// path; the venv guard judges their start-up files).
const INSTALLED: &[&str] = &["site-packages", "dist-packages"];

/// Whether the names `n` lie in an installation's own library
/// (`lib/python3.11/...`, `lib64/pypy3.10/...`): a Python's standard
/// library is its own.
fn installation_library(n: &[&OsStr]) -> bool {
    n.windows(2).any(|w| {
        let lib = w[0].as_encoded_bytes();
        let v = w[1].as_encoded_bytes();
        let versioned = |p: &[u8]| {
            v.strip_prefix(p)
                .is_some_and(|r| r.first().is_some_and(u8::is_ascii_digit))
        };
        matches!(lib, b"lib" | b"lib64" | b"lib32" | b"Lib")
            && (versioned(b"python") || versioned(b"pypy"))
    })
}

/// What the path of names `n` (below a writable grant) is as a module
/// named like the standard library's: a module file by such a name, the
/// `__init__` of a package by such a name, or a link by such a name
/// (`link`: the entry is a link, which may lead to a package).
pub fn of_path(n: &[&OsStr], link: bool) -> Option<Shadow> {
    if n.iter().any(|c| INSTALLED.iter().any(|i| c == i)) || installation_library(n) {
        return None;
    }
    let (last, parent) = n.split_last()?;
    if let Some((module, form)) = module_file(last) {
        if module == b"__init__" {
            let (pkg, above) = parent.split_last()?;
            return is_stdlib(pkg.as_encoded_bytes()).then(|| Shadow {
                module: pkg.to_string_lossy().into_owned(),
                form,
                dir: above.len(),
            });
        }
        return is_stdlib(module).then(|| Shadow {
            module: String::from_utf8_lossy(module).into_owned(),
            form,
            dir: parent.len(),
        });
    }
    (link && is_stdlib(last.as_encoded_bytes())).then(|| Shadow {
        module: last.to_string_lossy().into_owned(),
        form: Form::Source,
        dir: parent.len(),
    })
}

/// Whether the file name is an `__init__` module in any form.
pub fn is_init(name: &OsStr) -> bool {
    module_file(name).is_some_and(|(m, _)| m == b"__init__")
}

/// The `__init__` modules of `dir` (files, links followed as Python's
/// finder does).
pub fn inits(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| is_init(&e.file_name()))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect()
}

/// Whether `dir` is a regular package (it holds an `__init__` module).
pub fn is_package(dir: &Path) -> bool {
    !inits(dir).is_empty()
}

/// Whether the walk after a run hands the entry `name` of `dir` to [`crate::protect::pyc_guard::vet`]
/// as a loose file: a `*.pyc`, or a module named like the standard
/// library's in any form, a link by such a name included (`link`).
pub fn loose_candidate(dir: &Path, name: &OsStr, link: bool) -> bool {
    // A `*.pyc`, any case (the pyc guard's own rule).
    let b = name.as_encoded_bytes();
    if b.len() >= 4 && b[b.len() - 4..].eq_ignore_ascii_case(b".pyc") {
        return true;
    }
    // A compiled twin of a project's source module (atk22o F9).
    if crate::protect::py_ext_twin::shadows(&[dir], name).is_some() {
        return true;
    }
    // (By the name first: the walk asks for every file of the grants.)
    let by_name = match module_file(name) {
        Some((m, _)) => m == b"__init__" || is_stdlib(m),
        None => link && is_stdlib(name.as_encoded_bytes()),
    };
    if !by_name {
        return false;
    }
    let p = dir.join(name);
    let n: Vec<&OsStr> = p.iter().collect();
    of_path(&n, link).is_some()
}

thread_local! {
    /// While one layer is applied ([`scoped`]): whether each directory
    /// asked about was a regular package before the layer's first change
    /// there, so that an `__init__.py` the layer moves in before a
    /// `json.py` beside it does not count.
    static BEFORE: RefCell<Option<HashMap<PathBuf, bool>>> = const { RefCell::new(None) };
}

/// Keep the answers of [`package_before`] for the length of `f` (one
/// layer's vetting and applying).
pub fn scoped<T>(f: impl FnOnce() -> T) -> T {
    BEFORE.with(|b| *b.borrow_mut() = Some(HashMap::new()));
    let out = f();
    BEFORE.with(|b| *b.borrow_mut() = None);
    out
}

/// Whether the workspace's `dir` was a regular package before this
/// layer's changes there: the first answer within [`scoped`] is kept (ask
/// before an `__init__` change is applied), else what it is now.
pub fn package_before(dir: &Path) -> bool {
    BEFORE.with(|b| match b.borrow_mut().as_mut() {
        None => is_package(dir),
        Some(m) => *m
            .entry(dir.to_path_buf())
            .or_insert_with(|| is_package(dir)),
    })
}

/// The user message for `s` found at `p`.
pub fn describe(s: &Shadow) -> String {
    let what = match s.form {
        Form::Compiled => "a compiled module",
        Form::Source => "a module",
    };
    format!(
        "{what} named like the standard library's `{}` (host python imports it instead of the \
         standard library's when it runs a script there; a source one is kept when `git status` \
         lists it by the ignore rules of before the run, or inside an earlier package)",
        s.module
    )
}

#[cfg(test)]
#[path = "stdlib_shadow_tests.rs"]
mod tests;
