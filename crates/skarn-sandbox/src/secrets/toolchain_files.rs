//! The credential files inside the toolchain trees every run may read
//! (atk22l F14). The presets grant whole version managers' and
//! environments' trees (`~/.nvm`, `~/.pyenv`, `~/miniconda3`, a virtualenv,
//! the installations under `/opt`), and the tools keep configuration with
//! credentials at their own places inside them:
//! - npm's global configuration `<node prefix>/etc/npmrc` (nvm's, volta's,
//!   fnm's node images; `/usr/local/etc/npmrc` and `/usr/etc/npmrc` for a
//!   node installed there), where `npm config set --global` and
//!   `npm login --location=global` put a registry token;
//! - pip's site file `<python prefix>/pip.conf` (`pip.ini`): a pyenv
//!   version's, a virtualenv's, a conda environment's;
//! - conda's `<root or environment>/.condarc`, `condarc` and `condarc.d/`;
//! - `.npmrc`, `.yarnrc`, `.yarnrc.yml` kept at a prefix;
//! - files that hold nothing but credentials: `.pypirc`, cargo's
//!   `credentials(.toml)` (in a cargo home granted as a toolchain or
//!   lying in one), `.netrc`, `.git-credentials`.
//!
//! The trees are those a run reads outside the places it writes
//! ([`roots`]): the toolchain grants, each installation under `/opt` and
//! `/usr/local`, the prefixes the caller's environment names (atk27p F1,
//! atk22m F1). Each tree is walked with its own budget, content stores
//! skipped; past the budget the rest is looked at only at the tools'
//! fixed places (atk22m F4). The system's own configuration places of
//! each tool's search order (`/etc/pip.conf`, `/etc/xdg/pip/pip.conf`,
//! `<prefix>/etc/gitconfig`, `<prefix>/pip.conf`, `/etc/conda/.condarc`
//! and `condarc.d`, apt's `auth.conf(.d)`, Maven's and Gradle's settings;
//! atk27p F3, atk22m F2) are looked up by name.
//!
//! Each such file is hidden in every run when it holds a credential (a
//! URL with user info, a token-shaped word, a key named like one, npm's
//! `//host/:` settings) or cannot be judged (unreadable, too big); one
//! without any (a mirror's index URL, channel names) stays readable, so
//! the tool keeps its settings. The credential-only files are hidden
//! whatever they hold. npm and pip read a hidden (unreadable) file as no
//! settings.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::policy::Policy;
use judge::{hidden, kind};
use places::{LAYOUTS, PLACES, fixed_places, layout_dirs};
use roots::{in_writable, readable, roots, writable};
#[cfg(test)]
use skip::MIN_BUCKETS;
use skip::{buckets, skipped};
use stores::{masks, passwd_stores, stores};

#[path = "toolchain_judge.rs"]
mod judge;
#[path = "toolchain_places.rs"]
mod places;
#[path = "toolchain_roots.rs"]
mod roots;
#[path = "toolchain_skip.rs"]
mod skip;
#[path = "toolchain_stores.rs"]
mod stores;

/// Deepest directory looked into below a root; a deeper one is hidden
/// whole (atk27r F9: the budget, not the depth, bounds a walk).
const MAX_DEPTH: usize = 24;

/// Most directory entries looked at in one root (atk22m F4: one budget
/// over all roots let a big tree leave the others unwalked).
const PER_ROOT: usize = 20_000;

/// Most directory entries looked at over all roots; past it each
/// remaining root is looked at only at the tools' fixed places.
const MAX_ENTRIES: usize = 200_000;

/// What [`find`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// The files to hide (each under the name found and, for a link, its
    /// target's).
    pub files: Vec<PathBuf>,
    /// A walk stopped at its budget or depth: a note for the report.
    pub truncated: bool,
    /// The directories a walk cut short did not list: hidden whole
    /// (atk27r F9), or looked at only at the tools' fixed places when
    /// they hold a writable place.
    pub masked: Vec<PathBuf>,
}

