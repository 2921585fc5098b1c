//! Applying a layer: a walk of the upper directory only (what the run
//! wrote), each entry vetted ([`super::vet`]) and, when allowed, moved
//! into the workspace by `renameat(2)` between directory descriptors
//! opened without following links (a copy when the layer lies on another
//! file system). Nothing is ever written through a link: a link in the
//! layer is moved as a link, a workspace entry in the way is removed.

mod at;
mod copy;
mod modes;

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{FileType, Mode};

pub(super) use at::{changed_since, is_opaque, is_whiteout, list, lstat_at, open_dir, remove_tree};
use at::{is_git_dir, is_git_dir_merged};
use copy::{copy, own_like, strip_xattrs};

use super::Outcome;
use super::vet::{self, Change, Rules};

/// Why a change is not applied over an entry the host changed meanwhile.
const HOST_CHANGED: &str = "changed on the host during the run: the host's version is kept";

/// Deepest directory applied (a deeper one is refused whole).
const MAX_DEPTH: usize = 512;

pub(super) struct Apply<'a> {
    pub(super) rules: &'a Rules,
    /// When the run started: a workspace entry changed since is the
    /// host's, kept over the run's.
    pub(super) since: (i64, i64),
    pub(super) upper_root: &'a Path,
    pub(super) same_fs: bool,
    /// The run's removals under `.git/objects` are not applied (a pack
    /// of the run was set aside, ADR 0257).
    pub(super) keep_objects: Vec<std::path::PathBuf>,
    pub(super) out: &'a mut Outcome,
    /// Renamed nested repositories ([`super::repo_move`]).
    pub(super) moves: super::repo_move::Moves,
}

