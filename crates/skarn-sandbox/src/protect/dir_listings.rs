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
//!   would leave its target writable). It is not used when it is not the
//!   caller's or others may write it.
//! - The record is versioned by a digest of the scan's source; at most
//!   [`MAX_BYTES`]; a record that cannot be read is an empty one.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How long a directory must have been unchanged before its listing is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Bytes of the record at most (read and written).
pub const MAX_BYTES: usize = 4 << 20;

/// Entries of one directory kept at most (a walk takes no more from one).
const MAX_ONE: usize = 4096;

/// What an entry is, as its directory entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Link,
    Dir,
    Other,
    /// Its type could not be read.
    Unknown,
}

type Times = ((i64, i64), (i64, i64));

/// Directories by (device, inode): their times and entries.
type Record = HashMap<(u64, u64), (Times, Vec<(OsString, Kind)>)>;

/// The record of earlier listings, and this scan's.
pub struct Listings {
    file: PathBuf,
    old: Record,
    new: Record,
    settled_before: (i64, i64),
    dirty: bool,
    /// Listings taken from the record.
    pub hits: usize,
}

fn times(md: &std::fs::Metadata) -> Times {
    ((md.mtime(), md.mtime_nsec()), (md.ctime(), md.ctime_nsec()))
}

impl Listings {
    /// The record below `home` (`None`: list everything).
    pub fn open(home: &Path, tag: &str, source: &str, settle: Duration) -> Option<Listings> {
        if !home.is_dir() {
            return None; // a missing home is never created (atk22f)
        }
        let dir = home.join(crate::protect::home_mentions::SCAN_CACHE);
        std::fs::create_dir_all(&dir).ok()?;
        let md = std::fs::symlink_metadata(&dir).ok()?;
        if !md.is_dir() || md.uid() != crate::protect::own_uid() || md.mode() & 0o022 != 0 {
            return None;
        }
        let mut h = Sha256::new();
        h.update(b"skarn dir-listings 1");
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(source.as_bytes());
        let name: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let file = dir.join(format!("{tag}-{name}"));
        let now = SystemTime::now()
            .checked_sub(settle)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default();
        Some(Listings {
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

    /// The entries of `dir` (links followed to it, as `read_dir` does), in
    /// the order the directory gives them; `None` when it cannot be listed.
    pub fn list(&mut self, dir: &Path) -> Option<Vec<(PathBuf, Kind)>> {
        let md = std::fs::metadata(dir).ok()?;
        let id = (md.dev(), md.ino());
        let t = times(&md);
        if let Some((old, names)) = self.old.get(&id)
            && *old == t
        {
            let out = names.iter().map(|(n, k)| (dir.join(n), *k)).collect();
            self.new.insert(id, (t, names.clone()));
            self.hits += 1;
            return Some(out);
        }
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let kind = match e.file_type() {
                Ok(k) if k.is_symlink() => Kind::Link,
                Ok(k) if k.is_dir() => Kind::Dir,
                Ok(_) => Kind::Other,
                Err(_) => Kind::Unknown,
            };
            names.push((e.file_name(), kind));
            if names.len() > MAX_ONE {
                break;
            }
        }
        let out = names.iter().map(|(n, k)| (dir.join(n), *k)).collect();
        if names.len() <= MAX_ONE
            && !names.iter().any(|(_, k)| *k == Kind::Unknown)
            && t.0 < self.settled_before
            && t.1 < self.settled_before
        {
            self.new.insert(id, (t, names));
            self.dirty = true;
        }
        Some(out)
    }

    /// Keep this scan's listings (only directories it listed), up to
    /// [`MAX_BYTES`], when they differ from the record's.
    pub fn save(self) {
        if !self.dirty && self.new.len() == self.old.len() {
            return;
        }
        let mut bytes = Vec::new();
        for ((dev, ino), ((m, c), names)) in &self.new {
            let mut rec = Vec::new();
            rec.extend_from_slice(&dev.to_le_bytes());
            rec.extend_from_slice(&ino.to_le_bytes());
            for (sec, nsec) in [m, c] {
                rec.extend_from_slice(&sec.to_le_bytes());
                rec.extend_from_slice(&u32::try_from(*nsec).unwrap_or(0).to_le_bytes());
            }
            rec.extend_from_slice(&u32::try_from(names.len()).unwrap_or(0).to_le_bytes());
            for (n, k) in names {
                let b = n.as_bytes();
                let Ok(len) = u16::try_from(b.len()) else {
                    rec.clear();
                    break;
                };
                rec.push(match k {
                    Kind::Link => 1,
                    Kind::Dir => 2,
                    Kind::Other | Kind::Unknown => 3,
                });
                rec.extend_from_slice(&len.to_le_bytes());
                rec.extend_from_slice(b);
            }
            if rec.is_empty() || bytes.len() + rec.len() > MAX_BYTES {
                continue;
            }
            bytes.extend_from_slice(&rec);
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

fn read(file: &Path) -> Record {
    let Ok(f) = std::fs::File::open(file) else {
        return HashMap::new();
    };
    let mut bytes = Vec::new();
    if f.take(MAX_BYTES as u64).read_to_end(&mut bytes).is_err() {
        return HashMap::new();
    }
    parse(&bytes).unwrap_or_default()
}

/// The record's directories; `None` when it is cut or malformed.
fn parse(mut b: &[u8]) -> Option<Record> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (h, t) = (b.get(..n)?, b.get(n..)?);
        *b = t;
        Some(h)
    }
    let u64_ = |b: &mut &[u8]| Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?));
    let u32_ = |b: &mut &[u8]| Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?));
    let mut out = HashMap::new();
    while !b.is_empty() {
        let id = (u64_(&mut b)?, u64_(&mut b)?);
        let m = (u64_(&mut b)? as i64, i64::from(u32_(&mut b)?));
        let c = (u64_(&mut b)? as i64, i64::from(u32_(&mut b)?));
        let n = u32_(&mut b)? as usize;
        if n > MAX_ONE {
            return None;
        }
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            let k = match take(&mut b, 1)?[0] {
                1 => Kind::Link,
                2 => Kind::Dir,
                3 => Kind::Other,
                _ => return None,
            };
            let len = u16::from_le_bytes(take(&mut b, 2)?.try_into().ok()?);
            let name = OsString::from_vec(take(&mut b, usize::from(len))?.to_vec());
            names.push((name, k));
        }
        out.insert(id, ((m, c), names));
    }
    Some(out)
}
