//! What earlier checks for a granted secret's value found clean, so the
//! next run reads only what changed (ADR 0230).
//!
//! With the agent hook every shell command is a run, and each run granted
//! a secret looks at every file of its grants ([`super::value_scan`]):
//! tens of megabytes read and searched for some thousand patterns each
//! time. A file's content cannot change without its change time (`ctime`)
//! moving, and no process can set `ctime` (only the kernel's clock does),
//! so a file seen clean keeps its verdict while its device, inode, size,
//! modification and change times are all the same.
//!
//! - Only clean verdicts are kept; a file holding a value is read again
//!   every time.
//! - A file changed within [`SETTLE`] of the check is not kept: a change
//!   right after the read could land within the same clock tick and
//!   leave `ctime` equal.
//! - The verdicts are kept per set of granted values, under a name made
//!   from a keyed hash of them (the key is random, made once, beside the
//!   verdicts): nothing there tells a value, and another secret set, a
//!   changed value or another version of skarn's forms starts afresh.
//! - The place is `~/.local/state/skarn/value-checks`, under skarn's own
//!   state, which no run is granted (it is hidden even when the workspace
//!   is the home), so a run can neither read nor plant verdicts; it is
//!   found, checked, read and written by [`crate::state_file`] (ADR 0317).
//! - At most [`MAX_KEPT`] verdicts; a file that cannot be read or parsed
//!   is an empty cache, never an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::egress_secrets::RunSecrets;
use crate::state_file::{Fields, Stamp, StateDir, Time};

/// Where the verdicts are kept, below the user's home.
pub const DIR: &str = ".local/state/skarn/value-checks";

/// How long a file must have been unchanged before its verdict is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Most verdicts kept per set of values (48 bytes each).
pub const MAX_KEPT: usize = 400_000;

/// The record's layout; what counts as holding a value is in
/// [`format_digest`], derived from the finder's and the walk's sources.
const FORMAT: &[u8] = b"skarn value-checks 2";

/// A digest of the record's layout and of the text of everything that
/// decides what a check finds (the forms the scrubber knows, the
/// unescaping, the walk's size bounds): verdicts made by any other
/// version of them are ignored, whatever the version number says
/// (atk27m H4: new forms had kept old "clean" verdicts).
fn format_digest(sources: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(FORMAT);
    for s in sources {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    }
    h.finalize().into()
}

/// What this build's checks are made by.
fn this_format() -> [u8; 32] {
    let mut sources: Vec<&str> = skarn_egress::FINDER_SOURCES.to_vec();
    sources.push(include_str!("value_scan.rs"));
    sources.push(include_str!("value_file.rs"));
    format_digest(&sources)
}

const RECORD: usize = Stamp::LEN;

type Id = (u64, u64);

/// The verdicts of earlier checks for one set of values, and this check's.
pub struct Cache {
    dir: StateDir,
    name: String,
    old: HashMap<Id, Stamp>,
    new: HashMap<Id, Stamp>,
    /// Files changed at or after this (seconds, nanoseconds) are not kept.
    settled_before: Time,
    /// Whether anything differs from what was read.
    dirty: bool,
}

impl Cache {
    /// The verdicts kept below `home` for `secrets`' values; `None` when
    /// the place cannot be made, or when it lies (links resolved) inside
    /// one of `visible`, the run's grants: the run could then plant
    /// verdicts (the check then reads everything).
    pub fn open(home: &Path, secrets: &RunSecrets, visible: &[PathBuf]) -> Option<Cache> {
        Cache::open_settled(home, secrets, visible, SETTLE)
    }

    fn open_settled(
        home: &Path,
        secrets: &RunSecrets,
        visible: &[PathBuf],
        settle: Duration,
    ) -> Option<Cache> {
        let dir = StateDir::open(home, DIR, visible)?;
        let key = dir_key(&dir)?;
        let mut values: Vec<&[u8]> = secrets.values().collect();
        values.sort();
        let lens: Vec<[u8; 8]> = values
            .iter()
            .map(|v| (v.len() as u64).to_le_bytes())
            .collect();
        let format = this_format();
        let mut parts: Vec<&[u8]> = vec![&format, env!("CARGO_PKG_VERSION").as_bytes(), &key];
        for (v, n) in values.iter().zip(&lens) {
            parts.push(n);
            parts.push(v);
        }
        let name = crate::state_file::digest_name(&parts, 16);
        let old = dir
            .read(&name, MAX_KEPT * RECORD)
            .map(|b| parse(&b))
            .unwrap_or_default();
        Some(Cache {
            dir,
            name,
            old,
            new: HashMap::new(),
            settled_before: crate::state_file::settled_before(settle),
            dirty: false,
        })
    }

    /// Whether an earlier check found `md`'s file clean, unchanged since.
    pub fn is_clean(&mut self, md: &std::fs::Metadata) -> bool {
        let s = Stamp::of(md);
        if self.old.get(&s.id()) == Some(&s) {
            self.new.insert(s.id(), s);
            return true;
        }
        false
    }

    /// `md`'s file was just read and holds no value: kept if it has
    /// settled.
    pub fn note_clean(&mut self, md: &std::fs::Metadata) {
        let s = Stamp::of(md);
        if s.settled(self.settled_before) {
            self.new.insert(s.id(), s);
            self.dirty = true;
        }
    }

    /// Keep this check's verdicts, and the earlier ones of files it did
    /// not see (another workspace's), up to [`MAX_KEPT`].
    pub fn save(mut self) {
        for (id, s) in &self.old {
            if self.new.len() >= MAX_KEPT {
                self.dirty = true;
                break;
            }
            self.new.entry(*id).or_insert(*s);
        }
        if !self.dirty && self.new.len() == self.old.len() {
            return;
        }
        let mut bytes = Vec::with_capacity(self.new.len() * RECORD);
        for s in self.new.values().take(MAX_KEPT) {
            s.put(&mut bytes);
        }
        self.dir.write(&self.name, &bytes, MAX_KEPT * RECORD);
    }
}

/// The record's verdicts; none when it is cut.
fn parse(b: &[u8]) -> HashMap<Id, Stamp> {
    let mut r = Fields(b);
    let mut out = HashMap::new();
    while !r.is_empty() {
        let Some(s) = Stamp::take(&mut r) else {
            return HashMap::new();
        };
        out.insert(s.id(), s);
    }
    out
}

#[cfg(test)]
mod tests;

/// The random key of the checks' directory, made once (private).
fn dir_key(dir: &StateDir) -> Option<[u8; 32]> {
    let mut key = [0u8; 32];
    rustix::rand::getrandom(&mut key, rustix::rand::GetRandomFlags::empty()).ok()?;
    dir.read_or_create("key", &key)?.try_into().ok()
}

/// The value checks' key below `home`, for records keyed like theirs (the
/// exposure records, [`crate::secrets::exposed`]).
pub(crate) fn key(home: &Path) -> Option<[u8; 32]> {
    dir_key(&StateDir::open(home, DIR, &[])?)
}