/// The walk of the roots.
struct Walk {
    entries: usize,
    writable: Vec<PathBuf>,
    found: Found,
}

impl Walk {
    fn push(&mut self, p: &Path) {
        let mut add = |q: PathBuf| {
            if !self.found.files.contains(&q) {
                self.found.files.push(q);
            }
        };
        add(p.to_path_buf());
        if let Ok(real) = std::fs::canonicalize(p)
            && real != p
        {
            add(real);
        }
    }

    /// A file met by a walk: judged when named like a credential place.
    fn file(&mut self, p: &Path) {
        if let Some(only) = kind(p)
            && hidden(p, only)
        {
            self.push(p);
        }
    }

    /// A home-style store (atk27r F4): a tool's configuration is judged
    /// by its text, any other store hidden whole.
    fn store(&mut self, p: &Path) {
        match kind(p) {
            Some(_) => self.file(p),
            None => self.push(p),
        }
    }

    /// A fixed place of a tool (`p` may not exist): judged whatever its
    /// name, by what it holds unless it is credential-only.
    fn place(&mut self, p: &Path) {
        if std::fs::symlink_metadata(p).is_err() || in_writable(p, &self.writable) {
            return;
        }
        if hidden(p, kind(p).unwrap_or(false)) {
            self.push(p);
        }
        // A `.d` directory of such files (conda's `condarc.d`, apt's
        // `auth.conf.d`).
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .take(256);
            for e in rd {
                self.file(&e.path());
            }
        }
    }

    /// The fixed places below directory `dir`, without listing it.
    fn places(&mut self, dir: &Path) {
        for rel in PLACES.iter().chain(["condarc.d"].iter()) {
            let p = dir.join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                if p.is_dir() {
                    self.place(&p);
                } else {
                    self.file(&p);
                }
            }
        }
    }

    /// Fail closed for a walk of `root` cut short with `unlisted`
    /// directories (the one being listed first): each is hidden whole
    /// ([`masks`]); one that cannot be (it holds a writable place) is
    /// looked at at its fixed places, as is each installation of the
    /// version managers' layouts below the root.
    fn cut_short(&mut self, root: &Path, unlisted: Vec<PathBuf>) {
        self.found.truncated = true;
        for d in &unlisted {
            self.places(d);
        }
        for pattern in LAYOUTS {
            for d in layout_dirs(root, pattern) {
                if !in_writable(&d, &self.writable) {
                    self.places(&d);
                }
            }
        }
        let (hide, _open) = masks(root, unlisted, &self.writable);
        for d in hide {
            if !self.found.masked.contains(&d) {
                self.found.masked.push(d);
            }
        }
    }

    fn root(&mut self, root: &Path) {
        let budget = PER_ROOT.min(MAX_ENTRIES.saturating_sub(self.entries));
        let mut used = 0usize;
        let mut queue = VecDeque::from([(root.to_path_buf(), 0usize)]);
        // Directories below the deepest level: not listed.
        let mut deep: Vec<PathBuf> = Vec::new();
        while let Some((dir, depth)) = queue.pop_front() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let listed: Vec<std::fs::DirEntry> = rd.flatten().take(budget + 1).collect();
            let hex = buckets(&listed);
            for e in listed {
                if used >= budget {
                    // Fail closed: what was not listed is hidden.
                    let rest = std::iter::once(dir.clone())
                        .chain(queue.drain(..).map(|(d, _)| d))
                        .chain(deep)
                        .collect();
                    self.cut_short(root, rest);
                    return;
                }
                used += 1;
                self.entries += 1;
                let name = e.file_name();
                for p in stores(&dir, &name.to_string_lossy()) {
                    self.store(&p);
                }
                let Ok(ft) = e.file_type() else { continue };
                let path = e.path();
                if ft.is_dir() {
                    if !skipped(&path, hex) && !in_writable(&path, &self.writable) {
                        match depth < MAX_DEPTH {
                            true => queue.push_back((path, depth + 1)),
                            false => deep.push(path),
                        }
                    }
                } else if ft.is_file() || ft.is_symlink() {
                    self.file(&path);
                }
            }
        }
        if !deep.is_empty() {
            self.cut_short(root, deep);
        }
    }
}

