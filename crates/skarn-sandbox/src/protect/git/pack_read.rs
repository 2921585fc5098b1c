//! Git's object stores read as git reads them (ADR 0257): a pack's index
//! (version 2: the sorted object ids, then their offsets), the pack's
//! entries (a type and size header, zlib data; deltas against an earlier
//! entry of the pack or an object named by id) and loose objects (zlib,
//! `<type> <size>\0`). Read in skarn's own process: the after-run checks
//! run where no child process can be started (the run's PID namespace is
//! gone). Every object read from a pack can be checked against its id
//! ([`hash_ok`]).

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Largest object inflated.
pub(crate) const MAX_OBJECT: usize = 64 << 20;
/// Delta chains followed, at most (git writes 50 by default).
const MAX_CHAIN: usize = 10_000;
/// Bytes of resolved objects kept for later deltas.
const CACHE_BYTES: usize = 128 << 20;

/// An object's type by git's pack numbering.
pub(crate) fn type_name(t: u8) -> &'static str {
    match t {
        1 => "commit",
        2 => "tree",
        3 => "blob",
        4 => "tag",
        _ => "",
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

/// Reads a delta base named by id that the pack lacks: its type number
/// and content.
pub(crate) type BaseById<'a> = dyn FnMut(&[u8]) -> Option<(u8, Vec<u8>)> + 'a;

/// One pack and its index.
pub(crate) struct Pack {
    file: std::fs::File,
    len: u64,
    /// The sorted object ids, `oid_len` bytes each.
    ids: Vec<u8>,
    offsets: Vec<u64>,
    oid_len: usize,
    cache: HashMap<u64, (u8, std::rc::Rc<Vec<u8>>)>,
    cached: usize,
}

impl Pack {
    /// Open the pack whose index is `idx` (the pack beside it).
    pub(crate) fn open(idx: &Path, oid_len: usize) -> std::io::Result<Pack> {
        let b = std::fs::read(idx)?;
        if b.get(..8) != Some(&[0xff, b't', b'O', b'c', 0, 0, 0, 2][..]) {
            return Err(bad("not a version 2 pack index"));
        }
        let u32_at = |at: usize| -> std::io::Result<u32> {
            Ok(u32::from_be_bytes(
                b.get(at..at + 4)
                    .ok_or_else(|| bad("short index"))?
                    .try_into()
                    .map_err(|_| bad("short index"))?,
            ))
        };
        let n = u32_at(8 + 255 * 4)? as usize;
        let ids_at = 8 + 256 * 4;
        let crc_at = ids_at + n * oid_len;
        let off_at = crc_at + n * 4;
        let large_at = off_at + n * 4;
        if b.len() < large_at {
            return Err(bad("short index"));
        }
        let ids = b[ids_at..crc_at].to_vec();
        if ids
            .chunks(oid_len)
            .zip(ids.chunks(oid_len).skip(1))
            .any(|(a, c)| a >= c)
        {
            return Err(bad("index ids out of order"));
        }
        let mut offsets = Vec::with_capacity(n);
        for i in 0..n {
            let o = u32_at(off_at + i * 4)?;
            let off = if o & 0x8000_0000 != 0 {
                let j = (o & 0x7fff_ffff) as usize;
                let at = large_at + j * 8;
                u64::from_be_bytes(
                    b.get(at..at + 8)
                        .ok_or_else(|| bad("short index"))?
                        .try_into()
                        .map_err(|_| bad("short index"))?,
                )
            } else {
                u64::from(o)
            };
            offsets.push(off);
        }
        let pack = idx.with_extension("pack");
        let file = std::fs::File::open(&pack)?;
        let len = file.metadata()?.len();
        Ok(Pack {
            file,
            len,
            ids,
            offsets,
            oid_len,
            cache: HashMap::new(),
            cached: 0,
        })
    }

    /// How many objects the index names.
    pub(crate) fn count(&self) -> usize {
        self.offsets.len()
    }

    /// The `i`th id of the index, in hex.
    pub(crate) fn id_hex(&self, i: usize) -> String {
        hex(&self.ids[i * self.oid_len..(i + 1) * self.oid_len])
    }

    /// The position of `id` (raw bytes) in the index.
    pub(crate) fn find(&self, id: &[u8]) -> Option<usize> {
        let n = self.count();
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let m = &self.ids[mid * self.oid_len..(mid + 1) * self.oid_len];
            match m.cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The indexes of the entries in pack order (bases before deltas).
    pub(crate) fn by_offset(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.count()).collect();
        v.sort_by_key(|i| self.offsets[*i]);
        v
    }

    /// The `i`th entry's type and content, deltas resolved (`other`
    /// reads a base named by id that this pack lacks).
    pub(crate) fn read(
        &mut self,
        i: usize,
        other: &mut BaseById<'_>,
    ) -> std::io::Result<(u8, std::rc::Rc<Vec<u8>>)> {
        let off = self.offsets[i];
        self.read_at(off, other, 0)
    }

    fn read_at(
        &mut self,
        off: u64,
        other: &mut BaseById<'_>,
        depth: usize,
    ) -> std::io::Result<(u8, std::rc::Rc<Vec<u8>>)> {
        if let Some((t, b)) = self.cache.get(&off) {
            return Ok((*t, b.clone()));
        }
        if depth > MAX_CHAIN || off >= self.len {
            return Err(bad("delta chain too deep or offset outside the pack"));
        }
        let mut head = [0u8; 64];
        let got = self.file.read_at(&mut head, off)?;
        let head = &head[..got];
        let mut at = 0;
        let next = |at: &mut usize| -> std::io::Result<u8> {
            let c = *head.get(*at).ok_or_else(|| bad("short entry header"))?;
            *at += 1;
            Ok(c)
        };
        let mut c = next(&mut at)?;
        let kind = (c >> 4) & 7;
        let mut size = u64::from(c & 15);
        let mut shift = 4;
        while c & 0x80 != 0 {
            c = next(&mut at)?;
            if shift > 56 {
                return Err(bad("entry size too large"));
            }
            size |= u64::from(c & 0x7f) << shift;
            shift += 7;
        }
        let size = usize::try_from(size).map_err(|_| bad("entry size"))?;
        if size > MAX_OBJECT {
            return Err(bad("an object larger than skarn reads"));
        }
        let base = match kind {
            6 => {
                c = next(&mut at)?;
                let mut rel = u64::from(c & 0x7f);
                while c & 0x80 != 0 {
                    c = next(&mut at)?;
                    rel = rel
                        .checked_add(1)
                        .and_then(|r| r.checked_shl(7))
                        .ok_or_else(|| bad("delta offset"))?
                        | u64::from(c & 0x7f);
                }
                let b = off.checked_sub(rel).filter(|b| *b < off);
                Some(Err(b.ok_or_else(|| bad("delta base offset"))?))
            }
            7 => {
                let id = head
                    .get(at..at + self.oid_len)
                    .ok_or_else(|| bad("short entry header"))?
                    .to_vec();
                at += self.oid_len;
                Some(Ok(id))
            }
            1..=4 => None,
            _ => return Err(bad("an unknown entry type")),
        };
        let data = self.inflate(off + at as u64, size)?;
        let (t, body) = match base {
            None => (kind, data),
            Some(b) => {
                let (bt, bb) = match b {
                    Err(boff) => self.read_at(boff, other, depth + 1)?,
                    Ok(id) => match self.find(&id) {
                        Some(j) => {
                            let o = self.offsets[j];
                            self.read_at(o, other, depth + 1)?
                        }
                        None => {
                            let (t, b) = other(&id).ok_or_else(|| bad("missing delta base"))?;
                            (t, std::rc::Rc::new(b))
                        }
                    },
                };
                (bt, apply_delta(&bb, &data)?)
            }
        };
        let body = std::rc::Rc::new(body);
        if self.cached + body.len() > CACHE_BYTES {
            self.cache.clear();
            self.cached = 0;
        }
        self.cached += body.len();
        self.cache.insert(off, (t, body.clone()));
        Ok((t, body))
    }

    fn inflate(&self, at: u64, size: usize) -> std::io::Result<Vec<u8>> {
        struct At<'a>(&'a std::fs::File, u64);
        impl Read for At<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.read_at(buf, self.1)?;
                self.1 += n as u64;
                Ok(n)
            }
        }
        let r = std::io::BufReader::new(At(&self.file, at));
        let mut z = flate2::bufread::ZlibDecoder::new(r).take(size as u64 + 1);
        let mut out = Vec::with_capacity(size);
        z.read_to_end(&mut out)?;
        if out.len() != size {
            return Err(bad("an entry's data does not match its size"));
        }
        Ok(out)
    }
}