impl Apply<'_> {
    fn refuse(&mut self, rel: &Path, why: String) {
        self.out.refused.push((rel.display().to_string(), why));
    }

    /// Apply the directory `rel` of the layer (`upper`) onto the
    /// workspace's (`host`); `opaque`: the run replaced it, so host
    /// entries it does not hold are removed.
    pub(super) fn dir(
        &mut self,
        upper: BorrowedFd<'_>,
        host: BorrowedFd<'_>,
        rel: &Path,
        opaque: bool,
        depth: usize,
        git: Option<usize>,
    ) -> io::Result<()> {
        let names = list(upper)?;
        if opaque {
            for n in list(host)? {
                if !names.contains(&n) {
                    self.delete(host, rel, &n);
                }
            }
        }
        for n in &names {
            let r = rel.join(n);
            let Some(st) = lstat_at(upper, n) else {
                continue;
            };
            if is_whiteout(&st) {
                self.delete(host, rel, n);
                continue;
            }
            let there = lstat_at(host, n);
            let upath = self.upper_root.join(&r);
            let plain = matches!(
                FileType::from_raw_mode(st.st_mode),
                FileType::RegularFile | FileType::Directory
            );
            if plain && vet::git_rebuilt_index(&r, git) {
                // A cache git rebuilds from the objects: left out, and
                // nothing to say (a link there is refused below, and said).
                continue;
            }
            if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                self.subdir(upper, host, n, &r, there, &st, depth, git);
                continue;
            }
            let what = match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Change::File,
                FileType::CharacterDevice | FileType::BlockDevice => {
                    self.refuse(&r, "a device node".into());
                    continue;
                }
                // A host program that opens the name (an editor, an
                // agent's file read, `npm install` reading its lockfile)
                // blocks forever on a FIFO and fails on a socket; the
                // git sweep refuses them in git directories the same
                // (attack atk22h F37).
                FileType::Fifo | FileType::Socket => {
                    self.refuse(
                        &r,
                        "a FIFO or socket (host programs opening it would hang)".into(),
                    );
                    continue;
                }
                _ => Change::Special,
            };
            if what == Change::File && vet::git_config_file(&r, git) {
                // Dangerous items are dropped (one line each), the rest
                // applied; a file that does not parse is refused below.
                if let Ok(dropped) =
                    vet::sanitize_config(self.rules, &upath, &self.rules.ws.join(&r))
                {
                    self.out
                        .notes
                        .extend(dropped.into_iter().map(|d| format!("{}: {d}", r.display())));
                }
            }
            let in_git = git.is_some() || r.components().any(|c| c.as_os_str() == ".git");
            if what == Change::File && in_git && n == "packed-refs" {
                let host_path = self.rules.ws.join(&r);
                if let Some(d) = vet::sanitize_packed_refs(&upath, &host_path) {
                    self.out.notes.push(format!("{}: {d}", r.display()));
                }
            }
            if let Err(why) = vet::check(self.rules, &r, what, &upath, there.is_some(), git) {
                self.refuse(&r, why);
                continue;
            }
            if what == Change::File && in_git && super::index::is_index(&r) {
                match super::index::vet_index(self.rules, &r, &upath, self.since) {
                    Ok(notes) => self
                        .out
                        .notes
                        .extend(notes.into_iter().map(|d| format!("{}: {d}", r.display()))),
                    Err(why) => {
                        self.refuse(&r, why);
                        continue;
                    }
                }
            }
            if there.is_some_and(|t| changed_since(&t, self.since)) {
                self.refuse(&r, HOST_CHANGED.into());
                continue;
            }
            let done = if there
                .is_some_and(|t| FileType::from_raw_mode(t.st_mode) == FileType::Directory)
            {
                remove_tree(host, n, 0).and_then(|()| self.put(upper, host, n, &st, there.as_ref()))
            } else {
                self.put(upper, host, n, &st, there.as_ref())
            };
            match done {
                Ok(()) => self.out.applied.push(format!("+ {}", r.display())),
                Err(e) => self.refuse(&r, format!("could not be applied: {e}")),
            }
        }
        Ok(())
    }

    fn delete(&mut self, host: BorrowedFd<'_>, rel: &Path, n: &OsStr) {
        let r = rel.join(n);
        let Some(there) = lstat_at(host, n) else {
            return;
        };
        if self.keep_objects.iter().any(|k| r.starts_with(k)) {
            const KEPT: &str = "the objects the run removed from a git objects directory were kept";
            if !self.out.notes.iter().any(|n| n.starts_with(KEPT)) {
                self.out.notes.push(format!(
                    "{KEPT}: a pack the run made was set aside, and the old packs hold the \
                     repository's history"
                ));
            }
            return;
        }
        if changed_since(&there, self.since) {
            self.refuse(&r, HOST_CHANGED.into());
            return;
        }
        match vet::check(
            self.rules,
            &r,
            Change::Delete,
            &self.upper_root.join(&r),
            true,
            None,
        ) {
            Err(why) => self.refuse(&r, why),
            // A nested repository's git directory: held back until the
            // run's new repositories are known (a rename, atk22k F17).
            Ok(()) if self.moves.defer(&self.rules.ws, &r) => {}
            Ok(()) => match remove_tree(host, n, 0) {
                Ok(()) => self.out.applied.push(format!("- {}", r.display())),
                Err(e) => self.refuse(&r, format!("could not be removed: {e}")),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn subdir(
        &mut self,
        upper: BorrowedFd<'_>,
        host: BorrowedFd<'_>,
        n: &OsStr,
        r: &Path,
        there: Option<rustix::fs::Stat>,
        st: &rustix::fs::Stat,
        depth: usize,
        git: Option<usize>,
    ) {
        if let Err(e) = self.subdir_inner(upper, host, n, r, there, st, depth, git) {
            self.refuse(r, format!("could not be applied: {e}"));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn subdir_inner(
        &mut self,
        upper: BorrowedFd<'_>,
        host: BorrowedFd<'_>,
        n: &OsStr,
        r: &Path,
        there: Option<rustix::fs::Stat>,
        st: &rustix::fs::Stat,
        depth: usize,
        git: Option<usize>,
    ) -> io::Result<()> {
        let host_dir =
            there.is_some_and(|t| FileType::from_raw_mode(t.st_mode) == FileType::Directory);
        let upath = self.upper_root.join(r);
        if depth == 0
            && n == ".git"
            && (!host_dir || crate::linux::staging::is_unborn(&self.rules.ws.join(n)))
        {
            // A repository made in the run: vetted and moved in as a
            // staged one is (ADR 0044).
            return self.adopt(upper, host, n, st, there.is_some() && !host_dir);
        }
        if depth >= MAX_DEPTH {
            self.refuse(r, "too deep".into());
            return Ok(());
        }
        if let Err(why) = vet::check(self.rules, r, Change::Dir, &upath, host_dir, git) {
            self.refuse(r, why);
            return Ok(());
        }
        let usub = open_dir(upper, n)?;
        let hsub_there = if host_dir {
            Some(open_dir(host, n)?)
        } else {
            None
        };
        let host_git = hsub_there.as_ref().is_some_and(|h| is_git_dir(h.as_fd()));
        let merged_git = is_git_dir_merged(usub.as_fd(), hsub_there.as_ref().map(|h| h.as_fd()));
        if n != ".git" && hsub_there.is_some() && merged_git && !host_git {
            // Entries of earlier runs would become a repository's (its
            // config, hooks, objects) without ever being vetted as such.
            self.refuse(
                r,
                "would turn an existing directory into a git repository (host git would read its configuration and hooks)"
                    .into(),
            );
            return Ok(());
        }
        let is_git = n == ".git" || merged_git || is_git_dir(usub.as_fd()) || host_git;
        // A linked worktree's git directory (`.git/worktrees/<name>`): its
        // entries are vetted one by one (`commondir` must be `../..`).
        let comps: Vec<&OsStr> = r.iter().collect();
        let worktree_dir = comps.len() >= 3
            && comps[comps.len() - 2] == "worktrees"
            && comps[comps.len() - 3] == ".git";
        if is_git && hsub_there.is_none() && !worktree_dir {
            // A repository made in the run, below the top: kept only if
            // nothing in it could run programs on the host.
            if let Some(why) =
                crate::protect::git::repo_vet::unsafe_repo_at(&upath, Some(r.components().count()))
            {
                self.moves.refused_repo(r, &upath);
                self.refuse(
                    r,
                    format!("a repository that could run programs on the host ({why})"),
                );
                return Ok(());
            }
        }
        let git = if is_git && !worktree_dir {
            Some(r.components().count() - 1)
        } else {
            git
        };
        let opaque = host_dir && is_opaque(usub.as_fd());
        if there.is_some() && !host_dir {
            if there.is_some_and(|t| changed_since(&t, self.since)) {
                self.refuse(r, HOST_CHANGED.into());
                return Ok(());
            }
            remove_tree(host, n, 0)?;
        }
        // (Group and other write and set-ID bits only where the host's
        // directory had them: see [`modes`].)
        let m = modes::allowed(st.st_mode, there.filter(|_| host_dir).map(|t| t.st_mode));
        let mode = Mode::from_raw_mode(m);
        let hsub = match hsub_there {
            Some(h) => h,
            None => {
                rustix::fs::mkdirat(host, n, mode)?;
                self.out.applied.push(format!("+ {}/", r.display()));
                let h = open_dir(host, n)?;
                own_like(h.as_fd(), st);
                h
            }
        };
        if !host_dir || there.is_some_and(|t| t.st_mode & 0o7777 != m) {
            let _ = rustix::fs::fchmod(&hsub, mode);
        }
        self.dir(usub.as_fd(), hsub.as_fd(), r, opaque, depth + 1, git)
    }

    fn adopt(
        &mut self,
        upper: BorrowedFd<'_>,
        host: BorrowedFd<'_>,
        n: &OsStr,
        st: &rustix::fs::Stat,
        replace: bool,
    ) -> io::Result<()> {
        let ws = &self.rules.ws;
        if replace {
            self.refuse(
                Path::new(n),
                "a .git in place of the workspace's .git link".into(),
            );
            return Ok(());
        }
        // Every entry of the new repository is a new entry (see [`modes`]).
        modes::narrow_in_layer(upper, n, st, None)?;
        modes::narrow_new_tree(open_dir(upper, n)?.as_fd(), 0)?;
        match rustix::fs::mkdirat(host, n, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let staged = self.upper_root.join(n);
        match crate::linux::staging::finalize(ws, &staged, true) {
            Some(msg) => self.out.notes.push(msg),
            None => self.out.applied.push("+ .git (new repository)".into()),
        }
        Ok(())
    }

    /// Move (or copy) the non-directory `n` of `upper` over `host`'s.
    fn put(
        &mut self,
        upper: BorrowedFd<'_>,
        host: BorrowedFd<'_>,
        n: &OsStr,
        st: &rustix::fs::Stat,
        there: Option<&rustix::fs::Stat>,
    ) -> io::Result<()> {
        // (Group and other write and set-ID bits only where the host's
        // entry had them: see [`modes`].)
        let st = &modes::narrow_in_layer(upper, n, st, there)?;
        if self.same_fs {
            match rustix::fs::renameat(upper, n, host, n) {
                Ok(()) => {
                    strip_xattrs(host, n, st);
                    return Ok(());
                }
                Err(rustix::io::Errno::XDEV) => self.same_fs = false,
                Err(e) => return Err(e.into()),
            }
        }
        copy(upper, host, n, st)
    }
}
