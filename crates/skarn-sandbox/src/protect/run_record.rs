//! Records of the runs in progress (ADR 0145), in skarn's state directory
//! (`~/.local/state/skarn/runs`, a place no run is granted):
//!
//! - `<id>.run`: the run's workspace and writable roots. The helper holds
//!   an exclusive `flock` on it from before the command starts until its
//!   check after the run is done; init (PID 1 of the run's PID namespace)
//!   holds it too, so the lock is free only once no sandboxed process of
//!   the run is alive. The file guard of `skarn hook` refuses to let the
//!   agent's own file tools write under the roots of a live run
//!   ([`live`]): a sandboxed command still running could swap a path for a
//!   link between the guard's check and the tool's write.
//! - `<id>.vet`: what the check after the run needs (the pending check).
//!   A run killed before its check (SIGKILL of `skarn run`) leaves both
//!   files with the lock free: the reaper, the next `skarn run` and the
//!   file guard run that check
//!   ([`crate::linux::helper::dead_runs::catch_up`]) and remove the record.
//!
//! Names in progress are `.tmp-<id>` (locked from creation; renamed into
//! place once written), so a reader never sees a record unlocked before
//! its writer holds it.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The record directory under a home.
pub const DIR: &str = ".local/state/skarn/runs";

/// Records looked at, at most, per scan.
pub(crate) const MAX_RECORDS: usize = 65_536;
/// A dead run's record this old is caught up by any caller (the default
/// of [`Retention::age`]).
pub const STALE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
/// Dead runs' records over other workspaces left in place, at most (the
/// default of [`Retention::count`]).
pub const KEEP_DEAD: usize = 64;

/// How long, and how many, records of dead runs over other workspaces
/// are left for their own workspace's next run (issue 30: every run
/// looked at each of them; a home had 1,400 from killed gateway servers).
/// Past either bound any run runs the record's pending check itself and
/// removes it: the check is the same wherever it runs; only its findings
/// wait in a `.found` file for that workspace's next run, as a reaper's
/// do, and go after the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Older than this: caught up by any run (`[run] state_keep`).
    pub age: std::time::Duration,
    /// More than this: the oldest caught up by any run.
    pub count: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            age: STALE,
            count: KEEP_DEAD,
        }
    }
}
/// Largest `.run` read.
pub(crate) const MAX_INFO: u64 = 1 << 20;
/// Largest `.vet` read (its file snapshots are at most 1 MiB each).
pub(crate) const MAX_VET: u64 = 256 << 20;

/// The record directory of `home`.
pub fn dir(home: &Path) -> PathBuf {
    home.join(DIR)
}

/// What a `.run` says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Info {
    /// The run's workspace.
    pub workspace: PathBuf,
    /// Where its sandboxed commands can write (workspace and write grants).
    pub roots: Vec<PathBuf>,
    /// The helper's PID (for messages only).
    pub pid: u32,
}

impl Info {
    /// `p` lies under one of the roots.
    pub fn covers(&self, p: &Path) -> bool {
        self.roots.iter().any(|r| p.starts_with(r))
    }

    /// One root of each lies in (or holds) the other's.
    pub fn overlaps(&self, roots: &[PathBuf]) -> bool {
        self.roots
            .iter()
            .any(|a| roots.iter().any(|b| a.starts_with(b) || b.starts_with(a)))
    }
}

/// A run's record, held (locked) while the run lives.
#[derive(Debug)]
pub struct Held {
    file: std::fs::File,
    run: PathBuf,
    vet: PathBuf,
}

/// The record's paths for a fresh random id: (`.run`, `.vet`).
pub(crate) fn new_paths(dir: &Path) -> (PathBuf, PathBuf) {
    let id = crate::protect::set_aside::random_suffix();
    (dir.join(format!("{id}.run")), dir.join(format!("{id}.vet")))
}

pub(crate) fn lock(f: &std::fs::File, how: libc::c_int) -> bool {
    // SAFETY: flock on an open descriptor we own.
    unsafe { libc::flock(f.as_raw_fd(), how | libc::LOCK_NB) == 0 }
}

