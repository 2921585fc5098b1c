//! Where the home's trusted files really are (host side, before planning).
//!
//! Host programs open `~/.bashrc`, `~/.gitconfig`, `~/.config/nvim`,
//! `~/.aws/credentials` or skarn's own `~/.config/skarn/config.toml` by
//! name, and the kernel follows the links on the way: a dotfiles
//! repository (`~/.bashrc -> ~/dotfiles/bashrc`) puts the real file
//! wherever the link points, possibly inside the workspace. Deciding by
//! name would leave those targets writable (or readable) from inside.
//!
//! [`scan`] resolves every home persistence and secret path (links at
//! every level: the path itself, its ancestors, and the links found
//! inside it, walked to a bounded depth and entry count) to its canonical
//! place, plus the files the global and system git configuration
//! includes. The planner then protects each target that lies in a
//! writable grant (read-only, reserved when missing) and hides each
//! secret target under any grant. What the walk could not finish is said
//! (the report is then not `FullyEnforced`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::grants::CanonicalCache;
use crate::policy::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS};
use crate::protect::dir_listings::{self, Kind};
use crate::protect::persistence::{ENTRIES, Reserve};

pub use crate::protect::trusted::{Tree, Trusted, link_hops};

/// What [`scan`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    /// Targets reached through a link, or named by a configuration.
    pub trusted: Vec<Trusted>,
    /// Directories whose walk stopped at a bound (said in the report).
    pub unfinished: Vec<PathBuf>,
    /// Start-up file lines sourcing what could not be expanded (said).
    pub unresolved: Vec<String>,
    /// Relative names start-up files source (kept read-only in every
    /// writable grant: a shell started there reads them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relative: Vec<(PathBuf, String)>,
    /// Files of build tools' homes reserved empty when missing
    /// ([`crate::protect::tool_homes`]; only from
    /// [`crate::protect::host_places::collect`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_when_missing: Vec<PathBuf>,
    /// What protected configurations load that was not followed exactly
    /// ([`crate::protect::config_refs::Loaded::notes`]; said).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_notes: Vec<String>,
}

/// Entries examined by one scan (all roots together).
pub const MAX_ENTRIES: usize = 30_000;
/// Directory levels walked below each root.
pub const MAX_DEPTH: usize = 8;
/// Targets kept (a bound on what a hostile home could make us carry).
pub(crate) const MAX_FOUND: usize = 4096;

/// Home roots that are caches or data: walked one level only (links deep
/// inside them are not start-up files).
const SHALLOW: &[&str] = &[
    ".cache",
    ".npm",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".gradle",
    // skarn's own state: its stores hold what runs wrote in their cache
    // layers (links of package managers among them), which no host
    // program follows; walking them cost every run about 60,000 system
    // calls with a few hundred stores (issue 30).
    ".local/state/skarn",
    // The state directories of `skarn serve`'s sandboxed servers: each is
    // a server's workspace (what it wrote), which host programs do not
    // read on their own; a few thousand of them cost every run about
    // 12,000 system calls (issue 30).
    ".local/state/skarn-servers",
];

/// skarn's own state directories (members of [`SHALLOW`]): not listed
/// when they are real directories under the home ([`Scan::root`]).
const SKARN_STATE: &[&str] = &[".local/state/skarn", ".local/state/skarn-servers"];

/// Trees a link's target is not walked in ([`Scan::first_walk`]).
const SYSTEM_TREES: &[&str] = &[
    "/usr",
    "/nix/store",
    "/gnu/store",
    "/proc",
    "/sys",
    "/dev",
    "/snap",
    "/boot",
];

/// Home roots holding many other programs' files: walked after the others.
const BROAD: &[&str] = &[".config", ".local"];

/// Scans kept for the rest of the process (see [`remember_scans`]).
static REMEMBERED: std::sync::Mutex<Option<Vec<(PathBuf, Found)>>> = std::sync::Mutex::new(None);

/// From now on, [`scan`] of a home already scanned in this process returns
/// the first scan's result. For a short-lived process that asks the same
/// question several times before one run starts (`skarn run` asked it
/// three times: is the workspace a home place, twice, and where the home's
/// links lead); never for a long-lived one, whose home may change.
pub fn remember_scans() {
    let mut r = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    r.get_or_insert_with(Vec::new);
}

