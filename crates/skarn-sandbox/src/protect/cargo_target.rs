//! Cargo's build directories (attack atk22l F8). Host cargo (and
//! rust-analyzer's `cargo check` at folder open) trusts what a profile
//! directory of a target directory holds (`target/debug`,
//! `target/<triple>/release`, wherever `CARGO_TARGET_DIR` or
//! `build.target-dir` put it) by its fingerprints, not by its content: a
//! compiled build script, a test or binary in `deps/`, a proc-macro
//! library, an rlib linked into the next binary, rustc's incremental
//! objects. A run that wrote there (or removed a fingerprint so that cargo
//! runs a planted build script again without compiling it) would have the
//! host run its code, and git shows nothing.
//!
//! A profile directory is known by what it is, not by where the
//! configuration says it is: a directory holding `.fingerprint`. When the
//! run made, changed or removed anything in one, its `.fingerprint` and
//! `incremental` directories are removed after the run (both modes): cargo
//! then compiles every unit of that profile again from the sources, and
//! runs each build script again from what it compiled, before it runs or
//! links anything there. The shared objects the run left in one are
//! removed too ([`crate::protect::cargo_libs`]): cargo puts the directory
//! on the library path of what it runs.

use std::path::{Path, PathBuf};

/// What marks a profile directory.
const FINGERPRINT: &str = ".fingerprint";

/// What [`invalidate`] removes from a profile directory.
const UNTRUSTED: &[&str] = &[FINGERPRINT, "incremental"];

/// Directories walked at most (before a run's check gives up and says so).
const MAX_DIRS: usize = 200_000;

/// Trees never holding a profile directory cargo uses.
fn skipped(name: &std::ffi::OsStr) -> bool {
    name == ".git" || name == "node_modules"
}

/// Whether `dir` (host side) is a profile directory.
pub fn is_profile(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(FINGERPRINT)).is_ok_and(|m| m.is_dir())
}

/// Remove what cargo trusts in the profile directory `dir`; one line for
/// the user (`None` when there was nothing to remove).
pub fn invalidate(dir: &Path) -> Option<String> {
    let mut gone = Vec::new();
    let mut failed = Vec::new();
    for n in UNTRUSTED {
        let p = dir.join(n);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let r = if m.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        match r {
            Ok(()) => gone.push(*n),
            Err(e) => failed.push(format!("{}: {e}", p.display())),
        }
    }
    if gone.is_empty() && failed.is_empty() {
        return None;
    }
    let mut line = format!(
        "the run wrote in cargo's build directory {}: its {} removed, so host cargo \
         compiles and runs nothing from there it did not build again from the sources",
        dir.display(),
        gone.join(" and ")
    );
    if !failed.is_empty() {
        line.push_str(&format!(
            "; could not remove {} (remove them before running cargo there)",
            failed.join(", ")
        ));
    }
    Some(line)
}

/// The profile directories (host paths below `ws`) in which the layer at
/// `upper` changes anything: a directory of the layer whose host
/// counterpart, or itself, holds `.fingerprint` (a whiteout there counts).
/// Taken before the layer is applied; [`invalidate`] each after.
pub fn in_layer(upper: &Path, ws: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // The workspace itself, or a directory it lies in, a profile
    // directory (atk22m F7: the workspace `target/debug` or
    // `target/debug/build`): any change of the layer counts.
    if let Some(p) = enclosing(ws)
        && std::fs::read_dir(upper).is_ok_and(|mut rd| rd.next().is_some())
    {
        out.push(p);
    }
    let mut todo = vec![PathBuf::new()];
    let mut seen = 0usize;
    while let Some(rel) = todo.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            // Past the bound: every profile directory of the workspace is
            // invalidated (never a silent cap).
            out.extend(in_tree(ws));
            break;
        }
        let up = upper.join(&rel);
        let host = ws.join(&rel);
        if !rel.as_os_str().is_empty()
            && (is_profile(&host) || std::fs::symlink_metadata(up.join(FINGERPRINT)).is_ok())
        {
            out.push(host);
            continue;
        }
        // A profile directory of a project never built (no `.fingerprint`
        // yet: atk22n F5), or a `target/<triple>`: counted, and walked on.
        let manifest = |m: &Path| {
            [ws.join(m), upper.join(m)]
                .iter()
                .any(|d| std::fs::symlink_metadata(d.join("Cargo.toml")).is_ok())
        };
        if crate::protect::cargo_libs::shaped_like_profile(&rel, &manifest) {
            out.push(host);
        }
        let Ok(rd) = std::fs::read_dir(&up) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) && !skipped(&e.file_name()) {
                todo.push(rel.join(e.file_name()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The profile directory `dir` is or lies in (the nearest).
pub fn enclosing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|a| a.parent().is_some())
        .find(|a| is_profile(a))
        .map(Path::to_path_buf)
}

/// Every profile directory below `root` (bounded).
fn in_tree(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            break;
        }
        if is_profile(&d) {
            out.push(d);
            continue;
        }
        if shaped(&d) {
            out.push(d.clone());
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) && !skipped(&e.file_name()) {
                todo.push(e.path());
            }
        }
    }
    out
}

