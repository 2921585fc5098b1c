//! Which programs of the `PATH` directories earlier scans found to be no
//! script (ADR 0290), so a run reads the head of only what changed.
//!
//! [`super::path_programs`] opens every program of every `PATH` directory
//! to tell a script from a binary: about 1,100 files and four system
//! calls each per run here (issue 30). A file's content cannot change
//! without its change time (`ctime`) moving, and no process can set
//! `ctime`, so a file seen to be no script keeps that verdict while its
//! device, inode, size, modification and change times are all the same
//! (the rule of the secret-value checks' cache, ADR 0230).
//!
//! - Only "no script" verdicts are kept, with the bytes the look counted
//!   against the scan's budget (added again on a hit: the budget, so the
//!   answer, is the same with or without the cache). A script is read
//!   every time (what it names decides the answer, and depends on the
//!   grants). An unreadable file is asked again next time.
//! - A file changed within [`SETTLE`] of the look is not kept (a change in
//!   the same clock tick could leave `ctime` equal).
//! - A hit only skips a read whose answer is known: a stale or planted
//!   record can make a script be read as no script only if its stamps
//!   equal a binary's, which needs the same inode unchanged. The place is
//!   `~/.local/state/skarn/scan-cache`, under skarn's state, hidden in
//!   every run (a default secret path, also when the workspace is the
//!   home), and not used when it lies (links resolved) in a writable
//!   grant, is not the caller's, or is writable by others.
//! - The record is versioned by a digest of the scan's source: another
//!   build's verdicts are not read. At most [`MAX_KEPT`] records; a file
//!   that cannot be read is an empty cache, never an error.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Where the verdicts are kept, below the user's home.
pub const DIR: &str = super::SCAN_CACHE;

/// How long a file must have been unchanged before its verdict is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Most records kept (56 bytes each): the PATH scan's own entry bound.
pub const MAX_KEPT: usize = super::path_programs::MAX_PATH_ENTRIES;

const RECORD: usize = 56;

type Id = (u64, u64);

/// Size, modification and change times.
type Stamp = (u64, (i64, i64), (i64, i64));

fn stamp(md: &std::fs::Metadata) -> (Id, Stamp) {
    (
        (md.dev(), md.ino()),
        (
            md.len(),
            (md.mtime(), md.mtime_nsec()),
            (md.ctime(), md.ctime_nsec()),
        ),
    )
}

/// The earlier verdicts, and this scan's.
pub(super) struct HeadCache {
    file: PathBuf,
    old: HashMap<Id, (Stamp, u64)>,
    new: HashMap<Id, (Stamp, u64)>,
    settled_before: (i64, i64),
    dirty: bool,
    /// Verdicts taken from the record (for tests and figures).
    pub(super) hits: usize,
}

impl HeadCache {
    /// The record below `home`; `None` when it cannot be made or lies in
    /// one of the writable `grants` (see the module's text).
    pub(super) fn open(home: &Path, grants: &[PathBuf], settle: Duration) -> Option<HeadCache> {
        if !home.is_dir() {
            return None; // a missing home is never created (atk22f)
        }
        let dir = home.join(DIR);
        std::fs::create_dir_all(&dir).ok()?;
        let dir = std::fs::canonicalize(&dir).ok()?;
        let md = std::fs::metadata(&dir).ok()?;
        let inside = |g: &PathBuf| {
            dir.starts_with(g) || std::fs::canonicalize(g).is_ok_and(|g| dir.starts_with(g))
        };
        if grants.iter().any(inside)
            || md.uid() != crate::protect::own_uid()
            || md.mode() & 0o022 != 0
        {
            return None;
        }
        let mut h = Sha256::new();
        h.update(b"skarn path-heads 1");
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(include_str!("path_programs.rs").as_bytes());
        let name: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let file = dir.join(format!("path-heads-{name}"));
        let now = SystemTime::now()
            .checked_sub(settle)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default();
        Some(HeadCache {
            old: read(&file),
            file,
            new: HashMap::new(),
            settled_before: (
                i64::try_from(now.as_secs()).unwrap_or(0),
                i64::from(now.subsec_nanos()),
            ),
            dirty: false,
            hits: 0,
        })
    }

    /// The bytes an earlier look counted, when it found `md`'s file no
    /// script and the file is unchanged since.
    pub(super) fn not_script(&mut self, md: &std::fs::Metadata) -> Option<u64> {
        let (id, s) = stamp(md);
        let (old, bytes) = *self.old.get(&id)?;
        if old != s {
            return None;
        }
        self.new.insert(id, (s, bytes));
        self.hits += 1;
        Some(bytes)
    }

    /// `md`'s file was just found no script (`bytes` counted): kept if
    /// it has settled.
    pub(super) fn note_not_script(&mut self, md: &std::fs::Metadata, bytes: u64) {
        let (id, s) = stamp(md);
        if s.1 < self.settled_before && s.2 < self.settled_before {
            self.new.insert(id, (s, bytes));
            self.dirty = true;
        }
    }

    /// Keep this scan's verdicts (only files it saw: the record follows
    /// the `PATH`), when they differ from the record's.
    pub(super) fn save(self) {
        if !self.dirty && self.new.len() == self.old.len() {
            return;
        }
        let mut bytes = Vec::with_capacity(self.new.len() * RECORD);
        for ((dev, ino), ((size, m, c), n)) in self.new.iter().take(MAX_KEPT) {
            for v in [*dev, *ino, *size, *n] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            for (sec, nsec) in [m, c] {
                bytes.extend_from_slice(&sec.to_le_bytes());
                bytes.extend_from_slice(&u32::try_from(*nsec).unwrap_or(0).to_le_bytes());
            }
        }
        let tmp = self
            .file
            .with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes));
        if written.is_err() || std::fs::rename(&tmp, &self.file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

fn read(file: &Path) -> HashMap<Id, (Stamp, u64)> {
    let mut out = HashMap::new();
    let Ok(f) = std::fs::File::open(file) else {
        return out;
    };
    let mut bytes = Vec::new();
    if f.take((MAX_KEPT * RECORD) as u64)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return out;
    }
    let u = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let i = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap_or_default());
    let n = |b: &[u8]| i64::from(u32::from_le_bytes(b.try_into().unwrap_or_default()));
    for r in bytes.chunks_exact(RECORD) {
        out.insert(
            (u(&r[0..8]), u(&r[8..16])),
            (
                (
                    u(&r[16..24]),
                    (i(&r[32..40]), n(&r[40..44])),
                    (i(&r[44..52]), n(&r[52..56])),
                ),
                u(&r[24..32]),
            ),
        );
    }
    out
}

#[cfg(test)]
#[path = "head_cache_tests.rs"]
mod tests;
