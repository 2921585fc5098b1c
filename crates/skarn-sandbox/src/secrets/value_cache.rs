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
//!   is the home), so a run can neither read nor plant verdicts.
//! - At most [`MAX_KEPT`] verdicts; a file that cannot be read or parsed
//!   is an empty cache, never an error.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::egress_secrets::RunSecrets;

/// Where the verdicts are kept, below the user's home.
pub const DIR: &str = ".local/state/skarn/value-checks";

/// How long a file must have been unchanged before its verdict is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Most verdicts kept per set of values (48 bytes each).
pub const MAX_KEPT: usize = 400_000;

/// The record's layout; what counts as holding a value is in
/// [`format_digest`], derived from the finder's and the walk's sources.
const FORMAT: &[u8] = b"skarn value-checks 1";

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

const RECORD: usize = 48;

/// A file's identity and the stamps that move when its content changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

type Id = (u64, u64);

fn stamp(md: &std::fs::Metadata) -> (Id, Stamp) {
    (
        (md.dev(), md.ino()),
        Stamp {
            size: md.len(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        },
    )
}

/// The verdicts of earlier checks for one set of values, and this check's.
pub struct Cache {
    file: PathBuf,
    old: HashMap<Id, Stamp>,
    new: HashMap<Id, Stamp>,
    /// Files changed at or after this (seconds, nanoseconds) are not kept.
    settled_before: (i64, i64),
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
        // A missing home is never created (atk22f).
        if !home.is_dir() {
            return None;
        }
        let dir = home.join(DIR);
        std::fs::create_dir_all(&dir).ok()?;
        let dir = std::fs::canonicalize(&dir).ok()?;
        let md = std::fs::metadata(&dir).ok()?;
        if visible.iter().any(|v| dir.starts_with(v))
            || md.uid() != rustix::process::geteuid().as_raw()
            || md.mode() & 0o022 != 0
        {
            return None;
        }
        let key = key(&dir)?;
        let mut h = Sha256::new();
        h.update(this_format());
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(key);
        let mut values: Vec<&[u8]> = secrets.values().collect();
        values.sort();
        for v in values {
            h.update((v.len() as u64).to_le_bytes());
            h.update(v);
        }
        let name: String = h.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let file = dir.join(name);
        let old = read(&file);
        let now = SystemTime::now()
            .checked_sub(settle)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default();
        Some(Cache {
            file,
            old,
            new: HashMap::new(),
            settled_before: (now.as_secs() as i64, i64::from(now.subsec_nanos())),
            dirty: false,
        })
    }

    /// Whether an earlier check found `md`'s file clean, unchanged since.
    pub fn is_clean(&mut self, md: &std::fs::Metadata) -> bool {
        let (id, s) = stamp(md);
        if self.old.get(&id) == Some(&s) {
            self.new.insert(id, s);
            return true;
        }
        false
    }

    /// `md`'s file was just read and holds no value: kept if it has
    /// settled.
    pub fn note_clean(&mut self, md: &std::fs::Metadata) {
        let (id, s) = stamp(md);
        if s.ctime < self.settled_before && s.mtime < self.settled_before {
            self.new.insert(id, s);
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
        for ((dev, ino), s) in self.new.iter().take(MAX_KEPT) {
            for n in [*dev, *ino, s.size] {
                bytes.extend_from_slice(&n.to_le_bytes());
            }
            for (sec, nsec) in [s.mtime, s.ctime] {
                bytes.extend_from_slice(&sec.to_le_bytes());
                bytes.extend_from_slice(&(nsec as u32).to_le_bytes());
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

/// The random key of `dir`, made once (0600).
pub(crate) fn key(dir: &Path) -> Option<[u8; 32]> {
    let path = dir.join("key");
    let mut key = [0u8; 32];
    if let Ok(mut f) = std::fs::File::open(&path)
        && f.read_exact(&mut key).is_ok()
    {
        return Some(key);
    }
    rustix::rand::getrandom(&mut key, rustix::rand::GetRandomFlags::empty()).ok()?;
    let tmp = dir.join(format!("key.tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .ok()?;
    f.write_all(&key).ok()?;
    // Another run may have made one meanwhile: theirs is kept, ours read
    // back from it.
    if std::fs::hard_link(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::File::open(&path).ok()?;
        f.read_exact(&mut key).ok()?;
        return Some(key);
    }
    let _ = std::fs::remove_file(&tmp);
    Some(key)
}

fn read(file: &Path) -> HashMap<Id, Stamp> {
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
            Stamp {
                size: u(&r[16..24]),
                mtime: (i(&r[24..32]), n(&r[32..36])),
                ctime: (i(&r[36..44]), n(&r[44..48])),
            },
        );
    }
    out
}

#[cfg(test)]
mod tests;
