//! One directory's entries as [`super::dir_listings`] keeps them: in the
//! record's own encoding, a slice of one shared buffer (issue 30, peak
//! memory).
//!
//! The listings record (up to `scan_cache_max`, 4 MiB by default) was
//! parsed into one `OsString` per name and every listing taken from it
//! cloned again into this scan's record: about five times the record's
//! size on the heap (2.3 MB for a 412 KB record here), the largest part
//! of a run's peak memory. Now the record read is kept once and every
//! directory's entries are a range of it; a listing taken from it is a
//! reference, not a copy; a directory listed now is encoded once.
//!
//! Encoding of one entry: its kind (1 link, 2 directory, 3 other,
//! 4 unknown: never written, [`Listings`](super::dir_listings::Listings)
//! keeps no listing with an unknown kind), its name's length (`u16`,
//! little-endian) and its name's bytes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

/// What an entry is, as its directory entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Link,
    Dir,
    Other,
    /// Its type could not be read.
    Unknown,
}

/// Entries of one directory: `count` entries in `buf[start..end]`.
#[derive(Debug, Clone)]
pub struct Entries {
    buf: Arc<Vec<u8>>,
    start: usize,
    end: usize,
    count: usize,
}

/// The byte a kind is written as.
fn kind_byte(k: Kind) -> u8 {
    match k {
        Kind::Link => 1,
        Kind::Dir => 2,
        Kind::Other => 3,
        Kind::Unknown => 4,
    }
}

/// The kind written as `b`; `None` for any other byte.
fn byte_kind(b: u8) -> Option<Kind> {
    Some(match b {
        1 => Kind::Link,
        2 => Kind::Dir,
        3 => Kind::Other,
        4 => Kind::Unknown,
        _ => return None,
    })
}

impl Entries {
    /// Entries gathered now; `None` when a name is longer than the
    /// encoding holds (no file system gives one).
    pub fn build<'a>(items: impl IntoIterator<Item = (&'a OsStr, Kind)>) -> Option<Entries> {
        let mut buf = Vec::new();
        let mut count = 0;
        for (n, k) in items {
            let b = n.as_bytes();
            let len = u16::try_from(b.len()).ok()?;
            buf.push(kind_byte(k));
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(b);
            count += 1;
        }
        let end = buf.len();
        Some(Entries {
            buf: Arc::new(buf),
            start: 0,
            end,
            count,
        })
    }

    /// `count` entries at `at` in `buf` (a record read whole), checked;
    /// with the offset just past them. `None` when they are cut or
    /// malformed, or one has kind `unknown` (never written).
    pub fn take(buf: &Arc<Vec<u8>>, at: usize, count: usize) -> Option<(Entries, usize)> {
        let mut i = at;
        for _ in 0..count {
            let k = byte_kind(*buf.get(i)?)?;
            if k == Kind::Unknown {
                return None;
            }
            let len = u16::from_le_bytes(buf.get(i + 1..i + 3)?.try_into().ok()?);
            i = (i + 3).checked_add(usize::from(len))?;
            if i > buf.len() {
                return None;
            }
        }
        let e = Entries {
            buf: Arc::clone(buf),
            start: at,
            end: i,
            count,
        };
        Some((e, i))
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded bytes (as a record keeps them).
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Each entry's name and kind, in the order listed.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, Kind)> + '_ {
        let mut rest = self.bytes();
        std::iter::from_fn(move || {
            let (&k, tail) = rest.split_first()?;
            let len = usize::from(u16::from_le_bytes(tail.get(..2)?.try_into().ok()?));
            let name = tail.get(2..2 + len)?;
            rest = &tail[2 + len..];
            Some((OsStr::from_bytes(name), byte_kind(k)?))
        })
    }
}

#[cfg(test)]
#[path = "dir_entries_tests.rs"]
mod tests;
