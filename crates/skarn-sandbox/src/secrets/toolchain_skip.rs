//! Which directories the toolchain credential walk does not descend
//! into: installed code and content stores, by what they are.

use std::path::Path;

/// Directories named by the tool that made them, holding its installed
/// code or its content store wherever they lie: not descended into.
const STORE_NAMES: &[&str] = &[
    "node_modules",
    "site-packages",
    "dist-packages",
    "conda-meta",
    ".git",
    ".pnpm-store",
    ".pnpm",
    "_cacache",
    "_npx",
    "cache",
    ".cache",
    "caches",
];

/// A prefix's installed code and data (`lib`, `share`, ...): skipped only
/// in a directory laid out as a prefix ([`is_prefix`]); elsewhere (an
/// application's `share` or `lib` under `/opt`) walked (atk27q F9).
const PREFIX_CODE: &[&str] = &[
    "lib", "lib64", "Lib", "include", "share", "man", "bin", "Scripts", "sbin", "libexec", "src",
];

fn is_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

fn holds_dir(d: &Path, names: &[&str]) -> bool {
    names.iter().any(|n| is_dir(&d.join(n)))
}

/// Whether `d` is laid out as an install prefix (a `bin` or `lib` beside
/// its other directories), or Go's tree (`src` beside `pkg`).
fn is_prefix(d: &Path) -> bool {
    holds_dir(d, &["bin", "sbin", "Scripts", "lib", "pkg"])
}

/// Whether `name` is a store's bucket (two hexadecimal digits).
fn is_hex2(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Fewest bucket directories beside one for a directory to be a store's
/// buckets (npm's, git's, pnpm's stores fill them by the hundred).
pub(super) const MIN_BUCKETS: usize = 16;

/// Whether directory `dir` is skipped as installed code or a content
/// store: by what it is — its tool's own name, or a store's layout
/// (cargo's `registry`/`git`, git's `objects`, conda's `pkgs`, Maven's
/// repository, pnpm's store, a bucket among buckets) — never by a bare
/// name at any depth (atk27q F9). `buckets` is how many two-hex-digit
/// directories lie beside it.
pub(super) fn skipped(dir: &Path, buckets: usize) -> bool {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    let parent = dir.parent().unwrap_or(Path::new("/"));
    if STORE_NAMES.contains(&name) {
        return true;
    }
    if PREFIX_CODE.contains(&name) {
        return name.starts_with("bin") || name == "sbin" || name == "Scripts" || is_prefix(parent);
    }
    if is_hex2(name) {
        let store_parent = parent
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| ["objects", "index-v5", "files"].contains(&n) || n.starts_with("sha"));
        return buckets >= MIN_BUCKETS || store_parent;
    }
    match name {
        // cargo's stores; a bare repository.
        "git" => holds_dir(dir, &["db", "checkouts", "objects"]),
        "registry" => holds_dir(dir, &["index", "cache", "src"]),
        "objects" => holds_dir(dir, &["pack", "info"]),
        // conda's package cache.
        "pkgs" => dir.join("urls.txt").exists() || is_dir(&parent.join("conda-meta")),
        "store" => holds_dir(dir, &["v3", "v10"]),
        "repository" => {
            parent.file_name().is_some_and(|n| n == ".m2") || holds_dir(dir, &["org", "com"])
        }
        _ => false,
    }
}

/// How many of `entries` are two-hex-digit directories.
pub(super) fn buckets(entries: &[std::fs::DirEntry]) -> usize {
    entries
        .iter()
        .filter(|e| {
            e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name().to_str().is_some_and(is_hex2)
        })
        .count()
}
