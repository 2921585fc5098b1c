//! A repository's index as a run left it, vetted before host git uses it
//! (ADR 0235).
//!
//! The index is writable during a run (`git add`, `git status` refresh
//! it), and host git trusts it: `git commit` records what it holds,
//! `git checkout -- .`, `git stash` or `git reset --hard` write it into the
//! working tree, and its cached trees (the `TREE` extension) are committed
//! as they are when they claim to be valid. A run that may not write
//! `.envrc` or `.vscode/tasks.json` could still stage content for them
//! (`git update-index --add --cacheinfo`), and hide that from `git status`
//! with the `skip-worktree` or `assume-unchanged` flags.
//!
//! [`vet`] compares the run's index with the host's (read here as git
//! writes it: versions 2 to 4, SHA-1 or SHA-256): an entry for a protected
//! path (`protected`: what the run could not write) that the run added or
//! changed refuses the whole index (the host's stays); flags the run set
//! are cleared; the cached trees are dropped whenever the index changed
//! (git computes them again). A split index (`link`) the host's did not
//! use, or an index that does not parse, is refused too.

use sha2::Digest;

/// Indexes larger than this are not parsed (refused when the run's).
pub const MAX_INDEX: usize = 256 << 20;

/// `assume-unchanged` (git's "assume valid") in an entry's flags.
const ASSUME_VALID: u16 = 0x8000;
/// An entry has a second flags field (version 3 and later).
const EXTENDED: u16 = 0x4000;
/// `skip-worktree` in the second flags field.
const SKIP_WORKTREE: u16 = 0x4000;
/// A sparse index's directory entry.
const DIR_MODE: u32 = 0o040000;

/// One entry of an index, as much of it as the vetting needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: Vec<u8>,
    mode: u32,
    oid: Vec<u8>,
    /// Byte offset of the flags field.
    flags_at: usize,
    flags: u16,
    /// Byte offset of the second flags field, when there is one.
    ext_at: Option<usize>,
    ext: u16,
}

impl Entry {
    fn stage(&self) -> u16 {
        (self.flags >> 12) & 3
    }
    fn flagged(&self) -> bool {
        self.flags & ASSUME_VALID != 0 || self.ext & SKIP_WORKTREE != 0
    }
}

