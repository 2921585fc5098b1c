//! Shared objects in cargo's build directories (attack atk22n F5). Cargo
//! runs every build script, `cargo run` binary and test with the profile
//! directory and its `deps` (and the `build/*/out` directories build
//! scripts name) on `LD_LIBRARY_PATH`: a `libgcc_s.so.1` the run left in
//! `target/debug` is loaded by the host's next `cargo build`, whatever
//! cargo compiles again from the sources, since it is no output of cargo's.
//! So every `*.so` / `*.so.*` file the run made or changed anywhere in a
//! profile directory is removed after the run (they are a cache: cargo
//! makes its own again). A profile directory is one holding
//! `.fingerprint`, or (a project never built) a directory directly in a
//! `target` (or in a `target/<triple>`) beside a `Cargo.toml`.

use std::path::{Path, PathBuf};

/// Directories walked at most below one profile directory; past it the
/// whole profile directory is removed (never a silent cap).
const MAX_DIRS: usize = 100_000;

/// Whether `name` is a shared object's (`libx.so`, `libx.so.1.2`).
fn shared_object(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    n.ends_with(".so") || n.contains(".so.")
}

/// Whether `rel` (workspace names; `has_manifest` tells whether a
/// directory relative to the workspace holds `Cargo.toml`) is shaped like
/// a profile directory: `.../target/<p>` or `.../target/<triple>/<p>`
/// beside a manifest.
pub fn shaped_like_profile(rel: &Path, has_manifest: &dyn Fn(&Path) -> bool) -> bool {
    let names: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
    let Some(i) = names.iter().rposition(|n| *n == "target") else {
        return false;
    };
    let depth = names.len() - i - 1;
    (1..=2).contains(&depth) && has_manifest(&names[..i].iter().collect::<PathBuf>())
}

/// The directories cargo searches by name for `profile` (itself, `deps`,
/// `examples`, each `build/*/out`) that the host reaches through a link,
/// as the directories they resolve to (atk22o F1: the sweep judges what
/// the loader reads, not the path written at).
pub fn resolved_searched(profile: &Path) -> Vec<PathBuf> {
    let mut cands = vec![
        profile.to_path_buf(),
        profile.join("deps"),
        profile.join("examples"),
    ];
    if let Ok(rd) = std::fs::read_dir(profile.join("build")) {
        cands.extend(rd.flatten().take(MAX_DIRS).map(|e| e.path().join("out")));
    }
    cands
        .iter()
        .filter_map(|c| {
            let real = std::fs::canonicalize(c).ok()?;
            (real != *c && real.is_dir()).then_some(real)
        })
        .collect()
}

/// The shared objects the layer at `upper` makes or changes in the
/// profile directories `profiles` (host paths below `ws`) and the
/// directories of them the host reaches through links
/// ([`resolved_searched`]), as host paths; taken before the layer is
/// applied. `Err`: a profile directory whose walk was cut short.
pub fn in_layer(upper: &Path, ws: &Path, profiles: &[PathBuf]) -> Vec<Result<PathBuf, PathBuf>> {
    let mut out = Vec::new();
    let real_ws = std::fs::canonicalize(ws).unwrap_or_else(|_| ws.to_path_buf());
    let mut roots: Vec<(PathBuf, PathBuf)> = Vec::new();
    for p in profiles {
        if let Ok(rel) = p.strip_prefix(ws) {
            roots.push((p.clone(), rel.to_path_buf()));
        }
        for r in resolved_searched(p) {
            if let Ok(rel) = r.strip_prefix(&real_ws) {
                roots.push((ws.join(rel), rel.to_path_buf()));
            }
        }
    }
    for (p, rel) in &roots {
        let root = upper.join(rel);
        let keep = |_: &std::fs::DirEntry, t: std::fs::FileType| t.is_file() || t.is_symlink();
        match walk(&root, keep, false) {
            Ok(found) => out.extend(
                found
                    .iter()
                    .filter_map(|f| f.strip_prefix(&root).ok())
                    .map(|r| Ok(p.join(r))),
            ),
            Err(()) => out.push(Err(p.clone())),
        }
    }
    out.sort();
    out.dedup();
    out
}

/// After a run in place: the shared objects, and the links a build
/// script's `out` does not keep to itself (cargo makes none:
/// [`crate::protect::searched_dirs`]), in `profile` and the directories
/// of it the host reaches through links, changed at or after `since`
/// (`Err`: the walk was cut short).
pub fn changed(profile: &Path, since: std::time::SystemTime) -> Vec<Result<PathBuf, PathBuf>> {
    use crate::protect::grant_walk::changed_since;
    let keep = |e: &std::fs::DirEntry, _: std::fs::FileType| changed_since(&e.path(), since);
    let mut out = Vec::new();
    match walk(profile, keep, true) {
        Ok(found) => out.extend(found.into_iter().map(Ok)),
        Err(()) => out.push(Err(profile.to_path_buf())),
    }
    for r in resolved_searched(profile) {
        if let Ok(found) = walk(&r, keep, false) {
            out.extend(found.into_iter().map(Ok));
        }
    }
    out
}