/// Scan the home `home` (as `$HOME` names it).
pub fn scan(home: &Path) -> Found {
    let mut r = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(kept) = r.as_mut() else {
        drop(r);
        return scan_now(home);
    };
    if let Some((_, f)) = kept.iter().find(|(h, _)| h == home) {
        return f.clone();
    }
    let f = scan_now(home);
    kept.push((home.to_path_buf(), f.clone()));
    f
}

fn scan_now(home: &Path) -> Found {
    // Only looks (ADR 0247).
    let _facts = crate::policy::link_facts::Scope::enter();
    let mut s = Scan {
        found: Found::default(),
        cache: CanonicalCache::following_dangling_links(),
        budget: MAX_ENTRIES,
        home: home.to_path_buf(),
        walked: Vec::new(),
        // The walk's listings from the record of earlier runs (ADR 0325).
        listings: dir_listings::Listings::open(
            home,
            "home-links",
            include_str!("home_links.rs"),
            dir_listings::SETTLE,
        ),
    };
    let shell_rc = ENTRIES
        .iter()
        .filter(|e| e.reserve == Reserve::IfHome)
        .map(|e| e.path);
    // Secrets first: the budget must never run out before them.
    for rel in HOME_SECRET_PATHS {
        s.root(home, rel, true);
    }
    s.root_file(
        &home.join(".config/skarn/config.toml"),
        true,
        "skarn's own configuration",
    );
    // Every top-level entry of the home that is a link, whatever its
    // name: the home is the user's, and host programs read its entries.
    s.walk(home, 1, false);
    // The named roots, broad ones (whole `.config`, `.local`) last, so
    // that a large tree there cannot use up the budget before them.
    let (broad, named): (Vec<&str>, Vec<&str>) = HOME_PERSISTENCE_PATHS
        .iter()
        .copied()
        .chain(shell_rc)
        .partition(|r| BROAD.contains(r) || SHALLOW.contains(r));
    for rel in named.into_iter().chain(broad) {
        s.root(home, rel, false);
    }
    for (file, via) in crate::protect::host_programs::global_git_includes(home) {
        s.named_startup(&file, via);
    }
    s.other_roots(home);
    let sc = crate::protect::shell_sources::sourced(home);
    for r in sc.reached {
        match r.tree {
            Some(tree) => {
                if let Some(real) = s.cache.resolve(&r.path) {
                    s.keep(Trusted::tree(&r.path, real, r.via, tree));
                }
            }
            // A program a start-up file runs: that file.
            None if !r.via.starts_with("sourced by") => s.named(&r.path, r.via, false),
            // A sourced file: its directory too.
            None => s.named_startup(&r.path, r.via),
        }
    }
    // Toolchains and Python environments the host runs later, and the
    // links inside them (issue 22, items A and B).
    let var = |k: &str| std::env::var(k).ok();
    let places = crate::protect::toolchain_links::places(home, &var);
    let tl = crate::protect::toolchain_links::scan_cached(home, &places, &mut s.cache);
    for t in tl.trusted {
        s.keep(t);
    }
    s.found.unfinished.extend(tl.unfinished);
    // Files sourced past the bounds are not followed: said.
    s.found.unfinished.extend(sc.stopped);
    s.found.unresolved = sc.unresolved;
    s.found.relative = sc.relative;
    s.found.trusted.sort_by(|a, b| a.target.cmp(&b.target));
    s.found.trusted.dedup_by(|a, b| {
        a.target == b.target && a.secret == b.secret && a.tree == b.tree && a.via == b.via
    });
    if let Some(l) = s.listings.take() {
        l.save();
    }
    s.found
}

/// The links inside secret places named elsewhere than by the home's
/// fixed names (the caller's environment, git's configuration,
/// `--deny-read`), followed like those of the home's secret directories:
/// what they reach is as secret.
pub fn secret_links<'a>(places: impl IntoIterator<Item = &'a Path>) -> Found {
    let mut s = Scan {
        found: Found::default(),
        cache: CanonicalCache::following_dangling_links(),
        budget: MAX_ENTRIES,
        home: PathBuf::new(),
        walked: Vec::new(),
        listings: None,
    };
    for p in places {
        if let Some(real) = s.cache.resolve(p) {
            s.walk_into(&real);
        }
    }
    s.found
}