/// A parsed index.
#[derive(Debug)]
struct Index {
    entries: Vec<Entry>,
    /// (signature, start, end) of each extension, header included.
    extensions: Vec<([u8; 4], usize, usize)>,
    /// Length of the trailing checksum.
    hash_len: usize,
    /// The checksum is all zeros (`index.skipHash`).
    skip_hash: bool,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// The low 12 bits of an entry's flags: its name's length, or this
/// value when the name is that long or longer (then git reads to the NUL).
const NAME_MASK: u16 = 0x0fff;

/// Parse `b` as an index whose object ids are `hash_len` bytes (the
/// repository's object format: [`super::object_format::oid_len`]) the
/// way git's `read_index_from` does. The checksum must hold (or be all
/// zeros: `index.skipHash`). Where git would read the bytes another way
/// than a plain front-to-back reading does (a name whose length in the
/// flags disagrees with its NUL, the entry blocks and extension offset the
/// `IEOT` and `EOIE` extensions give git's threaded loader), the index
/// does not parse: it is refused, never read one way here and another way
/// by git.
fn parse(b: &[u8], hash_len: usize) -> Option<Index> {
    if b.len() > MAX_INDEX || b.get(..4)? != b"DIRC" {
        return None;
    }
    let body_len = b.len().checked_sub(hash_len)?;
    let (body, sum) = b.split_at(body_len);
    let zero = sum.iter().all(|x| *x == 0);
    let good = zero
        || match hash_len {
            20 => sha1(body)[..] == *sum,
            32 => sha2::Sha256::digest(body)[..] == *sum,
            _ => false,
        };
    if !good {
        return None;
    }
    let (ix, starts) = parse_with(b, body_len, hash_len, zero)?;
    threaded_view_agrees(b, &ix, &starts, body_len, hash_len).then_some(ix)
}

/// Each entry's path as git reads it: the name's length comes from the
/// flags unless it is [`NAME_MASK`] (then up to the NUL), and the byte
/// after the name must be its NUL. `prev` is the previous entry's path
/// (version 4 names drop bytes from its end and add their own). Returns
/// the path and the offset just past the name's NUL.
fn entry_path(
    b: &[u8],
    at: usize,
    body_len: usize,
    flags: u16,
    version: u32,
    prev: &[u8],
) -> Option<(Vec<u8>, usize)> {
    let area = b.get(..body_len)?;
    let mut at = at;
    let mut path = Vec::new();
    if version == 4 {
        // A varint of the bytes dropped from the previous path, then the
        // rest of this one.
        let (drop, n) = varint(area.get(at..)?)?;
        at += n;
        let keep = prev.len().checked_sub(usize::try_from(drop).ok()?)?;
        path.extend_from_slice(&prev[..keep]);
    }
    let own = match flags & NAME_MASK {
        NAME_MASK => area.get(at..)?.iter().position(|c| *c == 0)?,
        len => usize::from(len).checked_sub(path.len())?,
    };
    let name = area.get(at..at.checked_add(own)?)?;
    if name.contains(&0) || *area.get(at + own)? != 0 {
        return None;
    }
    path.extend_from_slice(name);
    if flags & NAME_MASK != NAME_MASK && path.len() != usize::from(flags & NAME_MASK) {
        return None;
    }
    Some((path, at + own + 1))
}

fn parse_with(
    b: &[u8],
    body_len: usize,
    hash_len: usize,
    zero: bool,
) -> Option<(Index, Vec<usize>)> {
    let version = u32_at(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(b, 8)? as usize;
    let mut at = 12;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    let mut starts = Vec::with_capacity(count.min(1 << 20));
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = u32_at(b, at + 24)?;
        let oid = b.get(at + 40..at + 40 + hash_len)?.to_vec();
        let flags_at = at + 40 + hash_len;
        let flags = u16_at(b, flags_at)?;
        at = flags_at + 2;
        let (ext_at, ext) = if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            let e = u16_at(b, at)?;
            at += 2;
            (Some(at - 2), e)
        } else {
            (None, 0)
        };
        let (path, after) = entry_path(b, at, body_len, flags, version, &prev)?;
        // A path git itself would never write (`x/../.git/hooks/x`):
        // its checkout writes wherever the path leads (atk22j F2).
        if !crate::protect::git::path_check::git_accepts(&path, mode) {
            return None;
        }
        at = if version == 4 {
            after
        } else {
            // Padded with NULs to a multiple of 8 bytes (1 to 8 of them).
            start + ((after - 1 - start + 8) & !7)
        };
        if at > body_len {
            return None;
        }
        prev.clone_from(&path);
        starts.push(start);
        entries.push(Entry {
            path,
            mode,
            oid,
            flags_at,
            flags,
            ext_at,
            ext,
        });
    }
    starts.push(at);
    let mut extensions = Vec::new();
    while at < body_len {
        let sig: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        let len = u32_at(b, at + 4)? as usize;
        let end = at.checked_add(8)?.checked_add(len)?;
        if end > body_len {
            return None;
        }
        extensions.push((sig, at, end));
        at = end;
    }
    let ix = Index {
        entries,
        extensions,
        hash_len,
        skip_hash: zero,
    };
    Some((ix, starts))
}

