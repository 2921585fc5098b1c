//! One bounded, breadth-first walk of the writable grants (host side).
//!
//! Before a run it finds what the run's protections must cover below the
//! grants' roots: nested repositories, files that host tools look up from
//! any directory (`rust-toolchain.toml`, `.hg`, ...: [`UPWARD`]) and
//! settings that agents, editors and shells read in any directory
//! (`sub/.claude`, `sub/.envrc`: [`crate::protect::persistence::any_depth`]), unix
//! sockets (a host server's: Landlock cannot stop `connect(2)`), and other
//! names of protected files (hard links, another mount of the same tree:
//! the same `(st_dev, st_ino)`, compared through the directory entry's
//! inode number, so without a `stat` per entry). After a run it finds the
//! repositories, [`UPWARD`] files and settings entries to vet.
//!
//! Directories are visited level by level, so a bound cuts off the deepest
//! ones, never a shallow one behind a large sibling. Dependency and build
//! trees ([`SKIPPED`]) and nested git directories are visited last and only
//! for sockets and other names (a repository planted there is reached only
//! by a user who enters it by hand); a bound reached there is said apart.

use std::collections::{HashMap, VecDeque};
use std::os::unix::fs::{DirEntryExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Directory names walked only for sockets and other names of protected
/// files (dependency and build trees, large and rebuilt by tools).
pub const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];

/// Names that host tools look for in the current directory and its
/// parents, so in any subdirectory (a shell prompt runs them on `cd`),
/// with the file inside that matters for a directory. The workspace root's
/// are [`crate::protect::persistence::ENTRIES`].
pub const UPWARD: &[(&str, &[&str], &str)] = &[
    (
        "rust-toolchain.toml",
        &[],
        "rustup runs the toolchain it names",
    ),
    ("rust-toolchain", &[], "rustup runs the toolchain it names"),
    (".bazeliskrc", &[], "bazelisk runs the bazel it names"),
    (".lfsconfig", &[], "git-lfs transfer agents (programs)"),
    ("mise.toml", &[], "mise hooks, tasks and env scripts"),
    (".mise.toml", &[], "mise hooks, tasks and env scripts"),
    ("mise.local.toml", &[], "mise hooks, tasks and env scripts"),
    (".mise.local.toml", &[], "mise hooks, tasks and env scripts"),
    (".tool-versions", &[], "mise/asdf tools (path: versions)"),
    (
        ".python-version",
        &[],
        "uv runs the interpreter it names (a path too), pyenv and rye the version",
    ),
    (
        ".python-versions",
        &[],
        "uv runs the interpreters it names (a path too)",
    ),
    (
        ".config",
        &["mise", "mise.toml"],
        "mise reads .config/mise.toml and .config/mise/ (hooks, tasks, env scripts)",
    ),
    (
        "mise",
        &["config.toml", "config.local.toml", "conf.d"],
        "mise reads mise/config.toml (hooks, tasks, env scripts)",
    ),
    (
        ".hg",
        &["hgrc", "hgrc-not-shared", "sharedpath"],
        "Mercurial hooks of any hg command there",
    ),
    (
        ".sl",
        &["config", "hgrc", "sharedpath"],
        "Sapling hooks of any sl command there",
    ),
    (
        ".jj",
        &["repo", "repo/config.toml"],
        "Jujutsu settings that run programs",
    ),
    (
        ".cargo",
        &["config.toml", "config"],
        "cargo runs the wrappers, runners and aliases it names (`cargo metadata` on open)",
    ),
    // A nested package's or build's (atk24k F2).
    (
        ".yarn",
        &["releases", "plugins"],
        "yarn runs the yarnPath release and plugins of the package it runs in",
    ),
    (
        "tools",
        &["bazel"],
        "bazel and bazelisk run a bazel workspace's tools/bazel for every command",
    ),
    (
        "gradle",
        &["wrapper"],
        "the Gradle distribution an IDE import of the build downloads and runs",
    ),
];

/// [`UPWARD`] directories that are configuration only as directories (a
/// file named `mise` or `tools` is none).
pub fn upward_dir_only(name: &str) -> bool {
    matches!(name, ".config" | "mise" | ".yarn" | "tools" | "gradle")
}

