//! Record files in skarn's own state (`~/.local/state/skarn/<place>`):
//! the one way the caches of earlier scans, checks and walks find their
//! directory, read a record and write it back (ADR 0317).
//!
//! A record only ever saves work: one that is missing, refused or cut is
//! no record, never an error. What a hostile or broken state can do is
//! bounded here, once for every user:
//!
//! - The directory is made private (0700, each level skarn makes) and
//!   used only when it is a directory, not a link, owned by the effective
//!   user and by the home's owner, closed to others (a wider mode left by
//!   an older skarn is narrowed), and does not lie (links resolved) in
//!   any of the run's writable grants. A missing home is never made.
//! - A record is opened without following a link and without blocking
//!   (a FIFO in its place), and read only when it is a regular file of
//!   the effective user, writable by no one else, with one link, and at
//!   most the caller's bound in size (a longer one is refused whole,
//!   never read in part).
//! - A record is written whole: a new private temporary file renamed over
//!   it, within the same bound.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// A checked directory of skarn's state.
#[derive(Debug)]
pub struct StateDir {
    dir: PathBuf,
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

impl StateDir {
    /// `home`/`place` (e.g. `.local/state/skarn/scan-cache`), made when
    /// missing; `None` when it is not safe to use (see the module's text)
    /// or lies inside one of `grants`.
    pub fn open(home: &Path, place: &str, grants: &[PathBuf]) -> Option<StateDir> {
        let home_md = std::fs::metadata(home).ok()?;
        if !home_md.is_dir() {
            return None; // a missing home is never created (atk22f)
        }
        let dir = home.join(place);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .ok()?;
        let md = std::fs::symlink_metadata(&dir).ok()?;
        let me = euid();
        if !md.is_dir() || md.uid() != me || home_md.uid() != me {
            return None;
        }
        if md.mode() & 0o077 != 0 {
            let p = std::fs::Permissions::from_mode(0o700);
            std::fs::set_permissions(&dir, p).ok()?;
        }
        let dir = std::fs::canonicalize(&dir).ok()?;
        let inside = |g: &PathBuf| {
            dir.starts_with(g) || std::fs::canonicalize(g).is_ok_and(|g| dir.starts_with(g))
        };
        if grants.iter().any(inside) {
            return None;
        }
        // The canonical path again: nothing was swapped in meanwhile.
        let md = std::fs::symlink_metadata(&dir).ok()?;
        if !md.is_dir() || md.uid() != me || md.mode() & 0o077 != 0 {
            return None;
        }
        Some(StateDir { dir })
    }

    /// The directory (links resolved).
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The record `name`, when it is safe to read and at most `max`
    /// bytes long.
    pub fn read(&self, name: &str, max: usize) -> Option<Vec<u8>> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(self.dir.join(name))
            .ok()?;
        let md = f.metadata().ok()?;
        if !md.file_type().is_file()
            || md.uid() != euid()
            || md.mode() & 0o022 != 0
            || md.nlink() != 1
            || md.len() > max as u64
        {
            return None;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(md.len()).ok()?);
        f.take(max as u64 + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() <= max).then_some(bytes)
    }

    /// Replace the record `name` by `bytes` (not when over `max`).
    pub fn write(&self, name: &str, bytes: &[u8], max: usize) -> bool {
        if bytes.len() > max {
            return false;
        }
        let Some(tmp) = self.temp(name, bytes) else {
            return false;
        };
        let done = std::fs::rename(&tmp, self.dir.join(name)).is_ok();
        if !done {
            let _ = std::fs::remove_file(&tmp);
        }
        done
    }

    /// The record `name` made once with `bytes`: when another process
    /// made it first, its content (`len` bytes exactly) is kept and read.
    pub fn read_or_create(&self, name: &str, bytes: &[u8]) -> Option<Vec<u8>> {
        let exact = |b: Vec<u8>| (b.len() == bytes.len()).then_some(b);
        if let Some(b) = self.read(name, bytes.len()).and_then(exact) {
            return Some(b);
        }
        let tmp = self.temp(name, bytes)?;
        let made = std::fs::hard_link(&tmp, self.dir.join(name)).is_ok();
        let _ = std::fs::remove_file(&tmp);
        if made {
            return Some(bytes.to_vec());
        }
        self.read(name, bytes.len()).and_then(exact)
    }

    /// A new private file beside `name` holding `bytes`.
    fn temp(&self, name: &str, bytes: &[u8]) -> Option<PathBuf> {
        let tmp = self.dir.join(format!("{name}.tmp{}", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .and_then(|mut f| f.write_all(bytes));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return None;
        }
        Some(tmp)
    }
}

/// The digest of every source file of this crate (build.rs): part of
/// every [`digest_name`], so a record worked out by another build is never
/// found, whichever module its answer came through (a hand-kept list of
/// the modules a record depends on missed some: atk30a F1).
pub const BUILD: &str = env!("SKARN_SANDBOX_SOURCES");

/// A record's name: the first `n` bytes of a digest of this build
/// ([`BUILD`]) and `parts`, in hex.
pub fn digest_name(parts: &[&[u8]], n: usize) -> String {
    let mut h = Sha256::new();
    h.update(BUILD.as_bytes());
    for p in parts {
        h.update(p);
    }
    h.finalize()
        .iter()
        .take(n)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A (seconds, nanoseconds) time.
pub type Time = (i64, i64);

/// The time `settle` before now: what changed at or after it is not kept
/// (a change in the same clock tick could leave the change time equal).
pub fn settled_before(settle: Duration) -> Time {
    let t = SystemTime::now()
        .checked_sub(settle)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    (
        i64::try_from(t.as_secs()).unwrap_or(0),
        i64::from(t.subsec_nanos()),
    )
}

/// A file's identity and what moves when its content changes: a content
/// cannot change without its change time moving, and no process can set
/// a change time (ADR 0230).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: Time,
    pub ctime: Time,
}

impl Stamp {
    /// Bytes of [`Stamp::put`].
    pub const LEN: usize = 48;

    /// The stamp of `md`.
    pub fn of(md: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: md.dev(),
            ino: md.ino(),
            size: md.len(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    }

    /// The (device, inode) identity.
    pub fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Whether both times are before `before`.
    pub fn settled(&self, before: Time) -> bool {
        self.mtime < before && self.ctime < before
    }

    /// Append the stamp's bytes to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        for n in [self.dev, self.ino, self.size] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for (sec, nsec) in [self.mtime, self.ctime] {
            out.extend_from_slice(&sec.to_le_bytes());
            out.extend_from_slice(&u32::try_from(nsec).unwrap_or(0).to_le_bytes());
        }
    }

    /// A stamp taken from `r`; `None` when it is cut.
    pub fn take(r: &mut Fields<'_>) -> Option<Stamp> {
        Some(Stamp {
            dev: r.u64()?,
            ino: r.u64()?,
            size: r.u64()?,
            mtime: (r.u64()? as i64, i64::from(r.u32()?)),
            ctime: (r.u64()? as i64, i64::from(r.u32()?)),
        })
    }
}

/// A record's bytes read in order; every taker is `None` past the end.
pub struct Fields<'a>(pub &'a [u8]);

impl<'a> Fields<'a> {
    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (h, t) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = t;
        Some(h)
    }

    /// The next little-endian `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    /// The next little-endian `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }

    /// Whether every byte was taken.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
#[path = "state_file_tests.rs"]
mod tests;
