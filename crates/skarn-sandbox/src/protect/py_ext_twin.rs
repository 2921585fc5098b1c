//! A compiled twin of a project's Python module (attack atk22o F9).
//! Python's path finder tries a directory's extension modules before its
//! sources: `util.so`, `util.abi3.so` or `util.cpython-311-x86_64-linux-gnu.so`
//! beside `util.py` (and `__init__.<suffix>.so` beside a package's
//! `__init__.py`) is what every later `import util` loads, and `*.so` is in
//! the usual Python `.gitignore`: git shows nothing. So a new or changed
//! extension module (`*.so`, `*.pyd`) named like a source module of its
//! directory (`NAME.py` or a package `NAME/__init__.py`) is refused by the
//! copy-on-write layer and set aside by the direct mode, unless a source
//! a build compiles it from lies beside it (`NAME.c`, `.pyx`, `.cpp`,
//! `.cc`, `.cxx`: what `setup.py build_ext --inplace` and `pip install -e .`
//! build in place; Cython also compiles a `NAME.py` to `NAME.c`). That
//! source, when the run made it, is a new file `git status` shows unless
//! the project ignores it (ADR 0331).

use std::ffi::OsStr;
use std::path::Path;

/// Sources a build compiles an extension module from.
const BUILD_SOURCES: &[&str] = &["c", "pyx", "cpp", "cc", "cxx"];

/// The module name of an extension module's file name (`util` of
/// `util.cpython-311-x86_64-linux-gnu.so`), if it is one.
fn module_of(name: &OsStr) -> Option<&str> {
    let s = name.to_str()?;
    let lower = s.to_ascii_lowercase();
    if !(lower.ends_with(".so") || lower.ends_with(".pyd")) {
        return None;
    }
    let m = s.split('.').next()?;
    (!m.is_empty()).then_some(m)
}

/// Why an extension module named `name` in the directories `dirs` (the
/// host's and, for a layer, its own; the first one is where it lands)
/// shadows a source module there, if it does and no build source of it
/// lies beside it.
pub fn shadows(dirs: &[&Path], name: &OsStr) -> Option<String> {
    let m = module_of(name)?;
    let there = |f: &str| {
        dirs.iter()
            .any(|d| std::fs::symlink_metadata(d.join(f)).is_ok())
    };
    let source = there(&format!("{m}.py")) || there(&format!("{m}/__init__.py"));
    if !source || BUILD_SOURCES.iter().any(|x| there(&format!("{m}.{x}"))) {
        return None;
    }
    Some(format!(
        "a compiled module {} beside the source module {m}.py (python imports it instead of \
         the source, and git ignores it); one beside its own build source ({m}.c, {m}.pyx, \
         ...) is kept, as `build_ext --inplace` makes it",
        name.to_string_lossy()
    ))
}

/// Under the copy-on-write layer: a change at `rel` (workspace `ws`, the
/// layer's top `upper_top`) that is such a twin.
pub fn check_layer_change(ws: &Path, rel: &Path, upper_top: Option<&Path>) -> Result<(), String> {
    let (Some(name), Some(parent)) = (rel.file_name(), rel.parent()) else {
        return Ok(());
    };
    let host = ws.join(parent);
    let layer = upper_top.map(|u| u.join(parent));
    let mut dirs = vec![host.as_path()];
    dirs.extend(layer.as_deref());
    match shadows(&dirs, name) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_is_refused_unless_built_from_a_source_beside() {
        let t = skarn_test_support::TempDir::new("py-ext-twin");
        let ws = t.path().join("ws");
        let up = t.path().join("up");
        std::fs::create_dir_all(ws.join("pkg/sub")).unwrap();
        std::fs::create_dir_all(up.join("pkg")).unwrap();
        std::fs::write(ws.join("pkg/util.py"), "").unwrap();
        std::fs::write(ws.join("pkg/__init__.py"), "").unwrap();
        std::fs::write(ws.join("pkg/sub/__init__.py"), "").unwrap();
        std::fs::write(ws.join("pkg/fast.py"), "").unwrap();
        std::fs::write(up.join("pkg/fast.c"), "").unwrap();
        let check = |p: &str| check_layer_change(&ws, Path::new(p), Some(&up));
        for p in [
            "pkg/util.so",
            "pkg/util.abi3.so",
            "pkg/util.cpython-311-x86_64-linux-gnu.so",
            "pkg/__init__.cpython-311-x86_64-linux-gnu.so",
            "pkg/sub.so",
            "pkg/UTIL.PYD",
        ] {
            let expect = p != "pkg/UTIL.PYD";
            assert_eq!(check(p).is_err(), expect, "{p}");
        }
        for p in [
            "pkg/fast.cpython-311-x86_64-linux-gnu.so",
            "pkg/_speedups.so",
            "pkg/libz.so.1",
        ] {
            assert!(check(p).is_ok(), "{p}");
        }
    }
}
