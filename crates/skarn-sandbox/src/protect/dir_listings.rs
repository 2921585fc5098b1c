//! The listings of the toolchain and environment directories earlier
//! scans read (ADR 0290), so a run lists again only what changed.
//!
//! [`super::toolchain_links::scan`] lists every toolchain and Python
//! environment four levels down on every run to find the links inside
//! them (about 430 directories and 1,700 system calls in `~/.pyenv` here,
//! issue 30). A directory's entries (names, and whether each is a link
//! or a directory: a kind changes only by removing and making the entry)
//! cannot change without its modification and change times moving, and
//! no process can set a change time; so a listing is reused while the
//! directory's device, inode, modification and change times are all the
//! same (one `stat` instead of `open`, two `getdents64`, `close`).
//!
//! - What a link leads to is resolved every time (it depends on other
//!   directories); only the listing is kept.
//! - A directory changed within [`SETTLE`] of its listing, or with more
//!   entries than a walk takes from one, is not kept.
//! - The place is `~/.local/state/skarn/scan-cache`, under skarn's own
//!   state: a default secret path hidden (masked) in every run, also
//!   when the workspace is the home or a writable grant holds it, so no
//!   run can plant or change a listing (a listing that left a link out
//!   would leave its target writable). It is found, checked, read and
//!   written by [`crate::state_file`] (ADR 0317).
//! - The record is versioned by a digest of the scan's source; at most
//!   [`crate::protect::home_mentions::scan_cache_max`] bytes (`[run]
//!   scan_cache_max`); a record that cannot be read is an empty one.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::dir_entries::Entries;

use crate::state_file::{Fields, Stamp, StateDir, Time};

/// How long a directory must have been unchanged before its listing is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Entries of one directory kept at most (a walk takes no more from one).
const MAX_ONE: usize = 4096;

/// What an entry is, as its directory entry says (kept with the entries).
pub use super::dir_entries::Kind;

/// Directories by (device, inode): their stamps and entries (slices of
/// the record read, or encoded once when listed now: `dir_entries`).
type Record = HashMap<(u64, u64), (Stamp, Entries)>;

/// The record of earlier listings, and this scan's.
pub struct Listings {
    dir: StateDir,
    name: String,
    max: usize,
    old: Record,
    new: Record,
    settled_before: Time,
    dirty: bool,
    /// Listings taken from the record.
    pub hits: usize,
}

impl Listings {
    /// The record below `home` (`None`: list everything).
    pub fn open(home: &Path, tag: &str, source: &str, settle: Duration) -> Option<Listings> {
        let dir = StateDir::open(home, crate::protect::home_mentions::SCAN_CACHE, &[])?;
        let digest = crate::state_file::digest_name(
            &[
                b"skarn dir-listings 2",
                env!("CARGO_PKG_VERSION").as_bytes(),
                source.as_bytes(),
            ],
            12,
        );
        let name = format!("{tag}-{digest}");
        let max = crate::protect::home_mentions::scan_cache_max();
        let old = dir.read(&name, max).and_then(parse).unwrap_or_default();
        Some(Listings {
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

    /// The entries of `dir` (links followed to it, as `read_dir` does), in
    /// the order the directory gives them; `None` when it cannot be listed.
    pub fn list(&mut self, dir: &Path) -> Option<Vec<(PathBuf, Kind)>> {
        let md = std::fs::metadata(dir).ok()?;
        let t = Stamp::of(&md);
        let id = t.id();
        if let Some((old, names)) = self.old.get(&id)
            && *old == t
        {
            let out = names.iter().map(|(n, k)| (dir.join(n), k)).collect();
            // (A reference to the record read, not a copy.)
            self.new.insert(id, (t, names.clone()));
            self.hits += 1;
            return Some(out);
        }
        if self.old.remove(&id).is_some() {
            // (Stale: dropped from the record.)
            self.dirty = true;
        }
        let names = read_names(dir, MAX_ONE + 1)?;
        let out = names.iter().map(|(n, k)| (dir.join(n), *k)).collect();
        if names.len() <= MAX_ONE
            && !names.iter().any(|(_, k)| *k == Kind::Unknown)
            && t.settled(self.settled_before)
            && let Some(names) = Entries::build(names.iter().map(|(n, k)| (n.as_os_str(), *k)))
        {
            self.new.insert(id, (t, names));
            self.dirty = true;
        }
        Some(out)
    }

    /// Keep this scan's listings, and the record's of directories this
    /// scan did not list (another home's or workspace's: callers
    /// alternating keep theirs, issue 30), this scan's first, up to the
    /// scan cache's bound; when they changed.
    pub fn save(self) {
        if !self.dirty {
            return;
        }
        let mut bytes = Vec::new();
        let old = self.old.iter().filter(|(id, _)| !self.new.contains_key(id));
        for (t, names) in self.new.values().chain(old.map(|(_, v)| v)) {
            let mut rec = Vec::new();
            t.put(&mut rec);
            let Ok(n) = u32::try_from(names.len()) else {
                continue;
            };
            rec.extend_from_slice(&n.to_le_bytes());
            // (Already in the record's encoding: `dir_entries`.)
            rec.extend_from_slice(names.bytes());
            if bytes.len() + rec.len() > self.max {
                continue;
            }
            bytes.extend_from_slice(&rec);
        }
        self.dir.write(&self.name, &bytes, self.max);
    }
}

/// The names and kinds of `dir`'s entries, at most `max`.
fn read_names(dir: &Path, max: usize) -> Option<Vec<(OsString, Kind)>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten().take(max) {
        let kind = match e.file_type() {
            Ok(k) if k.is_symlink() => Kind::Link,
            Ok(k) if k.is_dir() => Kind::Dir,
            Ok(_) => Kind::Other,
            Err(_) => Kind::Unknown,
        };
        names.push((e.file_name(), kind));
    }
    Some(names)
}

/// Every entry of `dir` with its kind: through `l` while `dir` is
/// unchanged, listed now when it has more entries than a record keeps
/// (a walk that takes them all, `home_links`, ADR 0325).
pub fn list_whole(l: Option<&mut Listings>, dir: &Path) -> Option<Vec<(PathBuf, Kind)>> {
    if let Some(l) = l {
        // (`None`: it cannot be listed; asked once, not twice.)
        let v = l.list(dir)?;
        if v.len() <= MAX_ONE {
            return Some(v);
        }
    }
    let names = read_names(dir, usize::MAX)?;
    Some(names.into_iter().map(|(n, k)| (dir.join(n), k)).collect())
}

/// The record's directories; `None` when it is cut or malformed. The
/// bytes are kept once: every directory's entries are a slice of them.
fn parse(b: Vec<u8>) -> Option<Record> {
    let buf = Arc::new(b);
    let mut at = 0;
    let mut out = HashMap::new();
    while at < buf.len() {
        let mut r = Fields(buf.get(at..)?);
        let t = Stamp::take(&mut r)?;
        let n = r.u32()? as usize;
        if n > MAX_ONE {
            return None;
        }
        let (names, next) = Entries::take(&buf, buf.len() - r.0.len(), n)?;
        at = next;
        out.insert(t.id(), (t, names));
    }
    Some(out)
}
