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

use std::collections::VecDeque;
use std::os::unix::fs::{DirEntryExt, FileTypeExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod below;
mod classify;
mod envs;
mod names;

pub use below::{Below, Inodes, MAX_BELOW_ENTRIES, add_files_below, add_files_below_with};
use classify::{Sub, classify};
pub use envs::{
    CONDA_ACTIVATION, changed_since, enclosing_env, is_compiled, is_conda_env, is_python_env,
    is_venv,
};
pub use names::{
    SKIPPED, UPWARD, mise_env_file, reserve_inner, upward_at_root, upward_dir_only, upward_entry,
};

/// How far one walk may go.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Directories read at most.
    pub dirs: usize,
    /// Time at most.
    pub time: Duration,
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
    /// `*.pyc` files outside `__pycache__` (sourceless modules) and
    /// modules named like the standard library's in any form
    /// ([`crate::protect::stdlib_shadow::loose_candidate`]): set aside after a
    /// run by the pyc guard when the run made or changed them.
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

#[cfg(test)]
#[path = "grant_walk_tests.rs"]
mod tests;