/// Write `bytes` to `to` through a locked `.tmp-` name in `dir`; the open
/// (still locked) file.
pub(crate) fn write_locked(dir: &Path, to: &Path, bytes: &[u8]) -> std::io::Result<std::fs::File> {
    let tmp = dir.join(format!(
        ".tmp-{}",
        crate::protect::set_aside::random_suffix()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(&tmp)?;
    if !lock(&f, libc::LOCK_EX) {
        let _ = std::fs::remove_file(&tmp);
        return Err(std::io::Error::other("cannot lock a new record"));
    }
    let r = f.write_all(bytes).and_then(|()| std::fs::rename(&tmp, to));
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(f)
}

impl Held {
    /// Create and lock the record `run` (from [`new_paths`]) of a run in
    /// `workspace` writing under `roots`.
    pub fn start(run: &Path, vet: &Path, info: &Info) -> std::io::Result<Held> {
        let dir = run.parent().unwrap_or(Path::new("/"));
        // Never a home of its own making (HOME naming a missing directory).
        let home = dir.ancestors().nth(Path::new(DIR).components().count());
        if !home.is_some_and(Path::is_dir) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the home directory does not exist",
            ));
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let bytes = serde_json::to_vec(info).map_err(std::io::Error::other)?;
        let file = write_locked(dir, run, &bytes)?;
        Ok(Held {
            file,
            run: run.to_path_buf(),
            vet: vet.to_path_buf(),
        })
    }

    /// Record the pending check (before the command starts).
    pub fn pending(&self, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self.run.parent().unwrap_or(Path::new("/"));
        write_locked(dir, &self.vet, bytes).map(drop)
    }

    /// The raw descriptor holding the lock (a forked init keeps its copy).
    pub fn fd(&self) -> libc::c_int {
        self.file.as_raw_fd()
    }

    /// The `.run` path.
    pub fn path(&self) -> &Path {
        &self.run
    }

    /// The check after the run is done: the record goes.
    pub fn finish(self) {
        let _ = std::fs::remove_file(&self.vet);
        let _ = std::fs::remove_file(&self.run);
        drop(self.file);
    }
}

/// Open a record read-only, not following links, never blocking.
pub(crate) fn open(p: &Path) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
        .ok()?;
    f.metadata().ok()?.is_file().then_some(f)
}

pub(crate) fn read_bounded(f: &mut std::fs::File, max: u64) -> Option<Vec<u8>> {
    let mut b = Vec::new();
    f.take(max + 1).read_to_end(&mut b).ok()?;
    (b.len() as u64 <= max).then_some(b)
}

/// The `.run` records of `dir`.
pub(crate) fn records(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .take(MAX_RECORDS)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "run"))
        .collect()
}

/// The runs of `dir` still alive (their record locked).
pub fn live(dir: &Path) -> Vec<Info> {
    let mut out = Vec::new();
    for p in records(dir) {
        let Some(mut f) = open(&p) else { continue };
        if lock(&f, libc::LOCK_SH) {
            continue; // free: its run is over (a pending check at most)
        }
        if let Some(i) =
            read_bounded(&mut f, MAX_INFO).and_then(|b| serde_json::from_slice::<Info>(&b).ok())
        {
            out.push(i);
        }
    }
    out
}

/// When the earliest of the other live runs of `dir` whose roots overlap
/// `roots` started (its record's modification time, stamped by the file
/// system's clock), leaving out the record `own`. A file changed since
/// may be that run's (attack 24c F4): not taken for the user's.
pub fn live_since(
    dir: &Path,
    own: Option<&Path>,
    roots: &[PathBuf],
) -> Option<std::time::SystemTime> {
    live_since_except(dir, own, roots, &Default::default())
}

/// [`live_since`], not opening the records in `dead` (found dead by
/// [`catch_up_noting_dead`]: their runs are over for good).
pub(crate) fn live_since_except(
    dir: &Path,
    own: Option<&Path>,
    roots: &[PathBuf],
    dead: &std::collections::HashSet<PathBuf>,
) -> Option<std::time::SystemTime> {
    let mut first: Option<std::time::SystemTime> = None;
    for p in records(dir) {
        if Some(p.as_path()) == own || dead.contains(&p) {
            continue;
        }
        let Some(mut f) = open(&p) else { continue };
        if lock(&f, libc::LOCK_SH) {
            continue; // over
        }
        let Some(t) = f.metadata().and_then(|m| m.modified()).ok() else {
            continue;
        };
        let overlaps = read_bounded(&mut f, MAX_INFO)
            .and_then(|b| serde_json::from_slice::<Info>(&b).ok())
            // An unreadable record of a live run: taken as overlapping.
            .is_none_or(|i| i.overlaps(roots));
        if overlaps && first.is_none_or(|f| t < f) {
            first = Some(t);
        }
    }
    first
}
