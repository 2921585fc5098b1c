//! Applying a layer: a walk of the upper directory only (what the run
//! wrote), each entry vetted ([`super::vet`]) and, when allowed, moved
//! into the workspace by `renameat(2)` between directory descriptors
//! opened without following links (a copy when the layer lies on another
//! file system). Nothing is ever written through a link: a link in the
//! layer is moved as a link, a workspace entry in the way is removed.

use std::ffi::{CStr, OsStr};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, ResolveFlags};

use super::Outcome;
use super::vet::{self, Change, Rules};

/// Why a change is not applied over an entry the host changed meanwhile.
const HOST_CHANGED: &str = "changed on the host during the run: the host's version is kept";

/// Deepest directory applied (a deeper one is refused whole).
const MAX_DEPTH: usize = 512;

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Overlayfs's own attributes, never carried into the workspace.
const OVL_XATTRS: &[&str] = &[
    "user.overlay.origin",
    "user.overlay.impure",
    "user.overlay.opaque",
    "trusted.overlay.origin",
    "trusted.overlay.impure",
    "trusted.overlay.opaque",
];

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

/// Open the directory `name` of `at`: never through a link, never onto
/// another mount (a host mount inside the workspace is not the
/// workspace's).
pub(super) fn open_dir(at: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    let how = ResolveFlags::NO_XDEV | ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH;
    match rustix::fs::openat2(at, name, DIR_FLAGS, Mode::empty(), how) {
        Err(rustix::io::Errno::NOSYS) => {
            let fd = rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty())?;
            let (a, b) = (rustix::fs::fstat(at)?, rustix::fs::fstat(&fd)?);
            if a.st_dev != b.st_dev {
                return Err(io::Error::from_raw_os_error(libc::EXDEV));
            }
            Ok(fd)
        }
        r => Ok(r?),
    }
}

/// Whether the directory `d` is a git directory (a `.git`, a bare
/// repository, a submodule's or worktree's git directory).
fn is_git_dir(d: BorrowedFd<'_>) -> bool {
    let has = |n: &str| lstat_at(d, OsStr::new(n)).is_some();
    has("HEAD") && (has("objects") || has("commondir"))
}

/// Whether the merged view of `upper` over `host` (what host git sees
/// once the layer is applied) is a git directory: an entry counts if the
/// layer has it (not a whiteout), or the host has it and the layer
/// neither whites it out nor hides the host's directory (opaque). Asked
/// of each side alone, a repository put together over two runs (`objects`
/// in the first, `HEAD` in the second) was neither (attack atk22h F7).
fn is_git_dir_merged(upper: BorrowedFd<'_>, host: Option<BorrowedFd<'_>>) -> bool {
    let opaque = is_opaque(upper);
    let has = |n: &str| match lstat_at(upper, OsStr::new(n)) {
        Some(st) => !is_whiteout(&st),
        None => !opaque && host.is_some_and(|h| lstat_at(h, OsStr::new(n)).is_some()),
    };
    has("HEAD") && (has("objects") || has("commondir"))
}

/// Whether `st` was changed at or after `since` (seconds, nanoseconds).
pub(super) fn changed_since(st: &rustix::fs::Stat, since: (i64, i64)) -> bool {
    // (`st_ctime` is an i64 on every 64-bit Linux target.)
    #[allow(clippy::useless_conversion)]
    let sec = i64::try_from(st.st_ctime).unwrap_or(i64::MAX);
    let nsec = i64::try_from(st.st_ctime_nsec).unwrap_or(0);
    (sec, nsec) >= since
}

pub(super) fn lstat_at(at: BorrowedFd<'_>, name: &OsStr) -> Option<rustix::fs::Stat> {
    rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW).ok()
}

pub(super) fn is_whiteout(st: &rustix::fs::Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice && st.st_rdev == 0
}

pub(super) fn is_opaque(dir: BorrowedFd<'_>) -> bool {
    let mut b = [0u8; 4];
    ["user.overlay.opaque", "trusted.overlay.opaque"]
        .iter()
        .any(|n| matches!(rustix::fs::fgetxattr(dir, *n, &mut b), Ok(1) if b[0] == b'y'))
}

/// The names in a directory (without `.` and `..`).
pub(super) fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<std::ffi::OsString>> {
    let fd = rustix::fs::openat(dir, c".", DIR_FLAGS, Mode::empty())?;
    let mut d = rustix::fs::Dir::new(fd)?;
    let mut out = Vec::new();
    while let Some(e) = d.read() {
        let e = e?;
        let n: &CStr = e.file_name();
        if n != c"." && n != c".." {
            out.push(OsStr::from_bytes(n.to_bytes()).to_owned());
        }
    }
    out.sort();
    Ok(out)
}

