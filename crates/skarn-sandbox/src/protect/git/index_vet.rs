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

/// The checksum length `b` was written with: 20 (SHA-1) or 32 (SHA-256),
/// whichever checks; with a zero checksum, the one whose entries parse.
fn parse(b: &[u8]) -> Option<Index> {
    if b.len() > MAX_INDEX || b.get(..4)? != b"DIRC" {
        return None;
    }
    for hash_len in [20, 32] {
        let Some(body_len) = b.len().checked_sub(hash_len) else {
            continue;
        };
        let (body, sum) = b.split_at(body_len);
        let zero = sum.iter().all(|x| *x == 0);
        let good = zero
            || match hash_len {
                20 => sha1(body)[..] == *sum,
                _ => sha2::Sha256::digest(body)[..] == *sum,
            };
        if good && let Some(ix) = parse_with(b, body_len, hash_len, zero) {
            return Some(ix);
        }
    }
    None
}

fn parse_with(b: &[u8], body_len: usize, hash_len: usize, zero: bool) -> Option<Index> {
    let version = u32_at(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(b, 8)? as usize;
    let mut at = 12;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
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
        let path = if version == 4 {
            // A varint of the bytes dropped from the previous path, then
            // the rest of this one.
            let (drop, n) = varint(b.get(at..body_len)?)?;
            at += n;
            let keep = prev.len().checked_sub(usize::try_from(drop).ok()?)?;
            let end = at + b.get(at..body_len)?.iter().position(|c| *c == 0)?;
            let mut p = prev[..keep].to_vec();
            p.extend_from_slice(&b[at..end]);
            at = end + 1;
            p
        } else {
            let end = at + b.get(at..body_len)?.iter().position(|c| *c == 0)?;
            let p = b[at..end].to_vec();
            // Padded with NULs to a multiple of 8 bytes (1 to 8 of them).
            at = start + ((end - start + 8) & !7);
            p
        };
        if at > body_len {
            return None;
        }
        prev.clone_from(&path);
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
    Some(Index {
        entries,
        extensions,
        hash_len,
        skip_hash: zero,
    })
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
/// if there was one). `protected` says whether a path of the repository
/// (relative to its top, `/`-separated; with whether the host's index
/// tracked it) is one the run could not write.
pub fn vet(old: Option<&[u8]>, new: &[u8], protected: &dyn Fn(&[u8], bool) -> bool) -> Verdict {
    if old == Some(new) {
        return Verdict::Keep;
    }
    let Some(ix) = parse(new) else {
        return Verdict::Refuse(
            "the index the run left does not parse as git's index: the host's is kept".into(),
        );
    };
    let before = old.and_then(parse);
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
    if ix.extensions.iter().any(|(s, _, _)| s == b"link") && !had(b"link") {
        return Verdict::Refuse(
            "the run made the index a split index (its entries live in another file): the \
             host's index is kept"
                .into(),
        );
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
pub fn staged_oid(b: &[u8], path: &[u8]) -> Option<String> {
    let ix = parse(b)?;
    let e = ix
        .entries
        .iter()
        .find(|e| e.path == path && e.stage() == 0)?;
    Some(e.oid.iter().map(|x| format!("{x:02x}")).collect())
}

/// The stage-0 entries of the index `b`: path, mode, object id (hex).
pub fn staged_entries(b: &[u8]) -> Option<Vec<(Vec<u8>, u32, String)>> {
    let ix = parse(b)?;
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

/// SHA-1 (git's index checksum; not used for anything secret).
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, c) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
#[path = "index_vet_tests.rs"]
mod tests;