/// Whether git's threaded loader would read what [`parse_with`] read.
/// Git looks for an `EOIE` extension at a fixed place before the
/// checksum; when there is one, it reads the extensions from the offset
/// it gives and the entries in the blocks an `IEOT` extension lists
/// (each block's first name read with no previous one). `starts` holds
/// each entry's offset and, last, the end of the entries.
fn threaded_view_agrees(
    b: &[u8],
    ix: &Index,
    starts: &[usize],
    body_len: usize,
    hash_len: usize,
) -> bool {
    let ends_at = starts.last().copied().unwrap_or(12);
    let eoie_len = 4 + hash_len;
    let tail = body_len.checked_sub(8 + eoie_len);
    let eoie_at_tail = tail.is_some_and(|t| {
        b.get(t..t + 4) == Some(b"EOIE".as_slice()) && u32_at(b, t + 4) == Some(eoie_len as u32)
    });
    let listed = |sig: &[u8; 4]| ix.extensions.iter().filter(|(s, _, _)| s == sig).count();
    if listed(b"EOIE") > 1 || listed(b"IEOT") > 1 {
        return false;
    }
    if eoie_at_tail {
        let t = tail.unwrap_or_default();
        // The EOIE git finds must be the last extension read here, and
        // point where the entries end.
        if ix.extensions.last().map(|(s, a, _)| (*s, *a)) != Some((*b"EOIE", t))
            || u32_at(b, t + 8) != Some(ends_at as u32)
        {
            return false;
        }
    } else if listed(b"EOIE") > 0 {
        return false;
    }
    let Some((_, s, e)) = ix.extensions.iter().find(|(s, _, _)| s == b"IEOT") else {
        return true;
    };
    // Version (1), then (offset, count) pairs.
    let data = &b[s + 8..*e];
    if data.len() < 4 || !(data.len() - 4).is_multiple_of(8) || u32_at(data, 0) != Some(1) {
        return false;
    }
    let mut next = 0usize;
    for pair in data[4..].chunks_exact(8) {
        let (Some(offset), Some(nr)) = (u32_at(pair, 0), u32_at(pair, 4)) else {
            return false;
        };
        if starts.get(next) != Some(&(offset as usize)) {
            return false;
        }
        // A version 4 block's first name must not lean on the previous
        // entry's (git's loader starts the block with none).
        if let Some(first) = ix.entries.get(next)
            && next > 0
            && u32_at(b, 4) == Some(4)
        {
            let name_at = first.ext_at.map_or(first.flags_at + 2, |x| x + 2);
            match varint(&b[name_at..]) {
                Some((drop, _)) if drop as usize == ix.entries[next - 1].path.len() => {}
                _ => return false,
            }
        }
        next = match next.checked_add(nr as usize) {
            Some(n) => n,
            None => return false,
        };
    }
    next == ix.entries.len()
}

/// Git's offset varint (version 4 paths): the value and its length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut v = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        i += 1;
        if i > 9 {
            return None;
        }
        c = *b.get(i)?;
        v = (v + 1).checked_shl(7)? | u64::from(c & 0x7f);
    }
    Some((v, i + 1))
}

/// What [`vet`] decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to do.
    Keep,
    /// Use these bytes instead (one line per change made).
    Rewrite(Vec<u8>, Vec<String>),
    /// Keep the host's index; why.
    Refuse(String),
}