/// Whether the link `p` (below a profile directory) stays inside the
/// `build/<unit>/out` it lies in.
fn link_kept(p: &Path) -> bool {
    let n: Vec<&std::ffi::OsStr> = p.iter().collect();
    let t = std::fs::read_link(p).unwrap_or_default();
    crate::protect::searched_dirs::within_build_out(&n, &t)
}

/// The shared objects below `root` that `keep` accepts (with `links`, the
/// links too that [`link_kept`] does not keep), walking at most
/// [`MAX_DIRS`] directories (`Err`: the walk was cut short).
fn walk(
    root: &Path,
    keep: impl Fn(&std::fs::DirEntry, std::fs::FileType) -> bool,
    links: bool,
) -> Result<Vec<PathBuf>, ()> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            return Err(());
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                todo.push(e.path());
            } else if (shared_object(&e.file_name())
                || (links && t.is_symlink() && !link_kept(&e.path())))
                && keep(&e, t)
            {
                out.push(e.path());
            }
        }
    }
    Ok(out)
}

/// Remove `found` (`Err`: a whole profile directory); one line for the
/// user (`None` when nothing was there).
pub fn remove(found: &[Result<PathBuf, PathBuf>]) -> Option<String> {
    let mut gone = 0usize;
    let mut failed = Vec::new();
    for f in found {
        let r = match f {
            Ok(p) => match std::fs::symlink_metadata(p) {
                Ok(m) if !m.is_dir() => std::fs::remove_file(p),
                _ => continue,
            },
            Err(d) => std::fs::remove_dir_all(d),
        };
        match r {
            Ok(()) => gone += 1,
            Err(e) => failed.push(format!(
                "{}: {e}",
                f.as_ref().unwrap_or_else(|d| d).display()
            )),
        }
    }
    if gone == 0 && failed.is_empty() {
        return None;
    }
    let dirs: Vec<String> = found
        .iter()
        .map(|f| match f {
            Ok(p) => p.parent().unwrap_or(p).display().to_string(),
            Err(d) => format!("{} (whole)", d.display()),
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut line = format!(
        "the run left {gone} shared object(s) or link(s) in cargo's build directory ({}): \
         removed, since cargo puts that directory on the library path of the build scripts, tests and \
         programs it runs",
        dirs.join(", ")
    );
    if !failed.is_empty() {
        line.push_str(&format!(
            "; could not remove {} (remove them before running cargo there)",
            failed.join(", ")
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_names() {
        let m = |p: &Path| p == Path::new("") || p == Path::new("sub");
        assert!(shaped_like_profile(Path::new("target/debug"), &m));
        assert!(shaped_like_profile(
            Path::new("sub/target/x86_64-unknown-linux-gnu"),
            &m
        ));
        assert!(!shaped_like_profile(Path::new("target/debug/deps/x"), &m));
        assert!(!shaped_like_profile(Path::new("other/target/debug"), &m));
        assert!(shared_object("libgcc_s.so.1".as_ref()));
        assert!(shared_object("libx.so".as_ref()));
        assert!(!shared_object("libx.rlib".as_ref()));
    }

    #[test]
    fn the_layers_shared_objects_are_found_and_removed() {
        let tmp = skarn_test_support::TempDir::new("cargo-libs");
        let ws = tmp.path().join("ws");
        let upper = tmp.path().join("upper");
        std::fs::create_dir_all(upper.join("target/debug/deps")).unwrap();
        std::fs::create_dir_all(ws.join("target/debug/deps")).unwrap();
        std::fs::write(upper.join("target/debug/libgcc_s.so.1"), "x").unwrap();
        std::fs::write(upper.join("target/debug/deps/libz.so"), "x").unwrap();
        std::fs::write(upper.join("target/debug/deps/a.rlib"), "x").unwrap();
        let found = in_layer(&upper, &ws, &[ws.join("target/debug")]);
        assert_eq!(found.len(), 2);
        for f in &found {
            let p = f.as_ref().unwrap();
            std::fs::write(p, "x").unwrap();
        }
        assert!(remove(&found).is_some());
        assert!(!ws.join("target/debug/libgcc_s.so.1").exists());
        assert!(remove(&found).is_none());
    }
}
