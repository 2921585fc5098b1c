//! Does a home configuration file name the workspace? (host side, before
//! planning; ADR 0160, ADR 0206).
//!
//! Host programs run what their configuration names: a shell its rc
//! files' sources, programs and `PATH`, vim its `runtimepath`, ssh its
//! `Match exec`, git its pager and hooks, cargo its `rustc-wrapper`, npm
//! its `node-options`, python the directories of a user-site `.pth`.
//! Parsing each format exactly was tried (ADR 0135, 0140) and keeps
//! missing forms. This check reads the files where code-running
//! configuration lives ([`crate::protect::home_mention_places::PLACES`],
//! the user site's `.pth` and `*customize.py`, the user's crontab when
//! readable, and the home files these name, literally or by a pattern).
//! Each line is read twice: as text (quote characters dropped; `~`,
//! `$HOME`, `${HOME}`, `${HOME:-...}`, `$XDG_CONFIG_HOME` expanded) and as
//! bash expands its words ([`words::shell_words`]: quotes and backslashes
//! removed; a word with `*`, `?`, `[...]`, braces or an extglob group is a
//! pattern; an unknown variable or `$(...)` may stand for anything; the
//! "directory of this file" idioms name the file's directory). A path at
//! or inside a writable grant, or a pattern that can name one (or one of
//! its directories), is a mention ([`pattern::reaches`]); a grant is also
//! found by (device, inode) when the home names it under another path
//! (a bind mount). Lines known to run nothing are skipped
//! ([`formats`]: comments, git's `safe.directory`, an ssh key, a `cd`
//! alias, direnv's allow list). A grant found is read-only for the run
//! (`plan/trusted.rs` `demote`) unless the user trusts it
//! (`--trust-home-config-workspace`). Reading is bounded ([`MAX_FILES`],
//! [`MAX_BYTES`], [`MAX_FILE_BYTES`], [`MAX_ENTRIES`]); past a bound every
//! grant counts as mentioned, and the report says so.

mod formats;
mod head_cache;
mod path_places;
mod path_programs;
mod pattern;
mod read;
pub mod relative_path;
mod script_facts;
mod script_judge;
mod script_record;
mod walk;
pub mod words;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::canonical::CanonicalCache;
use crate::policy::dir_identity::{id_of, through_home_alias};
use crate::protect::home_mention_places::{
    LINKS_ONLY_PLACES, PLACES, SOURCED_WHOLE, SYSTEM_PLACES,
};
pub use path_places::Place;
use pattern::{ANY, Comp};
pub use words::normalise;

/// Where the records of earlier scans are kept, below the home (ADR 0290).
pub const SCAN_CACHE: &str = ".local/state/skarn/scan-cache";

/// Bytes of one record of earlier scans at most, by default (`[run]
/// scan_cache_max`).
pub const DEFAULT_SCAN_CACHE_MAX: u64 = 4 << 20;

static SCAN_CACHE_MAX: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_SCAN_CACHE_MAX);

/// Bound every record of earlier scans to `bytes` (0: keep none), for
/// the rest of the process (`[run] scan_cache_max`).
pub fn set_scan_cache_max(bytes: u64) {
    SCAN_CACHE_MAX.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// Bytes of one record of earlier scans at most.
pub fn scan_cache_max() -> usize {
    let n = SCAN_CACHE_MAX.load(std::sync::atomic::Ordering::Relaxed);
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Files read at most.
pub(crate) const MAX_FILES: usize = 3000;
/// Bytes read at most, all files together.
pub(crate) const MAX_BYTES: u64 = 32 << 20;
/// Bytes of one file; a larger text file counts as over the budget.
pub(crate) const MAX_FILE_BYTES: u64 = 2 << 20;
/// Directory entries looked at, all walks and patterns together.
pub const MAX_ENTRIES: usize = 40_000;
/// Levels of "a home file names another home file" followed; a deeper
/// chain counts as over the budget (attack atk22c F7).
const MAX_FOLLOW: usize = 8;
/// Paths resolved through links (each costs syscalls).
const MAX_RESOLVE: usize = 50_000;

/// One mention: `file` line `line` names `named`, at or inside `grant`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mention {
    /// The writable grant mentioned (as the policy names it).
    pub grant: PathBuf,
    /// The home file (as reached from the home).
    pub file: PathBuf,
    /// Line number (1-based); 0 when the file itself lies in the grant.
    pub line: usize,
    /// The path named, as normalised.
    pub named: String,
}

/// What [`scan`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mentions {
    /// At most one per grant (the first found), in grant order.
    pub found: Vec<Mention>,
    /// A bound hit: every grant counts as mentioned (why).
    pub over_budget: Option<String>,
    /// Files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Relative `PATH` entries the shell start-up files set (`.`,
    /// `./node_modules/.bin`), as written ([`relative_path`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relative_path: Vec<String>,
    /// Places inside writable grants that `PATH` scripts name, kept
    /// read-only instead of their grants ([`path_places`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
}