/// [`UPWARD`] names found at the roots too: the root's own are protected
/// by [`crate::protect::persistence::ENTRIES`] before the run, but files inside
/// them the run creates (`.hg/hgrc-not-shared`, `.cargo/config.toml`) are
/// set aside after it like the subdirectories'.
pub(crate) const UPWARD_AT_ROOT: &[&str] = &[".hg", ".sl", ".cargo", ".config", "mise"];

/// The entry of mise's per-environment files (`mise.<env>.toml`,
/// `.mise.<env>.local.toml`: read when `MISE_ENV` names `<env>`, which the
/// host's shell may set to anything later), matched by pattern.
const MISE_ENV_FILE: (&str, &[&str], &str) = (
    "mise.<env>.toml",
    &[],
    "mise reads mise.<env>.toml when MISE_ENV names it (hooks, tasks, env scripts)",
);

/// Whether `name` is one of mise's per-environment configuration files.
pub fn mise_env_file(name: &str) -> bool {
    let rest = name.strip_prefix('.').unwrap_or(name);
    rest.strip_prefix("mise.")
        .and_then(|r| r.strip_suffix(".toml"))
        .is_some_and(|mid| !mid.is_empty() && !mid.contains('/'))
}

/// The [`UPWARD`] entry for a directory entry named `name` (by pattern
/// for mise's per-environment files), if any.
pub fn upward_entry(
    name: &std::ffi::OsStr,
) -> Option<&'static (&'static str, &'static [&'static str], &'static str)> {
    let n = name.to_str()?;
    UPWARD
        .iter()
        .find(|(u, _, _)| *u == n)
        .or_else(|| mise_env_file(n).then_some(&MISE_ENV_FILE))
}

/// Whether an entry named `name` at a grant's root is an [`UPWARD`] one
/// to look at there too ([`UPWARD_AT_ROOT`], mise's per-environment
/// files).
pub fn upward_at_root(name: &std::ffi::OsStr) -> bool {
    UPWARD_AT_ROOT.iter().any(|n| name == *n) || name.to_str().is_some_and(mise_env_file)
}

/// Whether a missing `inner` file of an [`UPWARD`] directory is reserved
/// (a placeholder) before the run. Not hg's `sharedpath` (a placeholder
/// stops hg there) nor cargo's files (cargo fails on a placeholder
/// config): those are set aside after the run when made.
pub fn reserve_inner(dir: &str, inner: &str) -> bool {
    inner != "sharedpath"
        && !matches!(
            dir,
            ".cargo" | ".config" | "mise" | ".yarn" | "tools" | "gradle"
        )
}

/// How far one walk may go.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Directories read at most.
    pub dirs: usize,
    /// Time at most.
    pub time: Duration,
}

/// Inodes of protected places, looked for under other names.
#[derive(Debug, Default)]
pub struct Inodes {
    by_ino: HashMap<u64, Vec<(u64, usize)>>,
}

impl Inodes {
    /// Record `path`'s inode as number `idx` (with `follow`, of the place
    /// its links lead to; else nothing for a link).
    pub fn add(&mut self, path: &Path, idx: usize, follow: bool) {
        let m = if follow {
            std::fs::metadata(path)
        } else {
            std::fs::symlink_metadata(path)
        };
        if let Ok(m) = m
            && !m.file_type().is_symlink()
        {
            self.by_ino.entry(m.ino()).or_default().push((m.dev(), idx));
        }
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.by_ino.is_empty()
    }

    /// The recorded place `path` (whose entry gave inode `ino`) is, if any.
    fn hit(&self, ino: u64, path: &Path) -> Option<usize> {
        let cands = self.by_ino.get(&ino)?;
        let m = std::fs::symlink_metadata(path).ok()?;
        cands
            .iter()
            .find(|(dev, _)| *dev == m.dev() && m.ino() == ino)
            .map(|(_, i)| *i)
    }
}

/// Entries [`add_files_below`] looks at below the secret directories,
/// in all.
pub const MAX_BELOW_ENTRIES: usize = 50_000;
/// Levels [`add_files_below`] goes down in a secret directory.
const BELOW_LEVELS: usize = 8;
/// Levels and entries per directory looked at below the other places
/// (protected, not secret) and skarn's own state.
const SHALLOW: (usize, usize) = (3, 128);

