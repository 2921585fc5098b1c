//! Directories host tools search by name, never made links by a run
//! (attack atk22o F1, F5). Cargo puts a profile directory, its `deps` and
//! each build script's `out` on the library path of `rustc`, the build
//! scripts, tests and programs it runs; npm, pnpm, yarn and npx put every
//! `node_modules/.bin` first on `PATH` for a package script; node loads
//! packages from `node_modules`; Python loads from `__pycache__` and
//! `site-packages`. The checks after a run judge what lands in those
//! directories by the names it is written at: a run that replaces one of
//! them by a link to a directory of its own (`target/debug/deps ->
//! ../../.x`) has the host tool read what the link leads to, whose path
//! carries none of those names. The tools make real directories there, so
//! a link in such a place is never their output: the copy-on-write layer
//! refuses it (the host's directory stays), and the direct mode removes
//! the links it finds in a profile directory
//! ([`crate::protect::cargo_libs`]).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Names of directories host tools search wherever they lie.
const SEARCHED: &[&str] = &[
    "node_modules",
    ".bin",
    "__pycache__",
    "site-packages",
    "dist-packages",
];

/// Why the link the layer makes at workspace names `n` (`upper`: the
/// layer's entry, `ws`: the workspace, `upper_top`: the layer's top) is
/// refused: it stands where a host tool searches a directory by name.
pub fn check_layer_link(
    ws: &Path,
    n: &[&OsStr],
    upper: &Path,
    upper_top: Option<&Path>,
) -> Result<(), String> {
    if !std::fs::symlink_metadata(upper).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(());
    }
    let Some(last) = n.last() else {
        return Ok(());
    };
    if SEARCHED.iter().any(|s| *last == *s) {
        return Err(refusal(&last.to_string_lossy()));
    }
    // Cargo's target directory beside a manifest, and every directory
    // holding `.fingerprint` (a target directory elsewhere), with what
    // lies in them.
    let has = |rel: &Path, name: &str| {
        std::fs::symlink_metadata(ws.join(rel).join(name)).is_ok()
            || upper_top.is_some_and(|u| std::fs::symlink_metadata(u.join(rel).join(name)).is_ok())
    };
    let cargo_at = (0..n.len()).find(|&i| {
        let here: PathBuf = n[..i].iter().collect();
        let at: PathBuf = n[..=i].iter().collect();
        (n[i] == "target" && has(&here, "Cargo.toml")) || has(&at, ".fingerprint")
    });
    let Some(i) = cargo_at else {
        return Ok(());
    };
    let target = std::fs::read_link(upper).unwrap_or_default();
    if within_build_out(&n[i..], &target) {
        return Ok(());
    }
    Err(refusal("cargo's build directory"))
}

fn refusal(what: &str) -> String {
    format!(
        "a link in {what} (a directory host tools search by name: cargo's build directories \
         go on the library path of rustc and what cargo runs, node_modules/.bin first on PATH \
         for package scripts, __pycache__ and site-packages on python's path): the host tool \
         would read what it leads to, which the checks by name never see; the tools make real \
         directories there, so the host's entry is kept"
    )
}

/// Whether a link at `n` (names from a target or profile directory down)
/// lies inside a build script's `build/<unit>/out` below its top and
/// leads, by its relative target `t`, nowhere outside that `out`: a
/// build script's own tree (a library's `libz.so -> libz.so.1`).
pub(crate) fn within_build_out(n: &[&OsStr], t: &Path) -> bool {
    let Some(j) = (2..n.len().saturating_sub(1)).rfind(|&j| n[j] == "out" && n[j - 2] == "build")
    else {
        return false;
    };
    // The link's own directory, as a depth below `out`.
    let Some(mut depth) = (n.len() - 1).checked_sub(j + 1) else {
        return false;
    };
    for c in t.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &str) -> Vec<&OsStr> {
        Path::new(p).iter().collect()
    }

    #[test]
    fn links_in_searched_places_are_refused() {
        let t = skarn_test_support::TempDir::new("searched-dirs");
        let ws = t.path().join("ws");
        let up = t.path().join("up");
        std::fs::create_dir_all(ws.join("rs/target/debug/.fingerprint")).unwrap();
        std::fs::write(ws.join("rs/Cargo.toml"), "").unwrap();
        std::fs::create_dir_all(ws.join("out/debug/.fingerprint")).unwrap();
        std::fs::create_dir_all(&up).unwrap();
        let link = up.join("l");
        std::os::unix::fs::symlink("../../.x", &link).unwrap();
        let file = up.join("f");
        std::fs::write(&file, "x").unwrap();
        let check = |p: &str, e: &Path| check_layer_link(&ws, &names(p), e, Some(&up));
        for p in [
            "node_modules",
            "packages/a/node_modules",
            "node_modules/.bin",
            "src/__pycache__",
            ".venv/lib/python3.11/site-packages",
            "rs/target",
            "rs/target/debug/deps",
            "rs/target/debug/build/x-1/out",
            "rs/target/debug/build/x-1/out/lib",
            "out/debug/deps",
        ] {
            assert!(check(p, &link).is_err(), "{p}");
            assert!(check(p, &file).is_ok(), "{p}: a file");
        }
        for p in ["src/lib", "target/debug/deps", "docs/bin"] {
            assert!(check(p, &link).is_ok(), "{p}");
        }
        let inner = up.join("i");
        std::os::unix::fs::symlink("libz.so.1", &inner).unwrap();
        assert!(check("rs/target/debug/build/x-1/out/lib/libz.so", &inner).is_ok());
        assert!(check("rs/target/debug/deps/libz.so", &inner).is_err());
    }
}
