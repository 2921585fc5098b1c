//! Dead runs left in place, remembered (ADR 0248, issue 30).
//!
//! A dead run's record over another workspace is left for that
//! workspace's next run ([`super::dead_runs`]), and every run before it
//! opened, locked and read each such record again: a few hundred killed
//! gateway servers cost each `skarn run` thousands of system calls. A
//! record is written once (through a locked `.tmp-` name, renamed into
//! place) and its run never holds it again once dead, so what a run
//! learnt of it stays true while the record exists: `dead.idx` keeps, per
//! record name, its [`Info`] and modification time. A later run decides
//! from it whether the record concerns it (its roots overlap, it turned
//! stale, its workspace is gone: then the record is checked in full as
//! before) without opening it. Names are random and never reused; the
//! directory is skarn's state, which no run is granted.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::protect::run_record::{Info, open, read_bounded, write_locked};

/// The index's name in the record directory.
pub(crate) const NAME: &str = "dead.idx";

/// Largest index read (past it, the records are checked one by one).
const MAX_INDEX: u64 = 64 << 20;

/// One dead record left in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// What the record says.
    pub info: Info,
    /// Its modification time, seconds since the epoch.
    pub modified: u64,
}

/// Record names (`<id>.run`) and what they said.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Index {
    pub runs: BTreeMap<String, Entry>,
}

impl Entry {
    /// Whether the record is older than `stale` now.
    pub fn older_than(&self, stale: std::time::Duration) -> bool {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.modified);
        t.elapsed().is_ok_and(|age| age > stale)
    }
}

/// The index of `dir` (empty when missing or unreadable).
pub(crate) fn read(dir: &Path) -> Index {
    open(&dir.join(NAME))
        .and_then(|mut f| read_bounded(&mut f, MAX_INDEX))
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Replace the index of `dir` with `index` (best effort: a lost index
/// only means the records are read again).
pub(crate) fn write(dir: &Path, index: &Index) {
    if let Ok(b) = serde_json::to_vec(index) {
        let _ = write_locked(dir, &dir.join(NAME), &b);
    }
}
