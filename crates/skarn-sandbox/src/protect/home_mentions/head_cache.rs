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
//!   grant: found, checked, read and written by [`crate::state_file`]
//!   (ADR 0317).
//! - The record is versioned by a digest of the scan's source: another
//!   build's verdicts are not read. At most [`MAX_KEPT`] records and the
//!   scan cache's bound in bytes (`[run] scan_cache_max`); a file that
//!   cannot be read is an empty cache, never an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::state_file::{Fields, Stamp, StateDir, Time};

/// Where the verdicts are kept, below the user's home.
pub const DIR: &str = super::SCAN_CACHE;

/// How long a file must have been unchanged before its verdict is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Most records kept (56 bytes each): the PATH scan's own entry bound.
pub const MAX_KEPT: usize = super::path_programs::MAX_PATH_ENTRIES;

/// A stamp and the bytes the look counted.
const RECORD: usize = Stamp::LEN + 8;

type Id = (u64, u64);

/// The earlier verdicts, and this scan's.
pub(super) struct HeadCache {
    dir: StateDir,
    name: String,
    max: usize,
    old: HashMap<Id, (Stamp, u64)>,
    new: HashMap<Id, (Stamp, u64)>,
    settled_before: Time,
    dirty: bool,
    /// Verdicts taken from the record (for tests and figures).
    pub(super) hits: usize,
}

impl HeadCache {
    /// The record below `home`; `None` when it cannot be made or lies in
    /// one of the writable `grants` (see the module's text).
    pub(super) fn open(home: &Path, grants: &[PathBuf], settle: Duration) -> Option<HeadCache> {
        let dir = StateDir::open(home, DIR, grants)?;
        let digest = crate::state_file::digest_name(
            &[
                b"skarn path-heads 2",
                env!("CARGO_PKG_VERSION").as_bytes(),
                include_str!("path_programs.rs").as_bytes(),
            ],
            12,
        );
        let name = format!("path-heads-{digest}");
        let max = super::scan_cache_max().min(MAX_KEPT * RECORD);
        let old = dir.read(&name, max).map(|b| parse(&b)).unwrap_or_default();
        Some(HeadCache {
            dir,
            name,
            max,
            old,
            new: HashMap::new(),
            settled_before: crate::state_file::settled_before(settle),
            dirty: false,
            hits: 0,
        })
    }

    /// The bytes an earlier look counted, when it found `md`'s file no
    /// script and the file is unchanged since.
    pub(super) fn not_script(&mut self, md: &std::fs::Metadata) -> Option<u64> {
        let s = Stamp::of(md);
        let id = s.id();
        let (old, bytes) = *self.old.get(&id)?;
        if old != s {
            // (Stale: dropped from the record.)
            self.old.remove(&id);
            self.dirty = true;
            return None;
        }
        self.new.insert(id, (s, bytes));
        self.hits += 1;
        Some(bytes)
    }

    /// `md`'s file was just found no script (`bytes` counted): kept if
    /// it has settled.
    pub(super) fn note_not_script(&mut self, md: &std::fs::Metadata, bytes: u64) {
        let s = Stamp::of(md);
        if s.settled(self.settled_before) {
            self.new.insert(s.id(), (s, bytes));
            self.dirty = true;
        }
    }

    /// Keep this scan's verdicts, and the record's of files this scan did
    /// not see (another `PATH`'s: callers alternating `PATH`s keep theirs,
    /// issue 30), this scan's first, to the bound; when they changed.
    pub(super) fn save(self) {
        if !self.dirty {
            return;
        }
        let mut bytes = Vec::with_capacity(self.new.len() * RECORD);
        let old = self.old.iter().filter(|(id, _)| !self.new.contains_key(id));
        for (s, n) in self
            .new
            .values()
            .chain(old.map(|(_, v)| v))
            .take(self.max / RECORD)
        {
            s.put(&mut bytes);
            bytes.extend_from_slice(&n.to_le_bytes());
        }
        self.dir.write(&self.name, &bytes, self.max);
    }
}

/// The record's verdicts; none when it is cut.
fn parse(b: &[u8]) -> HashMap<Id, (Stamp, u64)> {
    let mut r = Fields(b);
    let mut out = HashMap::new();
    while !r.is_empty() {
        let (Some(s), Some(n)) = (Stamp::take(&mut r), r.u64()) else {
            return HashMap::new();
        };
        out.insert(s.id(), (s, n));
    }
    out
}

#[cfg(test)]
#[path = "head_cache_tests.rs"]
mod tests;