/// Whether the host directory `d` lies directly in a `target` (or a
/// `target/<triple>`) beside a `Cargo.toml`: a profile directory before
/// cargo made its `.fingerprint`.
fn shaped(d: &Path) -> bool {
    d.ancestors().skip(1).take(2).any(|t| {
        t.file_name().is_some_and(|n| n == "target")
            && t.parent()
                .is_some_and(|p| std::fs::symlink_metadata(p.join("Cargo.toml")).is_ok())
    })
}

/// Whether anything in `dir` (itself included) was made, changed or
/// removed at or after `since` (past [`MAX_DIRS`] directories, yes).
fn changed_within(dir: &Path, since: std::time::SystemTime) -> bool {
    use crate::protect::grant_walk::changed_since;
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        seen += 1;
        if seen > MAX_DIRS || changed_since(&d, since) {
            return true;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                todo.push(e.path());
            } else if changed_since(&e.path(), since) {
                return true;
            }
        }
    }
    false
}

/// After a run in place: invalidate every profile directory below `roots`
/// the run wrote in at or after `since`; one line each.
pub fn after_run(roots: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    // A root inside a profile directory (atk22m F7): that directory.
    let mut dirs: Vec<PathBuf> = roots
        .iter()
        .filter_map(|r| enclosing(r).filter(|p| p != r).map(|p| (p, r)))
        .filter(|(_, r)| changed_within(r, since))
        .map(|(p, _)| p)
        .collect();
    dirs.extend(
        roots
            .iter()
            .flat_map(|r| in_tree(r))
            .filter(|p| changed_within(p, since)),
    );
    dirs.sort();
    dirs.dedup();
    // Shared objects the run left there (atk22n F5), then what cargo
    // trusts.
    let libs: Vec<_> = dirs
        .iter()
        .flat_map(|p| crate::protect::cargo_libs::changed(p, since))
        .collect();
    dirs.iter()
        .filter_map(|p| invalidate(p))
        .chain(crate::protect::cargo_libs::remove(&libs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_the_layer_touched_loses_its_fingerprints() {
        let tmp = skarn_test_support::TempDir::new("cargo-target");
        let ws = tmp.path().join("ws");
        let upper = tmp.path().join("upper");
        std::fs::create_dir_all(ws.join("target/debug/.fingerprint/p-1")).unwrap();
        std::fs::create_dir_all(ws.join("target/debug/incremental")).unwrap();
        std::fs::create_dir_all(ws.join("other/debug")).unwrap();
        std::fs::create_dir_all(upper.join("target/debug/build/p-2")).unwrap();
        std::fs::create_dir_all(upper.join("other/debug")).unwrap();
        std::fs::create_dir_all(upper.join("new/t/release/.fingerprint")).unwrap();
        let found = in_layer(&upper, &ws);
        assert_eq!(
            found,
            vec![ws.join("new/t/release"), ws.join("target/debug")]
        );
        assert!(invalidate(&ws.join("target/debug")).is_some());
        assert!(!ws.join("target/debug/.fingerprint").exists());
        assert!(!ws.join("target/debug/incremental").exists());
        assert!(invalidate(&ws.join("target/debug")).is_none());
    }

    #[test]
    fn a_workspace_in_a_profile_directory_invalidates_it() {
        let tmp = skarn_test_support::TempDir::new("cargo-target-top");
        let profile = tmp.path().join("target/debug");
        let ws = profile.join("build");
        let upper = tmp.path().join("upper");
        std::fs::create_dir_all(profile.join(".fingerprint/p-1")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&upper).unwrap();
        assert!(
            in_layer(&upper, &ws).is_empty(),
            "an empty layer changes nothing"
        );
        std::fs::write(upper.join("x"), "x").unwrap();
        assert_eq!(in_layer(&upper, &ws), vec![profile.clone()]);
        assert_eq!(in_layer(&upper, &profile), vec![profile.clone()]);
    }
}