/// Whether the walk of `root` goes into directory `dir`.
pub(super) fn reaches(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<_> = rel.components().collect();
    if parts.len() > MAX_DEPTH {
        return false;
    }
    let mut at = root.to_path_buf();
    for c in parts {
        at.push(c);
        let beside = at
            .parent()
            .and_then(|p| std::fs::read_dir(p).ok())
            .map(|rd| rd.flatten().take(4096).collect::<Vec<_>>())
            .unwrap_or_default();
        if skipped(&at, buckets(&beside)) {
            return false;
        }
    }
    true
}

/// The credential files of `policy`'s toolchain trees and of the system's
/// configuration (see the module text), for the caller's home `home`.
pub fn find(policy: &Policy, home: Option<&Path>) -> Found {
    find_with(policy, home, &|k| std::env::var_os(k))
}

/// [`find`] with the caller's environment `env`.
pub(crate) fn find_with(
    policy: &Policy,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Found {
    let mut w = Walk {
        entries: 0,
        writable: writable(policy),
        found: Found::default(),
    };
    for r in roots(policy, home, env) {
        // A root that is itself a store (`/opt/.ssh`).
        if let (Some(up), Some(n)) = (r.parent(), r.file_name()) {
            for s in stores(up, &n.to_string_lossy()) {
                w.store(&s);
            }
        }
        if w.entries >= MAX_ENTRIES {
            w.cut_short(&r, vec![r.clone()]);
            continue;
        }
        w.root(&r);
    }
    for p in fixed_places(policy, home, env) {
        w.place(&p);
    }
    for p in passwd_stores(&readable(policy), &w.writable, home) {
        w.store(&p);
    }
    w.found
}

/// What [`hide`] leaves for the plan.
#[derive(Debug, Default)]
pub struct Hidden {
    /// Notes for the report (a walk cut short, git's system file hidden).
    pub notes: Vec<String>,
    /// Variables for the command: `GIT_CONFIG_NOSYSTEM` when a git system
    /// configuration is hidden (git stops at a system file it cannot
    /// read; without the variable every git command would fail).
    pub env: Vec<(String, String)>,
}

/// Hide what [`find`] finds in every run of `policy`: added to its
/// `deny_read` (said in `--report` with this source).
pub fn hide(policy: &mut Policy, home: Option<&Path>) -> Hidden {
    let found = find(policy, home);
    let mut out = Hidden::default();
    for p in found.files {
        if p.file_name().is_some_and(|n| n == "gitconfig") && out.env.is_empty() {
            out.env
                .push(("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()));
            out.notes.push(format!(
                "git's system configuration {} holds a credential: hidden, and git runs \
                 without its system configuration (GIT_CONFIG_NOSYSTEM=1)",
                p.display()
            ));
        }
        if !policy.deny_read.iter().any(|g| g.path == p) {
            policy.deny_read.push(crate::policy::Grant::new(
                p,
                "default (a toolchain's credential file)",
            ));
        }
    }
    for d in &found.masked {
        if !policy.deny_read.iter().any(|g| g.path == *d) {
            policy.deny_read.push(crate::policy::Grant::new(
                d.clone(),
                "default (not listed by the toolchain credential walk)",
            ));
        }
    }
    if found.truncated {
        out.notes.push(format!(
            "a toolchain directory holds more than {PER_ROOT} entries or is deeper than \
             {MAX_DEPTH} levels: the {} directories its walk did not list are hidden from \
             the run (fail closed: ADR 0334): {}",
            found.masked.len(),
            (found.masked.iter().take(4))
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

#[cfg(test)]
#[path = "toolchain_files_tests.rs"]
mod tests;