/// Remove the entry `name` of `dir` and, for a directory, all it holds,
/// without following links.
pub(super) fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    if depth > MAX_DEPTH {
        return Err(io::Error::other("too deep"));
    }
    let sub = open_dir(dir, name)?;
    for n in list(sub.as_fd())? {
        remove_tree(sub.as_fd(), &n, depth + 1)?;
    }
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
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
                remove_tree(host, n, 0).and_then(|()| self.put(upper, host, n, &st))
            } else {
                self.put(upper, host, n, &st)
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
            return self.adopt(host, n, there.is_some() && !host_dir);
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
                "would turn an existing directory into a git repository (host git would read                  its configuration and hooks)"
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
        let mode = Mode::from_raw_mode(st.st_mode & 0o7777);
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
        if !host_dir || there.is_some_and(|t| t.st_mode & 0o7777 != st.st_mode & 0o7777) {
            let _ = rustix::fs::fchmod(&hsub, mode);
        }
        self.dir(usub.as_fd(), hsub.as_fd(), r, opaque, depth + 1, git)
    }

    fn adopt(&mut self, host: BorrowedFd<'_>, n: &OsStr, replace: bool) -> io::Result<()> {
        let ws = &self.rules.ws;
        if replace {
            self.refuse(
                Path::new(n),
                "a .git in place of the workspace's .git link".into(),
            );
            return Ok(());
        }
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
    ) -> io::Result<()> {
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

fn strip_xattrs(host: BorrowedFd<'_>, n: &OsStr, st: &rustix::fs::Stat) {
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return;
    }
    if let Ok(fd) = rustix::fs::openat(
        host,
        n,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        // (By /proc: an O_PATH descriptor takes no xattr calls.)
        let p = PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&fd)
        ));
        for x in OVL_XATTRS {
            let _ = rustix::fs::removexattr(&p, *x);
        }
    }
}

/// Give the workspace entry `fd` the owner and group of the layer's entry
/// `st`, as a rename does (a copy or a directory made by the helper would
/// be the helper's): root writing a workspace of another owner through the
/// mapped layer makes the owner's files (ADR 0226). An unprivileged helper
/// cannot and need not (the layer's entries are its own).
fn own_like(fd: BorrowedFd<'_>, st: &rustix::fs::Stat) {
    let _ = rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(st.st_uid)),
        Some(rustix::fs::Gid::from_raw(st.st_gid)),
    );
}

/// [`own_like`] for the entry `n` of `dir`, never through a link.
fn own_at(dir: BorrowedFd<'_>, n: &OsStr, st: &rustix::fs::Stat) {
    let _ = rustix::fs::chownat(
        dir,
        n,
        Some(rustix::fs::Uid::from_raw(st.st_uid)),
        Some(rustix::fs::Gid::from_raw(st.st_gid)),
        AtFlags::SYMLINK_NOFOLLOW,
    );
}

/// Copy `n` from `upper` into `host` under a temporary name, then rename it
/// over the workspace's entry.
fn copy(
    upper: BorrowedFd<'_>,
    host: BorrowedFd<'_>,
    n: &OsStr,
    st: &rustix::fs::Stat,
) -> io::Result<()> {
    let mut tmp = OsStr::new(".skarn-apply-").to_owned();
    let mut b = [0u8; 6];
    let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
    tmp.push(b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    let mode = Mode::from_raw_mode(st.st_mode & 0o7777);
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            let src = rustix::fs::openat(
                upper,
                n,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let dst = rustix::fs::openat(
                host,
                &tmp,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                mode,
            )?;
            own_like(dst.as_fd(), st);
            let (mut s, mut d) = (std::fs::File::from(src), std::fs::File::from(dst));
            if let Err(e) = io::copy(&mut s, &mut d).and_then(|_| {
                d.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode.bits()))
            }) {
                let _ = rustix::fs::unlinkat(host, &tmp, AtFlags::empty());
                return Err(e);
            }
        }
        FileType::Symlink => {
            let t = rustix::fs::readlinkat(upper, n, Vec::new())?;
            rustix::fs::symlinkat(t.as_c_str(), host, &tmp)?;
            own_at(host, &tmp, st);
        }
        FileType::Fifo => {
            rustix::fs::mknodat(host, &tmp, FileType::Fifo, mode, 0)?;
            own_at(host, &tmp, st);
        }
        _ => return Ok(()), // sockets and devices: not carried over
    }
    rustix::fs::renameat_with(host, &tmp, host, n, RenameFlags::empty()).inspect_err(|_| {
        let _ = rustix::fs::unlinkat(host, &tmp, AtFlags::empty());
    })?;
    Ok(())
}