struct Scan {
    found: Found,
    cache: CanonicalCache,
    budget: usize,
    home: PathBuf,
    /// Real directories a secret walk went into through a link (each once:
    /// links may loop).
    walked: Vec<PathBuf>,
    /// Listings of unchanged directories kept by earlier scans.
    listings: Option<dir_listings::Listings>,
}

/// Home places whose links lead to programs, caches or data rather than
/// start-up files: their targets are protected as files, not with their
/// directory.
const NOT_STARTUP: &[&str] = &["bin", ".local/bin", ".cargo/bin"];

impl Scan {
    fn keep(&mut self, t: Trusted) {
        if self.found.trusted.len() < MAX_FOUND {
            self.found.trusted.push(t);
        }
    }

    fn push(&mut self, name: &Path, target: PathBuf, via: String, secret: bool) {
        // A credential store by its name's shape (atk22g F12): hidden.
        let secret = secret
            || crate::protect::secret_shape::looks_secret(
                name.strip_prefix(&self.home).unwrap_or(name),
            );
        // A start-up or configuration file of the home that leads
        // elsewhere: what it reaches is not all known (it may source,
        // load or run its neighbours by any means), so the directory
        // tree it lives in is protected too.
        let startup = !secret
            && name.strip_prefix(&self.home).is_ok_and(|rel| {
                rel.to_string_lossy().starts_with('.')
                    && !NOT_STARTUP
                        .iter()
                        .chain(SHALLOW)
                        .any(|n| rel.starts_with(n))
            });
        if startup {
            self.startup_dir(name, &target, &via);
        }
        self.keep(Trusted::new(name, target, via, secret));
    }

    /// The directory tree of a start-up file's real place `target`.
    fn startup_dir(&mut self, name: &Path, target: &Path, via: &str) {
        if let Some(dir) = target.parent() {
            let why = format!(
                "the directory of {} ({via}): a start-up file's neighbours may be read as \
                 code by it",
                target.display()
            );
            self.keep(Trusted::tree(name, dir.to_path_buf(), why, Tree::Dir));
        }
    }

    /// A file a start-up file sources (or git includes): itself and its
    /// directory tree.
    fn named_startup(&mut self, p: &Path, via: String) {
        if let Some(real) = self.cache.resolve(p) {
            self.startup_dir(p, &real, &via);
            self.keep(Trusted::new(p, real, via, false));
        }
    }

    /// A path a configuration names: its canonical place, always kept.
    fn named(&mut self, p: &Path, via: String, secret: bool) {
        if let Some(real) = self.cache.resolve(p) {
            self.keep(Trusted::new(p, real, via, secret));
        }
    }

    fn root_file(&mut self, p: &Path, secret: bool, what: &str) {
        if let Some(real) = self.cache.resolve(p)
            && real != p
        {
            self.push(
                p,
                real,
                format!("{} ({what}, through a link)", p.display()),
                secret,
            );
        }
    }

    /// One listed home path: where it leads, and the links inside it.
    fn root(&mut self, home: &Path, rel: &str, secret: bool) {
        let p = home.join(rel);
        let Some(real) = self.cache.resolve(&p) else {
            return;
        };
        if real != p {
            // The name leads elsewhere (the path or an ancestor is a
            // link): that place is the one to protect, whole.
            self.push(
                &p,
                real.clone(),
                format!("{} (through a link)", p.display()),
                secret,
            );
            // A directory kept elsewhere (`~/.aws -> ~/sync/aws`, `~/.vim
            // -> ~/sync/vim`): the links inside it lead on, and what they
            // reach is as secret (`credentials -> ~/project/creds`) or
            // as trusted (`pack/x/start/p/plugin/p.vim -> ~/project/p.vim`,
            // which vim runs).
            let depth = if SHALLOW.contains(&rel) { 1 } else { MAX_DEPTH };
            if self.first_walk(&real) {
                self.walk(&real, depth, secret);
            }
            return;
        }
        // skarn's own state, where it is: every entry of its first level
        // is made by skarn itself (records, layers, stores, one directory
        // per gateway server; no run is granted these directories, a
        // server only its own directory's inside), so no link the user
        // or a run made is there to find. Listing it cost every run one
        // entry of the walk's budget per server directory or record left
        // by earlier runs (issue 30: 2,000 in a tested home).
        if SKARN_STATE.contains(&rel) {
            return;
        }
        let depth = if SHALLOW.contains(&rel) { 1 } else { MAX_DEPTH };
        self.walk(&p, depth, secret);
    }