impl Mentions {
    /// Nothing found, no bound hit, no relative `PATH` entry.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
            && self.over_budget.is_none()
            && self.relative_path.is_empty()
            && self.places.is_empty()
    }
}

/// One grant's names: as the policy gives it, canonical, and through the
/// home's other names (a link, a bind mount).
struct Target {
    grant: PathBuf,
    forms: Vec<String>,
    canons: Vec<PathBuf>,
    id: Option<(u64, u64)>,
    /// Components of the home's depth for a grant in the home (patterns
    /// naming a directory of the grant deeper than this are mentions).
    floor: usize,
}

/// Look through the home `home` for the writable `grants`.
pub fn scan(home: &Path, grants: &[PathBuf]) -> Mentions {
    scan_with_path(home, grants, &[])
}

/// [`scan`], and the scripts of the `PATH` directories `path` (the
/// caller's, wherever they lie; atk22g F7).
pub fn scan_with_path(home: &Path, grants: &[PathBuf], path: &[PathBuf]) -> Mentions {
    scan_settled(home, grants, path, head_cache::SETTLE).0
}

/// [`scan_with_path`], keeping verdicts of files unchanged for `settle`;
/// and how many PATH program heads the record of earlier scans answered.
fn scan_settled(
    home: &Path,
    grants: &[PathBuf],
    path: &[PathBuf],
    settle: std::time::Duration,
) -> (Mentions, usize) {
    let home_real =
        crate::policy::link_facts::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let targets: Vec<Target> = grants
        .iter()
        // A grant that holds the home is mentioned by every home path:
        // such a workspace is protected like a home (ADR 0135) instead.
        // One that holds it under another name (a bind mount) stays: every
        // home file lies in it, so it is read-only for the run (fail
        // closed; the home's protections are placed by path).
        .filter(|g| !home.starts_with(g) && !home_real.starts_with(g))
        .map(|g| target(g, home, &home_real))
        .collect();
    let mut s = Scanner {
        home: home.to_path_buf(),
        home_text: home.display().to_string(),
        targets,
        out: Mentions::default(),
        seen: HashSet::new(),
        cache: CanonicalCache::following_dangling_links(),
        ids: HashMap::new(),
        globbed: HashSet::new(),
        entries: 0,
        resolved: 0,
        todo: Vec::new(),
        heads: None,
        script_hits: 0,
    };
    if s.targets.is_empty() || !home.is_absolute() {
        return (s.out, 0);
    }
    // The system's start-up files and kernel specs too (absolute: the
    // join keeps them as they are).
    for p in PLACES.iter().chain(SYSTEM_PLACES) {
        let at = home.join(p.path);
        if p.dir {
            let whole = at
                .file_name()
                .is_some_and(|n| SOURCED_WHOLE.contains(&n.to_string_lossy().as_ref()));
            let shell = formats::kind(Some(Path::new(p.path).join("x").as_path()), &at, b"")
                == formats::Kind::Shell;
            let packages = LINKS_ONLY_PLACES.contains(&p.path);
            s.walk(&at, 0, packages, whole, shell);
        } else {
            s.todo.push((at, 0));
        }
    }
    let (site, site_links) = walk::site_files(home);
    for f in site {
        s.todo.push((f, 0));
    }
    for l in site_links {
        s.place_is_inside(&l);
    }
    for f in walk::crontab_files() {
        s.todo.push((f, 0));
    }
    s.todo.reverse();
    while let Some((f, depth)) = s.todo.pop() {
        if s.out.over_budget.is_some() {
            break;
        }
        s.file(&f, depth);
    }
    let mut hits = 0;
    if s.out.over_budget.is_none() && !s.all_found() {
        s.heads = head_cache::HeadCache::open(home, grants, settle);
        s.path_programs(path);
        if let Some(c) = s.heads.take() {
            hits = c.hits;
            c.save();
        }
    }
    (s.out, hits)
}