/// skarn's own state (stores, records, servers' directories): written by
/// skarn and by the sandboxed side, never a place the user links a
/// credential from; looked at shallowly.
fn skarn_state(dir: &Path) -> bool {
    dir.ends_with(".local/state/skarn") || dir.ends_with(".local/state/skarn-servers")
}

/// Files below each directory of `places[from..]` (path, secret) that
/// have another name (a non-directory whose link count, links followed
/// as host programs follow them, is above one), added to `places`, so
/// that a hard link of one (`~/.aws/credentials` when `~/.aws` is
/// listed) is found too. A file with one link has no other name: only
/// those with more are recorded. A secret directory is looked at 8
/// levels down, [`MAX_BELOW_ENTRIES`] entries in all (a month of gcloud's
/// logs beside its `legacy_credentials` is a few hundred: attack atk22i
/// F3); the other places and skarn's own state 3 levels down, 128 entries
/// each. Returns false when the bound of the secret directories stopped
/// it (the caller says so).
pub fn add_files_below(places: &mut Vec<(PathBuf, bool)>, from: usize) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut seen = 0usize;
    let mut complete = true;
    let dirs: Vec<(PathBuf, bool)> = places[from..]
        .iter()
        .filter(|(p, _)| p.is_dir())
        .cloned()
        .collect();
    for (dir, secret) in dirs {
        let deep = secret && !skarn_state(&dir);
        let (levels, each_max) = if deep {
            (BELOW_LEVELS, usize::MAX)
        } else {
            SHALLOW
        };
        let mut each = 0usize;
        let mut stack = vec![(dir, 0usize)];
        'dir: while let Some((d, level)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                if each >= each_max {
                    break 'dir;
                }
                if deep && seen >= MAX_BELOW_ENTRIES {
                    complete = false;
                    break 'dir;
                }
                each += 1;
                if deep {
                    seen += 1;
                }
                let p = e.path();
                let link = e.file_type().is_ok_and(|t| t.is_symlink());
                let Ok(m) = std::fs::metadata(&p) else {
                    continue;
                };
                if m.is_dir() {
                    if level + 1 < levels && !link {
                        stack.push((p, level + 1));
                    }
                } else if m.nlink() > 1 {
                    places.push((p, secret));
                }
            }
        }
    }
    complete
}

/// What one walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// Nested `.git` entries and bare repositories (roots excluded, unless
    /// a root itself is a bare repository).
    pub repos: Vec<PathBuf>,
    /// [`UPWARD`] names below the roots (not at a root).
    pub upward: Vec<PathBuf>,
    /// Other entries below the roots that their programs read in any
    /// directory ([`crate::protect::persistence::any_depth`]: `sub/.claude`,
    /// `sub/.envrc`, ...): kept read-only like the roots' own.
    pub settings: Vec<PathBuf>,
    /// Environment files agents load at start, at any depth, the roots'
    /// own included ([`crate::protect::dotenv::FILES`]).
    pub env_files: Vec<PathBuf>,
    /// Unix sockets.
    pub sockets: Vec<PathBuf>,
    /// Python virtual environments (vetted by the venv guard).
    pub venvs: Vec<PathBuf>,
    /// `__pycache__` directories (vetted after a run by the pyc guard).
    pub pycache: Vec<PathBuf>,
    /// `*.pyc` files outside `__pycache__` (sourceless modules: set aside
    /// after a run by the pyc guard when the run made or changed them).
    pub pyc_files: Vec<PathBuf>,
    /// Directories below the roots the walk could not list (search-only:
    /// a socket or anything else inside is unknown): hidden by the caller.
    pub unlisted: Vec<PathBuf>,
    /// More than [`MAX_FOUND`] sockets: those past it are not listed.
    pub sockets_capped: bool,
    /// Entries that are a recorded inode under another name, with its number.
    pub aliases: Vec<(PathBuf, usize)>,
    /// The walk of the ordinary directories stopped at a bound.
    pub truncated: bool,
    /// The walk of [`SKIPPED`] trees and git directories stopped at a bound.
    pub truncated_late: bool,
    /// Which bound stopped the walk, when one did.
    pub stopped_by: Option<Stop>,
    /// More than [`MAX_FOUND`] directories could not be listed: those past
    /// it are not in [`Walk::unlisted`].
    pub unlisted_capped: bool,
    /// A directory vanished while the walk ran ([`unreadable`]).
    pub vanished: bool,
    /// Directories read.
    pub dirs: usize,
}

