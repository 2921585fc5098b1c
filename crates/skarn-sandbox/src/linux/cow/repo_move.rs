//! A nested repository the run renamed (atk22k F17). overlayfs is
//! mounted with `redirect_dir` off, so `mv app app-old` of a directory
//! the workspace had is a copy then a removal: the layer holds a new
//! `app-old/.git` and a removal of `app`. A new repository that could run
//! programs on the host (a hook, say) is refused, so the copy's `.git`
//! was dropped while the removal of the original was applied: the
//! repository's history was lost.
//!
//! Removals of host trees holding a nested repository's git directory
//! are held back until the rest of the layer is applied ([`Moves::defer`]).
//! Then, for each git directory they hold: when one of the run's refused
//! new repositories is the same repository (same `HEAD`, `config`,
//! `packed-refs` and checked-out branch), the host's original git
//! directory is moved to the copy's place (the user's own bytes; what the
//! run changed in the copy is not kept, and said); when a refused new
//! repository is not the same, the removal is refused and the original
//! kept whole. With no refused new repository the removal is an ordinary
//! one (`rm -rf app`) and is applied.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use super::Outcome;
use super::apply::{open_dir, remove_tree};

/// Entries of one removed host tree looked through for git directories;
/// past it the tree counts as holding one (kept when a new repository
/// was refused).
const MAX_ENTRIES: usize = 20_000;
/// Levels of one removed host tree looked through.
const MAX_DEPTH: usize = 8;

/// One removal held back.
struct Held {
    /// The removed path, relative to the workspace.
    rel: PathBuf,
    /// The git directories it holds (relative to the workspace).
    repos: Vec<PathBuf>,
    /// The look through it stopped at a bound.
    cut: bool,
}

/// The run's refused new repositories and its held-back removals.
#[derive(Default)]
pub(super) struct Moves {
    /// Refused new repositories: the git directory's path relative to the
    /// workspace, and where the layer holds it.
    refused: Vec<(PathBuf, PathBuf)>,
    held: Vec<Held>,
}

impl Moves {
    /// Nothing held back.
    pub(super) fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// A new repository at `rel` (the layer's copy at `upper`) was
    /// refused.
    pub(super) fn refused_repo(&mut self, rel: &Path, upper: &Path) {
        self.refused.push((rel.to_path_buf(), upper.to_path_buf()));
    }

    /// Hold back the removal of the workspace's `rel` (already vetted)
    /// when it holds a nested repository's git directory; true when held.
    pub(super) fn defer(&mut self, ws: &Path, rel: &Path) -> bool {
        // The workspace's own repository is not a nested one.
        if rel == Path::new(".git") {
            return false;
        }
        let mut repos = Vec::new();
        let mut budget = MAX_ENTRIES;
        let cut = !git_dirs(ws, rel, 0, &mut budget, &mut repos);
        if repos.is_empty() && !cut {
            return false;
        }
        self.held.push(Held {
            rel: rel.to_path_buf(),
            repos,
            cut,
        });
        true
    }

    /// Apply (or refuse) the held-back removals, once the rest of the
    /// layer is in the workspace `ws` (`host` its directory).
    pub(super) fn finish(&mut self, ws: &Path, host: BorrowedFd<'_>, out: &mut Outcome) {
        for h in std::mem::take(&mut self.held) {
            let mut kept = Vec::new();
            for g in &h.repos {
                match self.same_repo(ws, g) {
                    Some(to) => match move_repo(ws, g, &to) {
                        Ok(()) => out.notes.push(format!(
                            "{}: the run moved this repository to {} and its copy there was \
                             refused, so the original git directory was moved there instead \
                             (what the run changed in the copy is not kept)",
                            g.display(),
                            to.display()
                        )),
                        Err(e) => kept.push(format!("{} (could not be moved: {e})", g.display())),
                    },
                    None if !self.refused.is_empty() => kept.push(g.display().to_string()),
                    None => {}
                }
            }
            if h.cut && !self.refused.is_empty() {
                kept.push(format!("what lies past {MAX_ENTRIES} entries of it"));
            }
            if !kept.is_empty() {
                let copies: Vec<String> = self
                    .refused
                    .iter()
                    .map(|(r, _)| r.display().to_string())
                    .collect();
                out.refused.push((
                    h.rel.display().to_string(),
                    format!(
                        "not removed: it holds the repository {} and the run's new repository \
                         ({}) was refused, so removing it would lose that history (a rename \
                         of a nested repository is refused; the original is kept)",
                        kept.join(", "),
                        copies.join(", ")
                    ),
                ));
                continue;
            }
            match remove_at(host, &h.rel) {
                Ok(()) => out.applied.push(format!("- {}", h.rel.display())),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => out.refused.push((
                    h.rel.display().to_string(),
                    format!("could not be removed: {e}"),
                )),
            }
        }
    }

