//! The home's other places whose links [`super::scan`] follows (attack
//! atk22g F10, F11, F13), apart from the listed roots.

use std::path::{Path, PathBuf};

use super::{MAX_DEPTH, SHALLOW, Scan};
use crate::policy::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS};

/// Entries one of [`Scan::other_roots`] may use of the budget.
const OTHER_ROOT_ENTRIES: usize = 2000;

/// Top-level dot directories [`Scan::other_roots`] leaves out: package
/// caches, stores and toolchains (program-written, large; the toolchains'
/// own links are [`crate::protect::toolchain_links`]'), a git directory
/// of the home, browsers' and games' profiles.
const DOT_SKIPPED: &[&str] = &[
    ".cargo",
    // Python environments kept in the home: their links are the
    // toolchain scan's (`protect::toolchain_links`), which knows what in
    // them runs (a linked `site-packages` keeps its start-up files, not
    // the project it lies in).
    ".venv",
    ".virtualenvs",
    ".pixi",
    ".m2",
    ".ivy2",
    ".conda",
    ".mamba",
    ".pnpm-store",
    ".yarn",
    ".bun",
    ".deno",
    ".rbenv",
    ".asdf",
    ".sdkman",
    ".git",
    ".wine",
    ".steam",
    ".mozilla",
    ".thunderbird",
    ".vscode-server",
    ".cursor-server",
    ".windsurf-server",
    ".vscode-extensions",
    ".android",
    ".gem",
    ".nuget",
    ".dotnet",
    ".julia",
    ".pub-cache",
    ".cpanm",
    ".Trash",
    ".local",
    ".config",
    // Node's global folders: the home-mentions check reads their links
    // (a link to a project there makes it read-only, atk22d F2).
    ".node_modules",
    ".node_libraries",
];

impl Scan {
    /// The other places host programs read links from (atk22g F10, F11,
    /// F13): the directories the global git configuration names
    /// (`core.hooksPath`, `init.templateDir`), the configuration homes the
    /// caller's variables move (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`,
    /// `ZDOTDIR`), and every other top-level dot directory of the home
    /// (a program reads it by name: `~/.cpan`, `~/.ghc`, `~/.xmonad`),
    /// package caches and toolchains aside ([`DOT_SKIPPED`]). Each is
    /// walked once, within [`OTHER_ROOT_ENTRIES`] of the budget; a cut
    /// walk is said.
    pub(super) fn other_roots(&mut self, home: &std::path::Path) {
        let mut roots: Vec<PathBuf> = Vec::new();
        for (p, _, _) in crate::protect::host_programs::global_git_programs(home) {
            roots.push(p);
        }
        for v in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZDOTDIR"] {
            if let Some(p) = std::env::var_os(v).map(PathBuf::from)
                && p.is_absolute()
            {
                roots.push(p);
            }
        }
        let listed = |n: &str| {
            HOME_PERSISTENCE_PATHS
                .iter()
                .chain(HOME_SECRET_PATHS)
                .chain(SHALLOW)
                .chain(DOT_SKIPPED)
                .any(|r| *r == n)
        };
        if let Ok(rd) = std::fs::read_dir(home) {
            let mut names: Vec<PathBuf> = rd
                .flatten()
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with('.') && n != "." && n != ".." && !listed(&n)
                })
                .map(|e| e.path())
                .collect();
            names.sort();
            roots.extend(names.into_iter().take(256));
        }
        for p in roots {
            let Some(real) = self.cache.resolve(&p) else {
                continue;
            };
            if !self.first_walk(&real) {
                continue;
            }
            let before = self.budget;
            let cap = before.min(OTHER_ROOT_ENTRIES);
            self.budget = cap;
            self.walk(&real, MAX_DEPTH, false);
            self.budget = before - (cap - self.budget);
        }
    }
}

/// Whether the link `p` is a pnpm store's record of a project using it
/// (`<store>/v10/projects/<hash> -> /the/project`, made by every
/// `pnpm install` of pnpm 10): `pnpm store prune` reads the project's
/// `node_modules` state through it to learn which packages are still in
/// use, and nothing is run or loaded from there. Followed as a home link,
/// it made every project installed with pnpm a "directory the home links
/// into", refused as a workspace (atk22k F20). Recognised by the store's
/// shape: a `projects` directory beside `files` and `index` in a `v<N>`
/// directory, the link's name a hexadecimal digest.
pub(super) fn pnpm_store_project(p: &Path) -> bool {
    let hex = p.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.len() >= 16 && n.bytes().all(|b| b.is_ascii_hexdigit())
    });
    let Some(projects) = p
        .parent()
        .filter(|d| d.file_name() == Some("projects".as_ref()))
    else {
        return false;
    };
    let Some(version) = projects.parent() else {
        return false;
    };
    let versioned = version.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.strip_prefix('v')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    });
    let store = ["files", "index"]
        .iter()
        .all(|d| std::fs::symlink_metadata(version.join(d)).is_ok_and(|m| m.file_type().is_dir()));
    hex && versioned && store
}