/// The bound that stopped a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// [`Bounds::dirs`] directories were read.
    Dirs,
    /// [`Bounds::time`] went by.
    Time,
    /// More than [`MAX_VETTED`] entries to vet were found.
    Vetted,
}

impl Walk {
    /// Whether something a host server's unix socket may lie in was not
    /// covered (a bound or a cap reached): the caller then makes no unix
    /// socket reachable (ADR 0204).
    pub fn sockets_uncovered(&self) -> bool {
        self.truncated
            || self.truncated_late
            || self.sockets_capped
            || self.unlisted_capped
            || self.vanished
    }
}

/// Sockets and aliases kept at most each.
pub(crate) const MAX_FOUND: usize = 4096;

/// Repositories, [`UPWARD`] names, settings entries and virtual
/// environments kept at most in all: no list is cut silently (attack
/// atk24c F1); past this the walk stops as at a bound ([`Walk::truncated`]).
pub(crate) const MAX_VETTED: usize = 1_000_000;

/// What the walk looks for in the [`SKIPPED`] trees and git directories,
/// which it visits last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Late {
    /// Not visited.
    No,
    /// Sockets and other names of protected files only (before a run:
    /// what is there is the user's, and large).
    SocketsOnly,
    /// Everything, as in the other directories (after a run: a repository
    /// or settings file made inside `target/` or `.venv/` is vetted like
    /// one made anywhere else, attack atk24c F7).
    All,
}

/// Walk `roots` within `bounds`. With `late`, the [`SKIPPED`] trees and git
/// directories are walked too (after the rest) for sockets and `inodes`.
pub fn walk(roots: &[PathBuf], bounds: Bounds, late: bool, inodes: &Inodes) -> Walk {
    let late = if late { Late::SocketsOnly } else { Late::No };
    walk_with(roots, bounds, late, inodes)
}

/// [`walk`] with the late trees visited as `late` says.
pub(crate) fn walk_with(roots: &[PathBuf], bounds: Bounds, late: Late, inodes: &Inodes) -> Walk {
    let deadline = Instant::now() + bounds.time;
    let mut w = Walk::default();
    // A grant inside an environment (its `lib`, its `site-packages`, atk22g
    // F2): that environment's start-up files inside the grant are vetted
    // as for one found below.
    for r in roots {
        if let Some(env) = enclosing_env(r)
            && !w.venvs.contains(&env)
        {
            w.venvs.push(env);
        }
    }
    let mut first: VecDeque<(PathBuf, bool)> = roots.iter().map(|r| (r.clone(), true)).collect();
    // (A late directory, and whether it is vetted like the others: the
    // dependency and build trees after a run; never a git directory,
    // whose own repository is the one being vetted.)
    let mut later: VecDeque<(PathBuf, bool)> = VecDeque::new();
    let over = |w: &Walk| {
        if w.dirs >= bounds.dirs {
            Some(Stop::Dirs)
        } else if w.vetted() > MAX_VETTED {
            Some(Stop::Vetted)
        } else if w.dirs.is_multiple_of(64) && Instant::now() > deadline {
            Some(Stop::Time)
        } else {
            None
        }
    };
    while let Some((dir, is_root)) = first.pop_front() {
        if let Some(stop) = over(&w) {
            w.truncated = true;
            w.stopped_by = Some(stop);
            return w;
        }
        w.dirs += 1;
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                if !is_root {
                    unreadable(&mut w, dir, &e);
                }
                continue;
            }
        };
        let entries: Vec<_> = rd.flatten().collect();
        let Some(subdirs) = classify(&mut w, &dir, entries, is_root, inodes) else {
            continue;
        };
        for (path, kind) in subdirs {
            match kind {
                Sub::Plain => first.push_back((path, false)),
                Sub::Late if late == Late::No => {}
                Sub::Late => later.push_back((path, late == Late::All)),
                Sub::Git if late == Late::No => {}
                Sub::Git => later.push_back((path, false)),
            }
        }
    }
    while let Some((dir, vet)) = later.pop_front() {
        if let Some(stop) = over(&w) {
            w.truncated_late = true;
            w.stopped_by = Some(stop);
            break;
        }
        w.dirs += 1;
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                unreadable(&mut w, dir, &e);
                continue;
            }
        };
        let entries: Vec<_> = rd.flatten().collect();
        if vet {
            if let Some(subdirs) = classify(&mut w, &dir, entries, false, inodes) {
                later.extend(
                    subdirs
                        .into_iter()
                        .map(|(p, k)| (p, !matches!(k, Sub::Git))),
                );
            }
            continue;
        }
        for e in entries {
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if !note(&mut w, &e, &ft, &path, inodes) && ft.is_dir() {
                later.push_back((path, false));
            }
        }
    }
    w.repos.sort();
    w
}