/// Git's delta: the base's size, the result's, then copy and insert
/// instructions.
fn apply_delta(base: &[u8], d: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut at = 0;
    let varint = |at: &mut usize| -> std::io::Result<usize> {
        let mut v = 0usize;
        let mut shift = 0;
        loop {
            let c = *d.get(*at).ok_or_else(|| bad("short delta"))?;
            *at += 1;
            if shift > 56 {
                return Err(bad("delta size"));
            }
            v |= usize::from(c & 0x7f) << shift;
            shift += 7;
            if c & 0x80 == 0 {
                return Ok(v);
            }
        }
    };
    let src = varint(&mut at)?;
    let dst = varint(&mut at)?;
    if src != base.len() || dst > MAX_OBJECT {
        return Err(bad("a delta that does not fit its base"));
    }
    let mut out = Vec::with_capacity(dst);
    while at < d.len() {
        let op = d[at];
        at += 1;
        if op & 0x80 != 0 {
            let mut off = 0usize;
            let mut len = 0usize;
            for i in 0..4 {
                if op & (1 << i) != 0 {
                    off |= usize::from(*d.get(at).ok_or_else(|| bad("short delta"))?) << (8 * i);
                    at += 1;
                }
            }
            for i in 0..3 {
                if op & (0x10 << i) != 0 {
                    len |= usize::from(*d.get(at).ok_or_else(|| bad("short delta"))?) << (8 * i);
                    at += 1;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            let piece = base
                .get(off..off.checked_add(len).ok_or_else(|| bad("delta copy"))?)
                .ok_or_else(|| bad("a delta copy outside its base"))?;
            out.extend_from_slice(piece);
        } else if op != 0 {
            let n = usize::from(op);
            out.extend_from_slice(d.get(at..at + n).ok_or_else(|| bad("short delta"))?);
            at += n;
        } else {
            return Err(bad("a delta instruction git never writes"));
        }
        if out.len() > dst {
            return Err(bad("a delta longer than it says"));
        }
    }
    if out.len() != dst {
        return Err(bad("a delta shorter than it says"));
    }
    Ok(out)
}

/// A loose object under the objects directory `dir`: its type and body.
pub(crate) fn read_loose(dir: &Path, hex: &str) -> Option<(String, Vec<u8>)> {
    if hex.len() < 4 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let f = std::fs::File::open(dir.join(&hex[..2]).join(&hex[2..])).ok()?;
    let mut z = flate2::read::ZlibDecoder::new(f).take(MAX_OBJECT as u64 + 64);
    let mut raw = Vec::new();
    z.read_to_end(&mut raw).ok()?;
    let nul = raw.iter().position(|b| *b == 0)?;
    let head = std::str::from_utf8(&raw[..nul]).ok()?;
    let kind = head.split(' ').next()?.to_string();
    Some((kind, raw[nul + 1..].to_vec()))
}

/// Whether `body` of type `kind` is the object `id` (raw bytes; SHA-1 or
/// SHA-256 by its length).
pub(crate) fn hash_ok(id: &[u8], kind: &str, body: &[u8]) -> bool {
    use sha2::Digest;
    let mut all = format!("{kind} {}\0", body.len()).into_bytes();
    all.extend_from_slice(body);
    match id.len() {
        20 => crate::protect::git::index_vet::sha1(&all)[..] == *id,
        32 => sha2::Sha256::digest(&all)[..] == *id,
        _ => false,
    }
}

/// Bytes as lowercase hex.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Hex to bytes (`None` when it is not hex).
pub(crate) fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_copies_and_inserts() {
        // base "hello world" (11), result "hello there" (11): copy 6 at 0,
        // insert "there".
        let d = [11u8, 11, 0x90, 6, 5, b't', b'h', b'e', b'r', b'e'];
        assert_eq!(apply_delta(b"hello world", &d).unwrap(), b"hello there");
        assert!(apply_delta(b"short", &d).is_err());
        assert!(apply_delta(b"hello world", &[11, 11, 0]).is_err());
    }

    #[test]
    fn an_objects_id_is_checked() {
        // `git hash-object` of "hi\n".
        let id = unhex("45b983be36b73c0788dc9cbcb76cbb80fc7bb057").unwrap();
        assert!(hash_ok(&id, "blob", b"hi\n"));
        assert!(!hash_ok(&id, "blob", b"ho\n"));
    }
}
