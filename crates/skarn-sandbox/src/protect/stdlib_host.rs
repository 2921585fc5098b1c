//! Modules the host's Pythons import by a name that
//! `sys.stdlib_module_names` leaves out (attack atk22m F3): the
//! standard library imports some by a computed or fixed hook name,
//! through `sys.path`, so from the script's directory (or the current
//! one for `-m` and `-c`) first. `sysconfig` imports
//! `_sysconfigdata_<abi>_<platform>_<multiarch>` (at `python3 -m venv`
//! on python.org, pyenv and uv builds), setuptools'
//! distutils `_distutils_system_mod`, `site` the `sitecustomize` and
//! `usercustomize` modules. Besides these by rule, the names are read
//! from what the host's Pythons' own library directories hold (every
//! top-level module and package of `lib/pythonX.Y` and its
//! `lib-dynload`): a Debian build's own additions are covered as they are
//! installed, not by a hand list.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Prefixes of module names the standard library imports by a computed
/// name (`_sysconfigdata__linux_x86_64-linux-gnu`,
/// `_sysconfigdata_m_linux_x86_64-linux-gnu`, `_sysconfigdata__darwin_darwin`).
const PREFIXES: &[&[u8]] = &[b"_sysconfigdata"];

/// Modules imported by a fixed hook name: `site`'s, distutils' (stdlib
/// and setuptools' vendored one), setuptools' `.pth` hook, virtualenv's,
/// Debian's crash hook.
const HOOKS: &[&[u8]] = &[
    b"sitecustomize",
    b"usercustomize",
    b"_distutils_system_mod",
    b"_distutils_hack",
    b"_virtualenv",
    b"apport_python_hook",
];

/// Names a library directory holds that a project's own modules may take
/// and no start-up or standard-library import asks for by name.
const NOT_MODULES: &[&str] = &[
    "test",
    "tests",
    "site-packages",
    "dist-packages",
    "lib-dynload",
    "__pycache__",
];

/// Library directories read, and entries read in each.
const MAX_DIRS: usize = 64;
const MAX_ENTRIES: usize = 5_000;

/// Whether Python imports the module `module` (a top-level name) by that
/// name from its path's first directory, besides
/// the built-in list of `sys.stdlib_module_names`.
pub(crate) fn imported(module: &[u8]) -> bool {
    PREFIXES.iter().any(|p| module.starts_with(p))
        || HOOKS.contains(&module)
        || host_names().contains(module)
}

/// The top-level module names of the host's Pythons' libraries (read
/// once).
fn host_names() -> &'static HashSet<Vec<u8>> {
    static NAMES: OnceLock<HashSet<Vec<u8>>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut out = HashSet::new();
        for d in library_dirs() {
            add_modules(&d, &mut out);
            add_modules(&d.join("lib-dynload"), &mut out);
        }
        out
    })
}

/// The entries of `dir` (at most [`MAX_ENTRIES`]).
fn entries(dir: &Path) -> Vec<std::fs::DirEntry> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().take(MAX_ENTRIES).collect())
        .unwrap_or_default()
}

/// Add the top-level module names of the library directory `dir`.
fn add_modules(dir: &Path, out: &mut HashSet<Vec<u8>>) {
    for e in entries(dir) {
        let name = e.file_name();
        if NOT_MODULES.iter().any(|n| name == *n) {
            continue;
        }
        let n = name.as_encoded_bytes();
        if let Some(m) = module_of(n) {
            out.insert(m.to_vec());
        } else if e.file_type().is_ok_and(|t| t.is_dir())
            && entries(&e.path())
                .iter()
                .any(|i| module_of(i.file_name().as_encoded_bytes()) == Some(b"__init__"))
        {
            out.insert(n.to_vec());
        }
    }
}

/// The module a library file name loads as (`json.py`, `_ssl.cpython-311-x86_64-linux-gnu.so`):
/// the name to its first dot, for a source, bytecode or extension suffix.
fn module_of(n: &[u8]) -> Option<&[u8]> {
    let dot = n.iter().position(|b| *b == b'.').filter(|d| *d > 0)?;
    let suffix = n[dot..].to_ascii_lowercase();
    let known = matches!(suffix.as_slice(), b".py" | b".pyc" | b".pyw")
        || suffix.ends_with(b".so")
        || suffix.ends_with(b".pyd");
    known.then(|| &n[..dot])
}

/// The standard-library directories of the Pythons on the caller's
/// `PATH` (links resolved to their installation; a pyenv-style shim
/// directory gives each installed version), and of the system's usual
/// prefixes.
fn library_dirs() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = ["/usr", "/usr/local"].iter().map(PathBuf::from).collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for bin in std::env::split_paths(&path).filter(|d| d.is_absolute()) {
        for e in entries(&bin) {
            let n = e.file_name();
            let n = n.as_encoded_bytes();
            if !(n.starts_with(b"python") || n.starts_with(b"pypy")) {
                continue;
            }
            let Ok(real) = std::fs::canonicalize(e.path()) else {
                continue;
            };
            // `<prefix>/bin/python3`, or `<root>/shims/python3`.
            let Some(prefix) = real.parent().and_then(Path::parent) else {
                continue;
            };
            if real.parent().is_some_and(|b| b.ends_with("shims")) {
                for v in entries(&prefix.join("versions")) {
                    prefixes.push(v.path());
                }
            }
            prefixes.push(prefix.to_path_buf());
        }
    }
    prefixes.sort();
    prefixes.dedup();
    let mut out = Vec::new();
    for p in prefixes {
        for lib in ["lib", "lib64"] {
            for e in entries(&p.join(lib)) {
                let n = e.file_name();
                let n = n.as_encoded_bytes();
                let versioned = |s: &[u8]| {
                    n.strip_prefix(s)
                        .is_some_and(|r| r.first().is_some_and(u8::is_ascii_digit))
                };
                if (versioned(b"python") || versioned(b"pypy")) && out.len() < MAX_DIRS {
                    out.push(e.path());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_and_hook_names_are_imported() {
        for n in [
            "_sysconfigdata__linux_x86_64-linux-gnu",
            "_sysconfigdata__x86_64-linux-gnu",
            "_sysconfigdata_m_linux_x86_64-linux-gnu",
            "sitecustomize",
            "usercustomize",
            "_distutils_system_mod",
        ] {
            assert!(imported(n.as_bytes()), "{n}");
        }
        for n in ["app", "main", "test", "tests", "mypkg"] {
            assert!(!imported(n.as_bytes()), "{n}");
        }
    }
}