/// Record a directory the walk cannot list (past [`MAX_FOUND`], only
/// that there are more).
/// A directory that could not be listed: one that vanished while the walk
/// ran (renamed or removed, e.g. by another run in the same workspace)
/// makes the walk incomplete for sockets (a host server's socket in it
/// may now be elsewhere, attack atk24e F1); one that cannot be read is
/// hidden by name ([`unlisted`]).
fn unreadable(w: &mut Walk, dir: PathBuf, e: &std::io::Error) {
    if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) {
        w.vanished = true;
    } else {
        unlisted(w, dir);
    }
}

fn unlisted(w: &mut Walk, dir: PathBuf) {
    if w.unlisted.len() < MAX_FOUND {
        w.unlisted.push(dir);
    } else {
        w.unlisted_capped = true;
    }
}

/// Where a subdirectory is walked.
enum Sub {
    /// With the other directories, level by level.
    Plain,
    /// Last: a [`SKIPPED`] tree.
    Late,
    /// Last, for sockets and other names only: a git directory.
    Git,
}

/// Record what `dir`'s `entries` hold; the subdirectories to walk, or
/// `None` when `dir` is a bare repository (not walked further unless it
/// is a root).
fn classify(
    w: &mut Walk,
    dir: &Path,
    entries: Vec<std::fs::DirEntry>,
    is_root: bool,
    inodes: &Inodes,
) -> Option<Vec<(PathBuf, Sub)>> {
    // A bare repository (HEAD, objects, refs; or HEAD and a `commondir`):
    // host git uses it when run inside it. (A root too: with its `.git`
    // missing or spoiled, git takes it for one.)
    let has = |n: &str| entries.iter().any(|e| e.file_name() == n);
    // A virtual environment, or a conda prefix (conda, mamba, pixi's
    // `.pixi/envs/*`): its start-up files and activation scripts.
    let conda = entries
        .iter()
        .any(|e| e.file_name() == "conda-meta" && e.file_type().is_ok_and(|t| t.is_dir()));
    // (Its activation directories count as a marker too: atk22h F13.)
    if has("pyvenv.cfg") || conda || (has("etc") && is_conda_env(dir)) {
        w.venvs.push(dir.to_path_buf());
    }
    if has("HEAD") && ((has("objects") && has("refs")) || has("commondir")) {
        w.repos.push(dir.to_path_buf());
        if !is_root {
            return None;
        }
    }
    let mut subdirs = Vec::new();
    for e in entries {
        let name = e.file_name();
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if note(w, &e, &ft, &path, inodes) {
            continue;
        }
        if crate::protect::dotenv::is_env_file(&name) {
            w.env_files.push(path.clone());
        }
        let customize = crate::protect::py_startup::customize_module(&name);
        if customize || !is_root || upward_at_root(&name) {
            if upward_entry(&name).is_some() {
                w.upward.push(path.clone());
            } else if customize || crate::protect::persistence::any_depth_name(&name) {
                w.settings.push(path.clone());
            }
        }
        if name == ".git" {
            if !is_root {
                w.repos.push(path.clone());
            }
            if ft.is_dir() {
                subdirs.push((path, Sub::Git));
            }
        } else if !ft.is_dir()
            && is_compiled(&name)
            && dir.file_name().is_none_or(|d| d != "__pycache__")
        {
            w.pyc_files.push(path.clone());
        } else if ft.is_dir() {
            if SKIPPED.iter().any(|s| name == *s) {
                if name == "__pycache__" {
                    w.pycache.push(path.clone());
                }
                if is_python_env(&path) {
                    w.venvs.push(path.clone());
                }
                subdirs.push((path, Sub::Late));
            } else {
                subdirs.push((path, Sub::Plain));
            }
        }
    }
    Some(subdirs)
}