    /// The refused new repository that is the host's git directory `g`,
    /// taken from the list (each copy takes one original).
    fn same_repo(&mut self, ws: &Path, g: &Path) -> Option<PathBuf> {
        let host = ws.join(g);
        let i = self
            .refused
            .iter()
            .position(|(_, upper)| same_repository(&host, upper))?;
        Some(self.refused.remove(i).0)
    }
}

/// The git directories in the workspace's `rel` (itself included), at
/// most [`MAX_DEPTH`] levels down; false when a bound stopped the look.
fn git_dirs(
    ws: &Path,
    rel: &Path,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<PathBuf>,
) -> bool {
    let p = ws.join(rel);
    let Ok(m) = std::fs::symlink_metadata(&p) else {
        return true;
    };
    if !m.is_dir() {
        return true;
    }
    if is_git_dir(&p) {
        out.push(rel.to_path_buf());
        return true;
    }
    if depth >= MAX_DEPTH {
        return false;
    }
    let Ok(rd) = std::fs::read_dir(&p) else {
        return true;
    };
    for e in rd.flatten() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if e.file_type().is_ok_and(|t| t.is_dir())
            && !git_dirs(ws, &rel.join(e.file_name()), depth + 1, budget, out)
        {
            return false;
        }
    }
    true
}

/// A git directory: `HEAD` and `objects` (or `commondir`).
fn is_git_dir(p: &Path) -> bool {
    let has = |n: &str| std::fs::symlink_metadata(p.join(n)).is_ok();
    has("HEAD") && (has("objects") || has("commondir"))
}

/// Whether the git directories `a` and `b` are the same repository in the
/// same state: `HEAD`, `config`, `packed-refs` and the branch `HEAD`
/// names hold the same bytes.
fn same_repository(a: &Path, b: &Path) -> bool {
    let read = |d: &Path, n: &str| std::fs::read(d.join(n)).ok();
    let Some(head) = read(a, "HEAD") else {
        return false;
    };
    let mut names = vec!["HEAD".to_string(), "config".into(), "packed-refs".into()];
    if let Some(r) = String::from_utf8_lossy(&head)
        .trim()
        .strip_prefix("ref: ")
        .filter(|r| r.starts_with("refs/") && !r.split('/').any(|c| c == ".." || c.is_empty()))
    {
        names.push(r.to_string());
    }
    names.iter().all(|n| read(a, n) == read(b, n))
}

/// Move the workspace's git directory `from` to `to` (both relative):
/// `to` must be missing and no component of either a link.
fn move_repo(ws: &Path, from: &Path, to: &Path) -> io::Result<()> {
    for rel in [from, to] {
        let mut p = ws.to_path_buf();
        let comps: Vec<_> = rel.components().collect();
        for (i, c) in comps.iter().enumerate() {
            p.push(c);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(io::Error::other(format!("{} is a link", p.display())));
                }
                Ok(_) if rel == to && i + 1 == comps.len() => {
                    return Err(io::Error::other(format!("{} exists", p.display())));
                }
                Ok(_) => {}
                Err(e) if rel == to && i + 1 == comps.len() => {
                    if e.kind() != io::ErrorKind::NotFound {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
    std::fs::rename(ws.join(from), ws.join(to))
}

/// Remove the workspace's `rel` (directory descriptors all the way, no
/// link followed).
fn remove_at(host: BorrowedFd<'_>, rel: &Path) -> io::Result<()> {
    let comps: Vec<&OsStr> = rel.iter().collect();
    let Some((name, dirs)) = comps.split_last() else {
        return Ok(());
    };
    let mut fd = None;
    for d in dirs {
        let at = fd
            .as_ref()
            .map_or(host, |f: &std::os::fd::OwnedFd| f.as_fd());
        fd = Some(open_dir(at, d)?);
    }
    let at = fd.as_ref().map_or(host, |f| f.as_fd());
    remove_tree(at, name, 0)
}

impl super::apply::Apply<'_> {
    /// The removals [`Moves::defer`] held back, once the rest of the layer
    /// is applied.
    pub(super) fn finish_moves(&mut self) {
        if self.moves.is_empty() {
            return;
        }
        let ws = self.rules.ws.clone();
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC;
        match rustix::fs::open(&ws, flags, rustix::fs::Mode::empty()) {
            Ok(host) => self.moves.finish(&ws, host.as_fd(), self.out),
            Err(e) => self.out.notes.push(format!(
                "removals of nested repositories were not applied: {} could not be opened ({e})",
                ws.display()
            )),
        }
    }
}