fn target(g: &Path, home: &Path, home_real: &Path) -> Target {
    let canon = crate::policy::link_facts::canonicalize(g).unwrap_or_else(|_| g.to_path_buf());
    let mut canons = vec![canon.clone()];
    // The grant under the home's own name when it is reached through a
    // second name of the home (attack atk22c F5).
    if let Some(a) = through_home_alias(&canon, home) {
        canons.push(a.clone());
        if let Ok(rel) = a.strip_prefix(home) {
            canons.push(home_real.join(rel));
        }
    }
    let mut forms: Vec<String> = vec![lossy(g)];
    for c in canons.clone() {
        forms.push(lossy(&c));
        for (a, b) in [(home_real, home), (home, home_real)] {
            if let Ok(rel) = c.strip_prefix(a) {
                let p = b.join(rel);
                forms.push(lossy(&p));
                canons.push(p);
            }
        }
    }
    forms.sort();
    forms.dedup();
    canons.sort();
    canons.dedup();
    let floor = if canons
        .iter()
        .any(|c| c.starts_with(home_real) || c.starts_with(home))
    {
        home_real.components().count()
    } else {
        2
    };
    Target {
        grant: g.to_path_buf(),
        forms,
        canons,
        id: id_of(&canon),
        floor,
    }
}

/// Whether one line of the home file `file` can name `grant` (or a path
/// inside it) as bash expands its words, without reading the disk (no
/// links resolved, no files followed): the word reading of [`scan`], for
/// tests and fuzzing.
pub fn line_reaches(line: &str, home: &Path, file: &Path, grant: &Path) -> bool {
    let dirs: Vec<PathBuf> = file
        .parent()
        .into_iter()
        .map(Path::to_path_buf)
        .chain([home.to_path_buf()])
        .collect();
    let home_text = home.display().to_string();
    let mut lines = vec![(line.to_string(), 0usize)];
    while let Some((l, nest)) = lines.pop() {
        let mut inner = Vec::new();
        for w in words::shell_words(&l, &home_text, file, &dirs, &mut inner) {
            for alt in pattern::braces(&w) {
                let c = pattern::comps(&alt);
                let hit = match pattern::literal_path(&c) {
                    Some(p) => p.starts_with(grant),
                    None => pattern::reaches(&c, grant, home.components().count()),
                };
                if hit {
                    return true;
                }
            }
        }
        if nest < words::MAX_NEST {
            lines.extend(inner.into_iter().map(|t| (t, nest + 1)));
        }
    }
    false
}

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

struct Scanner {
    home: PathBuf,
    home_text: String,
    targets: Vec<Target>,
    out: Mentions,
    seen: HashSet<PathBuf>,
    cache: CanonicalCache,
    ids: HashMap<PathBuf, Option<(u64, u64)>>,
    globbed: HashSet<Vec<Comp>>,
    entries: usize,
    resolved: usize,
    todo: Vec<(PathBuf, usize)>,
    /// The record of earlier scans' PATH program heads (ADR 0290).
    heads: Option<head_cache::HeadCache>,
    /// PATH scripts whose words the record of earlier scans answered.
    script_hits: usize,
}

impl Scanner {
    fn over(&mut self, why: String) {
        self.out.over_budget.get_or_insert(why);
    }

    fn all_found(&self) -> bool {
        self.targets
            .iter()
            .all(|t| self.out.found.iter().any(|m| m.grant == t.grant))
    }

    fn found(&mut self, t: usize, file: &Path, line: usize, named: String) {
        // skarn's own configuration (`serve --config <ws>/skarn.toml`, the
        // entry `skarn init` writes into a client's settings, e.g.
        // `~/.codex/config.toml`): a persistence entry kept read-only in
        // every run at any depth, so naming it reaches nothing a command
        // can change (attack atk24m F17). Other words of the line are
        // still read.
        let bare = named.trim_end_matches([']', ',', ')', '}', ';', '"', '\'']);
        if !named.contains(ANY)
            && Path::new(bare)
                .file_name()
                .is_some_and(|n| n == "skarn.toml")
        {
            return;
        }
        let grant = self.targets[t].grant.clone();
        if !self.out.found.iter().any(|m| m.grant == grant) {
            self.out.found.push(Mention {
                grant,
                file: file.to_path_buf(),
                line,
                named: named.replace(ANY, "$?"),
            });
        }
    }
}

#[cfg(test)]
mod program_tests;
#[cfg(test)]
mod tests;