    /// Walk the real directory `real` a secret path leads to (once).
    fn walk_into(&mut self, real: &Path) {
        if self.first_walk(real) {
            self.walk(real, MAX_DEPTH, true);
        }
    }

    /// Whether `real` is a directory no walk through a link went into yet
    /// (and record it). The system's own trees are not entered: only
    /// their owner (root) could have put links there, and they are large.
    fn first_walk(&mut self, real: &Path) -> bool {
        // (Nor the home or a directory above it: its own walk covers it.)
        if !real.is_dir()
            || SYSTEM_TREES.iter().any(|t| real.starts_with(t))
            || (!self.home.as_os_str().is_empty() && self.home.starts_with(real))
            || real == Path::new("/")
            || self.walked.iter().any(|w| w == real)
        {
            return false;
        }
        self.walked.push(real.to_path_buf());
        true
    }

    /// Whether `p` is one of the home's [`SHALLOW`] roots.
    fn is_shallow(&self, p: &Path) -> bool {
        p.strip_prefix(&self.home)
            .is_ok_and(|rel| SHALLOW.iter().any(|s| rel == Path::new(s)))
    }

    /// The links inside `dir` (a real directory), `depth` levels deep.
    fn walk(&mut self, dir: &Path, depth: usize, secret: bool) {
        // (directory, its level, the depth its walk stops at)
        let mut stack = vec![(dir.to_path_buf(), 0usize, depth)];
        while let Some((d, level, depth)) = stack.pop() {
            let Some(entries) = dir_listings::list_whole(self.listings.as_mut(), &d) else {
                continue;
            };
            for (path, kind) in entries {
                if self.budget == 0 {
                    if self.found.unfinished.len() < 8 {
                        self.found.unfinished.push(d.clone());
                    }
                    return;
                }
                self.budget -= 1;
                if kind == Kind::Link {
                    if other::pnpm_store_project(&path) {
                        continue;
                    }
                    if let Some(real) = self.cache.resolve(&path) {
                        self.push(
                            &path,
                            real.clone(),
                            format!("{} (a link)", path.display()),
                            secret,
                        );
                        // An entry linking to a directory (`~/.ssh/keys
                        // -> ~/sync/keys`, `~/.config/nvim ->
                        // ~/dotfiles/nvim`): its own links are followed
                        // too, within the same depth.
                        if level + 1 < depth && self.first_walk(&real) {
                            stack.push((real, level + 1, depth));
                        }
                    }
                } else if kind == Kind::Dir {
                    if level + 1 < depth {
                        // A cache or data root reached from a broader one
                        // (`.local/state/skarn` from `.local`) is walked
                        // one level, as when it is walked itself.
                        let depth = if self.is_shallow(&path) {
                            depth.min(level + 2)
                        } else {
                            depth
                        };
                        stack.push((path, level + 1, depth));
                    } else if depth == MAX_DEPTH && self.found.unfinished.len() < 8 {
                        // Deeper links are not followed: said, not hidden.
                        self.found.unfinished.push(path);
                    }
                }
            }
        }
    }
}

/// After a run: put back each link of `guards` (place, text) the run
/// removed or changed, setting aside what it left there; one warning each.
pub fn restore_links(guards: &[(PathBuf, PathBuf)]) -> Vec<String> {
    let mut out = Vec::new();
    for (p, text) in guards {
        let same = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::read_link(p).is_ok_and(|t| t == *text);
        if same {
            continue;
        }
        let aside = if std::fs::symlink_metadata(p).is_err() {
            crate::protect::set_aside::Aside::Removed
        } else {
            crate::protect::set_aside::set_aside(p, "skarn-set-aside")
        };
        let moved = !matches!(aside, crate::protect::set_aside::Aside::Left(_));
        let back = moved && std::os::unix::fs::symlink(text, p).is_ok();
        out.push(format!(
            "{} is a link host programs pass through (to {}); the run changed it: {}",
            p.display(),
            text.display(),
            if back {
                match &aside {
                    crate::protect::set_aside::Aside::Moved(a) => {
                        format!("put back (what the run left is {})", a.display())
                    }
                    _ => "put back".into(),
                }
            } else {
                "it could not be put back: check it before using the host programs that read it"
                    .into()
            }
        ));
    }
    out
}

#[path = "home_links_other.rs"]
mod other;

#[cfg(test)]
#[path = "home_links_tests.rs"]
mod tests;
