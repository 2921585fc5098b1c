//! The refs of a repository that keeps them in the reftable format
//! (`extensions.refStorage = reftable`, attack atk22h F40), read as git
//! reads them: `reftable/tables.list` names the tables, oldest first; each
//! table's ref blocks hold prefix-compressed records, a newer table's
//! record (or deletion) of a name wins. Only what the ref checks need is
//! read (names and values of the ref blocks; logs, indexes and object
//! blocks are skipped). Anything that does not parse is `None`: the
//! caller fails closed.

use std::collections::BTreeMap;

/// Tables read per stack, at most.
const MAX_TABLES: usize = 1_024;
/// Largest table read.
pub(crate) const MAX_TABLE: u64 = 256 << 20;
/// Records read per table, at most.
const MAX_RECORDS: usize = 4_000_000;

/// A ref's value: an object id (raw), or a symbolic ref's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Oid(Vec<u8>),
    Symref(String),
}

fn u24(b: &[u8], at: usize) -> Option<usize> {
    let s = b.get(at..at + 3)?;
    Some((usize::from(s[0]) << 16) | (usize::from(s[1]) << 8) | usize::from(s[2]))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Git's variable-length integer (as in offset deltas).
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut c = *b.get(*at)?;
    *at += 1;
    let mut v = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *b.get(*at)?;
        *at += 1;
        v = v.checked_add(1)?.checked_mul(128)? | u64::from(c & 0x7f);
    }
    Some(v)
}

/// The ref records of one table, in order: name and value (`None`: a
/// deletion).
pub(crate) fn table_refs(b: &[u8]) -> Option<Vec<(String, Option<Value>)>> {
    if b.get(..4)? != b"REFT" {
        return None;
    }
    let version = *b.get(4)?;
    let (head, foot, hash) = match version {
        1 => (24, 68, 20),
        2 => {
            let id = b.get(24..28)?;
            let hash = match id {
                b"sha1" => 20,
                b"s256" => 32,
                _ => return None,
            };
            (28, 72, hash)
        }
        _ => return None,
    };
    let f = b.len().checked_sub(foot)?;
    if f < head || b.get(f..f + head)? != b.get(..head)? {
        return None;
    }
    // Where the ref blocks end: the first section after them, or the
    // footer.
    let ref_index = u64_at(b, f + head)?;
    let obj = u64_at(b, f + head + 8)? >> 5;
    let log = u64_at(b, f + head + 24)?;
    let end = [ref_index, obj, log]
        .into_iter()
        .filter(|x| *x != 0)
        .min()
        .map_or(f, |x| usize::try_from(x).unwrap_or(usize::MAX).min(f));
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut type_at = head;
    while type_at < end {
        if b[type_at] == 0 {
            // Padding up to the next block.
            type_at += 1;
            start = type_at;
            continue;
        }
        if b[type_at] != b'r' {
            break;
        }
        let len = u24(b, type_at + 1)?;
        let block_end = start.checked_add(len)?;
        if block_end > end || len < 2 {
            return None;
        }
        let restarts = usize::from(u16::from_be_bytes(
            b.get(block_end - 2..block_end)?.try_into().ok()?,
        ));
        let records_end = block_end.checked_sub(2 + 3 * restarts)?;
        let mut at = type_at + 4;
        let mut last: Vec<u8> = Vec::new();
        while at < records_end {
            if out.len() >= MAX_RECORDS {
                return None;
            }
            let prefix = usize::try_from(varint(b, &mut at)?).ok()?;
            let sv = varint(b, &mut at)?;
            let suffix = usize::try_from(sv >> 3).ok()?;
            let kind = sv & 7;
            if prefix > last.len() {
                return None;
            }
            let mut name = last[..prefix].to_vec();
            name.extend_from_slice(b.get(at..at.checked_add(suffix)?)?);
            at += suffix;
            varint(b, &mut at)?; // update index delta
            let value = match kind {
                0 => None,
                1 | 2 => {
                    let v = b.get(at..at + hash)?.to_vec();
                    at += hash * kind as usize;
                    Some(Value::Oid(v))
                }
                3 => {
                    let n = usize::try_from(varint(b, &mut at)?).ok()?;
                    let t = b.get(at..at.checked_add(n)?)?;
                    at += n;
                    Some(Value::Symref(String::from_utf8_lossy(t).into_owned()))
                }
                _ => return None,
            };
            out.push((String::from_utf8_lossy(&name).into_owned(), value));
            last = name;
        }
        if at != records_end {
            return None;
        }
        start = block_end;
        type_at = block_end;
    }
    Some(out)
}

/// The refs of a reftable stack: `list` is `tables.list`, `read` gives a
/// table's bytes by its name (`None`: unreadable, and so is the stack).
pub(crate) fn stack_refs(
    list: &[u8],
    read: &mut dyn FnMut(&str) -> Option<Vec<u8>>,
) -> Option<BTreeMap<String, Value>> {
    let mut refs = BTreeMap::new();
    for (i, name) in String::from_utf8_lossy(list)
        .lines()
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i >= MAX_TABLES || name.contains('/') || name.starts_with('.') {
            return None;
        }
        for (n, v) in table_refs(&read(name)?)? {
            match v {
                Some(v) => refs.insert(n, v),
                None => refs.remove(&n),
            };
        }
    }
    Some(refs)
}

/// The refs of the reftable directory `dir` (`None`: none there, or it
/// does not read whole).
pub(crate) fn dir_refs(dir: &std::path::Path) -> Option<BTreeMap<String, Value>> {
    let list = std::fs::read(dir.join("tables.list")).ok()?;
    stack_refs(&list, &mut |n| read_table(&dir.join(n)))
}

/// A table file within the size bound, not through a link.
pub(crate) fn read_table(p: &std::path::Path) -> Option<Vec<u8>> {
    let m = std::fs::symlink_metadata(p).ok()?;
    (m.is_file() && m.len() <= MAX_TABLE).then(|| std::fs::read(p).ok())?
}

/// The replace refs among `refs` (name and value).
pub(crate) fn replace_refs(refs: &BTreeMap<String, Value>) -> Vec<(String, Value)> {
    refs.iter()
        .filter(|(n, _)| n.starts_with("refs/replace/"))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
#[path = "reftable_read_tests.rs"]
mod tests;