/// Vet `new` (the run's index) against `old` (the host's before the run,
/// if there was one), read with object ids of `hash_len` bytes (the
/// repository's format). `protected` says whether a path of the repository
/// (relative to its top, `/`-separated; with whether the host's index
/// tracked it) is one the run could not write.
pub fn vet(
    old: Option<&[u8]>,
    new: &[u8],
    hash_len: usize,
    protected: &dyn Fn(&[u8], bool) -> bool,
) -> Verdict {
    if old == Some(new) {
        return Verdict::Keep;
    }
    let Some(ix) = parse(new, hash_len) else {
        return Verdict::Refuse(
            "the index the run left does not parse as git's index: the host's is kept".into(),
        );
    };
    let before = old.and_then(|o| parse(o, hash_len));
    let prior = |e: &Entry| {
        before.as_ref().and_then(|o| {
            o.entries
                .iter()
                .find(|x| x.path == e.path && x.stage() == e.stage())
        })
    };
    let had = |sig: &[u8; 4]| {
        before
            .as_ref()
            .is_some_and(|o| o.extensions.iter().any(|(s, _, _)| s == sig))
    };
    // A split index keeps entries in a shared index file this does not
    // read (a run may write a new one and point the index at it: atk22j
    // F2d), so a changed split index is never applied.
    if ix.extensions.iter().any(|(s, _, _)| s == b"link") {
        let why = if had(b"link") {
            "the run changed a split index (its entries live in another file, not vetted here)"
        } else {
            "the run made the index a split index (its entries live in another file)"
        };
        return Verdict::Refuse(format!("{why}: the host's index is kept"));
    }
    let mut bytes = new.to_vec();
    let mut notes = Vec::new();
    for e in &ix.entries {
        let was = prior(e);
        let same = was.is_some_and(|w| w.mode == e.mode && w.oid == e.oid);
        if !same && protected(&e.path, was.is_some()) {
            return Verdict::Refuse(format!(
                "the run staged content for the protected path {} through the index only \
                 (host git would commit it or check it out): the host's index is kept",
                String::from_utf8_lossy(&e.path)
            ));
        }
        if e.flagged() && !was.is_some_and(Entry::flagged) {
            if e.mode == DIR_MODE {
                return Verdict::Refuse(
                    "the run added a sparse directory entry to the index: the host's index is \
                     kept"
                        .into(),
                );
            }
            let f = e.flags & !ASSUME_VALID;
            bytes[e.flags_at..e.flags_at + 2].copy_from_slice(&f.to_be_bytes());
            if let Some(x) = e.ext_at {
                let v = e.ext & !SKIP_WORKTREE;
                bytes[x..x + 2].copy_from_slice(&v.to_be_bytes());
            }
            notes.push(format!(
                "{}: the skip-worktree / assume-unchanged flag the run set was cleared (git \
                 status shows the file again)",
                String::from_utf8_lossy(&e.path)
            ));
        }
    }
    // The cached trees (and the offsets table that indexes extensions)
    // are git's to compute again: a forged one would be committed as is.
    let dropped: Vec<&([u8; 4], usize, usize)> = ix
        .extensions
        .iter()
        .filter(|(s, _, _)| matches!(s, b"TREE" | b"EOIE" | b"IEOT"))
        .collect();
    if notes.is_empty() && dropped.is_empty() {
        return Verdict::Keep;
    }
    let body_end = bytes.len() - ix.hash_len;
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for (_, s, e) in &dropped {
        out.extend_from_slice(&bytes[at..*s]);
        at = *e;
    }
    out.extend_from_slice(&bytes[at..body_end]);
    let sum: Vec<u8> = if ix.skip_hash {
        vec![0; ix.hash_len]
    } else if ix.hash_len == 20 {
        sha1(&out).to_vec()
    } else {
        sha2::Sha256::digest(&out).to_vec()
    };
    out.extend_from_slice(&sum);
    Verdict::Rewrite(out, notes)
}

/// The object id (hex) the index `b` stages at `path` (stage 0), if it
/// parses and has one.
pub fn staged_oid(b: &[u8], hash_len: usize, path: &[u8]) -> Option<String> {
    let ix = parse(b, hash_len)?;
    let e = ix
        .entries
        .iter()
        .find(|e| e.path == path && e.stage() == 0)?;
    Some(e.oid.iter().map(|x| format!("{x:02x}")).collect())
}

/// The stage-0 entries of the index `b`: path, mode, object id (hex).
pub fn staged_entries(b: &[u8], hash_len: usize) -> Option<Vec<(Vec<u8>, u32, String)>> {
    let ix = parse(b, hash_len)?;
    Some(
        ix.entries
            .iter()
            .filter(|e| e.stage() == 0)
            .map(|e| {
                (
                    e.path.clone(),
                    e.mode,
                    e.oid.iter().map(|x| format!("{x:02x}")).collect(),
                )
            })
            .collect(),
    )
}

/// One entry as read: path, mode, object id (hex).
pub type IndexEntry = (Vec<u8>, u32, String);

/// Every entry of the index `b`, whatever its stage (git checks
/// unmerged ones out too: `git checkout --theirs`), and whether it is a
/// split index (entries in a shared file not read here).
pub fn all_entries(b: &[u8], hash_len: usize) -> Option<(Vec<IndexEntry>, bool)> {
    let ix = parse(b, hash_len)?;
    let split = ix.extensions.iter().any(|(s, _, _)| s == b"link");
    let entries = ix
        .entries
        .iter()
        .map(|e| {
            (
                e.path.clone(),
                e.mode,
                e.oid.iter().map(|x| format!("{x:02x}")).collect(),
            )
        })
        .collect();
    Some((entries, split))
}

/// SHA-1 (git's index checksum and object ids; not used for anything
/// secret).
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    use sha1::Digest as _;
    sha1::Sha1::digest(data).into()
}

#[cfg(test)]
#[path = "index_vet_tests.rs"]
mod tests;
