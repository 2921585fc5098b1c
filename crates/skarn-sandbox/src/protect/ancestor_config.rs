//! Configuration that host programs look up in the PARENT directories of
//! where they start, naming files inside a grant (attack atk22g F16, F17,
//! F18). direnv runs the nearest `.envrc` upward, mise merges every config
//! file from the current directory to `/`, cargo every
//! `.cargo/config.toml`, rustup and yarn 1 the nearest `rust-toolchain` /
//! `.yarnrc`, go the nearest `go.work`, asdf `.tool-versions`; git reads
//! the repository of the directory it starts in, which for a workspace
//! inside a work tree is the enclosing one. Such a file outside the
//! workspace (`~/work/.envrc`, `~/work/.cargo/config.toml`) is out of the
//! run's reach, but what it names inside the workspace
//! (`source proj/scripts/env.sh`, `rustc-wrapper = "proj/tools/wrap"`,
//! `core.fsmonitor = tools/fsmon.sh`) is not: the run rewrites it, and the
//! host's next `cd`, `cargo build` or `git status` under that parent runs
//! it. [`places`] reads those files for every ancestor of a grant (and
//! `$CARGO_HOME`'s configuration, wherever it lies) the way the programs
//! find them, and returns what they name inside the grant: kept
//! read-only, reserved when missing (a directory: its whole tree).

use std::path::{Path, PathBuf};

use crate::protect::trusted::{Tree, Trusted};

/// Ancestors of a grant read at most (deeper ones are not read; real
/// paths have far fewer levels).
const MAX_LEVELS: usize = 64;
/// Bytes read per file.
const MAX_BYTES: u64 = 1 << 20;
/// Places kept per grant, at most; past it the grant itself (its whole
/// tree) is the place.
const MAX_PLACES: usize = 512;

/// Files read as text in each ancestor: every path-like word counts.
const UPWARD_FILES: &[&str] = &[
    ".envrc",
    ".cargo/config.toml",
    ".cargo/config",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".yarnrc",
    ".yarnrc.yml",
    ".tool-versions",
    "go.work",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise/config.toml",
    "mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
];

fn read(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    // Never wait on a FIFO planted under the name.
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK);
    let f = o.open(p).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut b = Vec::new();
    f.take(MAX_BYTES).read_to_end(&mut b).ok()?;
    Some(String::from_utf8_lossy(&b).into_owned())
}

pub use crate::protect::path_words::path_words;

/// What the configuration of ancestor directory `a` names (files, and
/// directories whose whole tree counts), not yet narrowed to a grant.
fn named_by(a: &Path, grant: &Path, home: Option<&Path>) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    // The programs' own readers first (direnv's calls, mise's keys, yarn).
    let envrc = a.join(".envrc");
    let via_envrc = format!(
        "named by {} (direnv runs the nearest .envrc upward)",
        envrc.display()
    );
    for p in crate::protect::envrc::sourced(&envrc)
        .into_iter()
        .chain(crate::protect::envrc::path_dirs(&envrc))
    {
        // More names than the reader keeps (it names its own directory):
        // the whole grant.
        let p = if p == a { grant.to_path_buf() } else { p };
        out.push((p, via_envrc.clone()));
    }
    let mise = crate::protect::mise_env::named(a, home);
    let via_mise = format!(
        "named by the mise configuration of {} (mise reads every parent's)",
        a.display()
    );
    for p in mise.files.into_iter().chain(mise.path_dirs) {
        out.push((p, via_mise.clone()));
    }
    for p in crate::protect::yarn_path::named(a) {
        out.push((
            p,
            format!("the yarn program {}/.yarnrc* names", a.display()),
        ));
    }
    for p in crate::protect::pnpm_file::named(a) {
        out.push((
            p,
            format!(
                "the pnpmfile {}/pnpm-workspace.yaml or .npmrc names",
                a.display()
            ),
        ));
    }
    // Every path-like word of the upward-searched files: relative ones as
    // the programs resolve them (against `a`, the parent of `.cargo`),
    // and against the file's own directory.
    for rel in UPWARD_FILES {
        let f = a.join(rel);
        let Some(text) = read(&f) else { continue };
        let own = f.parent().unwrap_or(a).to_path_buf();
        let via = format!("named by {} (read from parent directories)", f.display());
        for p in path_words(&text, &[a, &own], home) {
            out.push((p, via.clone()));
        }
    }
    out
}

/// The configuration of `$CARGO_HOME` (wherever the caller put it):
/// every path-like word of its `config.toml` / `config` (cargo resolves
/// relative ones against the directory holding `CARGO_HOME`).
fn cargo_home_named(home: Option<&Path>) -> Vec<(PathBuf, String)> {
    let Some(ch) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in ["config.toml", "config"] {
        let f = ch.join(name);
        let Some(text) = read(&f) else { continue };
        let parent = ch.parent().unwrap_or(&ch).to_path_buf();
        let via = format!("named by {} ($CARGO_HOME's configuration)", f.display());
        for p in path_words(&text, &[&parent, &ch], home) {
            out.push((p, via.clone()));
        }
    }
    out
}

/// What the repository enclosing `grant` (a work tree whose top lies
/// ABOVE the grant) names inside it: its configuration's values and
/// includes, relative ones against the work tree's top (where git runs
/// hooks, `core.fsmonitor`, filters and aliases).
fn enclosing_repo_named(grant: &Path, home: Option<&Path>) -> Vec<(PathBuf, String)> {
    let Some(parent) = grant.parent() else {
        return Vec::new();
    };
    let Some(layout) = crate::protect::git::git_vet::discover(parent) else {
        return Vec::new();
    };
    let names = crate::protect::git::config_names::named(&layout, home);
    let over = names.len() > crate::protect::git::config_names::MAX_PATHS;
    names
        .into_iter()
        .map(|p| {
            if over && p == layout.top {
                grant.to_path_buf()
            } else {
                p
            }
        })
        .map(|p| {
            let via = format!(
                "named by the git configuration of the enclosing repository {}",
                layout.top.display()
            );
            (p, via)
        })
        .collect()
}

/// The places the upward-searched configuration of `grant`'s ancestors
/// (and `$CARGO_HOME`'s, and the enclosing repository's) names inside
/// `grant` (canonical): each once, an existing directory as a tree.
pub fn places(grant: &Path, home: Option<&Path>) -> Vec<Trusted> {
    let mut named: Vec<(PathBuf, String)> = Vec::new();
    for a in grant.ancestors().skip(1).take(MAX_LEVELS) {
        named.extend(named_by(a, grant, home));
    }
    named.extend(cargo_home_named(home));
    named.extend(enclosing_repo_named(grant, home));
    let mut cache = crate::policy::canonical::CanonicalCache::following_dangling_links();
    let mut out: Vec<Trusted> = Vec::new();
    for (p, via) in named {
        let Some(target) = cache.resolve(&p) else {
            continue;
        };
        if !target.starts_with(grant) || out.iter().any(|t| t.target == target) {
            continue;
        }
        if out.len() >= MAX_PLACES {
            let via = format!("more than {MAX_PLACES} places named by its parents' configuration");
            out.push(Trusted::tree(grant, grant.to_path_buf(), via, Tree::Dir));
            break;
        }
        let is_dir = std::fs::metadata(&target).is_ok_and(|m| m.is_dir());
        out.push(if is_dir {
            Trusted::tree(&p, target, via, Tree::Dir)
        } else {
            Trusted::new(&p, target, via, false)
        });
    }
    out
}

#[cfg(test)]
#[path = "ancestor_config_tests.rs"]
mod tests;