impl Walk {
    /// Entries found that their checks look at one by one.
    fn vetted(&self) -> usize {
        self.repos.len()
            + self.upward.len()
            + self.settings.len()
            + self.env_files.len()
            + self.venvs.len()
            + self.pycache.len()
            + self.pyc_files.len()
    }
}

/// Record a socket or an alias; true when the entry is an alias (not
/// walked into: the whole place is covered).
fn note(
    w: &mut Walk,
    e: &std::fs::DirEntry,
    ft: &std::fs::FileType,
    path: &Path,
    inodes: &Inodes,
) -> bool {
    if ft.is_socket() {
        if w.sockets.len() < MAX_FOUND {
            w.sockets.push(path.to_path_buf());
        } else {
            w.sockets_capped = true;
        }
        return false;
    }
    if inodes.is_empty() || ft.is_symlink() {
        return false;
    }
    if let Some(i) = inodes.hit(e.ino(), path) {
        if w.aliases.len() < MAX_FOUND {
            w.aliases.push((path.to_path_buf(), i));
        }
        return true;
    }
    false
}

/// Whether `p` was changed (created, written, renamed, chmod-ed) at or
/// after `since`: its status-change time, which no process can set.
pub fn changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return false;
    };
    let Ok(s) = since.duration_since(std::time::UNIX_EPOCH) else {
        return true;
    };
    let c = Duration::new(
        u64::try_from(m.ctime()).unwrap_or(0),
        u32::try_from(m.ctime_nsec()).unwrap_or(0),
    );
    c >= s
}

/// The Python environment (a `pyvenv.cfg` or `conda-meta` beside its
/// `lib`) a grant `root` lies strictly inside, looking up to 6 levels
/// (`<env>/lib/python3.X/site-packages/<pkg>/<sub>`).
pub fn enclosing_env(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .skip(1)
        .take(6)
        .find_map(|a| is_python_env(a).then(|| a.to_path_buf()))
}

/// Whether `dir` is a virtual environment (`pyvenv.cfg` in it).
pub fn is_venv(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("pyvenv.cfg")).is_ok_and(|m| m.is_file())
}

/// Whether `dir` is a conda prefix (a `conda-meta` directory in it): an
/// environment made by conda, mamba, micromamba or pixi, whose activation
/// (`conda activate`, `pixi shell`, `pixi run`) sources its
/// `etc/conda/activate.d` scripts in the host's shell. Its activation
/// directories count as a marker too: a run that removed `conda-meta`
/// would otherwise un-protect them for the next run, and a later one put
/// the marker back (attack atk22h F13).
pub fn is_conda_env(dir: &Path) -> bool {
    let is_dir = |p: &str| std::fs::symlink_metadata(dir.join(p)).is_ok_and(|m| m.is_dir());
    is_dir("conda-meta") || CONDA_ACTIVATION.iter().any(|a| is_dir(a))
}

/// A conda prefix's activation directories: sourced (`activate.d`,
/// `deactivate.d`) or exported (`env_vars.d`) into the host's shell.
pub const CONDA_ACTIVATION: &[&str] = &[
    "etc/conda/activate.d",
    "etc/conda/deactivate.d",
    "etc/conda/env_vars.d",
];

/// Whether `dir` is a Python environment of either kind ([`is_venv`],
/// [`is_conda_env`]).
pub fn is_python_env(dir: &Path) -> bool {
    is_venv(dir) || is_conda_env(dir)
}

/// Whether `name` is a compiled Python file (`*.pyc`, any case).
pub fn is_compiled(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().to_lowercase().ends_with(".pyc")
}

#[cfg(test)]
#[path = "grant_walk_tests.rs"]
mod tests;
