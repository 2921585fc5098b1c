//! A host fact with everything it was read from (ADR 0339): paths
//! resolved as `realpath` resolves them, directories listed and files
//! read, each recorded with its stamp, so a record of the fact can be
//! checked again with one `lstat` per directory and file instead of
//! being worked out again.
//!
//! Why a check of the stamps is enough: a directory's entries (and so
//! whether a name is missing, a link and where it leads, a directory or
//! a file) cannot change without the directory's modification and change
//! times moving; a link's target cannot change at all (it is replaced, a
//! change of its directory); a file's content cannot change without its
//! change time moving; no process can set a change time; and a mount
//! over a directory changes its device and inode. Every directory a
//! resolution walks through (each prefix, `/` first) and each directory
//! listed is stamped; each file read is stamped when opened (before it is
//! read, so a change during the read moves its times past the stamp).
//! A directory a resolution only walks THROUGH (its next name is itself a
//! stamped directory) is kept by its identity alone (device, inode, a
//! directory: [`THROUGH`]; issue 30): its other entries do not make the
//! fact, and its next name's `lstat` by full path sees any replacement on
//! the way, so a busy `/tmp` above a `PATH` directory no longer makes
//! every record stale. Full stamps stay for directories listed or
//! asked about directly, final results, and parents of a link, a missing
//! name or a file. A stamp taken within [`SETTLE`] of a
//! change is not trusted (the fact is not kept; an identity has no
//! times and needs no settling); anything that could not
//! be stamped (a relative path, a link that vanished between `lstat` and
//! `readlink`) marks the fact unsure: not kept either.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

#[cfg(unix)]
use crate::state_file::{Fields, Stamp, Time};
// (Elsewhere nothing is stamped: every fact is unsure, never kept.)
#[cfg(not(unix))]
type Stamp = ();
#[cfg(not(unix))]
type Time = ();

/// How long a path must have been unchanged before its stamp is trusted
/// (as the directory listings' records, `protect::dir_listings`).
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Links followed at most in one resolution (as the kernel's limit).
const MAX_HOPS: usize = 40;

/// What a name is, by `lstat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir,
    File,
    /// A device, FIFO or socket.
    Other,
    Link(PathBuf),
    Missing,
}

/// What a recorded path was.
pub const DIR: u8 = 1;
pub const FILE: u8 = 2;
/// A directory walked through: only its device and inode are compared.
pub const THROUGH: u8 = 3;

/// The paths a fact depends on, with their stamps.
pub struct Deps {
    /// Each name's answer, with its stamp (a directory) and whether it
    /// made the fact unsure: kept across [`Deps::take`].
    seen: HashMap<PathBuf, (Node, Option<Stamp>, bool)>,
    stamps: BTreeMap<PathBuf, (u8, Stamp)>,
    /// Directories of this fact walked through to a stamped directory,
    /// and those that need their full stamp (see the module's text).
    through: HashSet<PathBuf>,
    full: HashSet<PathBuf>,
    settled_before: Time,
    /// Something could not be stamped.
    shaky: bool,
}

impl Default for Deps {
    fn default() -> Self {
        Deps::new()
    }
}

impl Deps {
    pub fn new() -> Deps {
        Deps {
            seen: HashMap::new(),
            stamps: BTreeMap::new(),
            through: HashSet::new(),
            full: HashSet::new(),
            #[cfg(unix)]
            settled_before: crate::state_file::settled_before(SETTLE),
            #[cfg(not(unix))]
            settled_before: (),
            shaky: false,
        }
    }

    /// Whether the fact cannot be kept: something could not be stamped,
    /// or a full stamp was taken within [`SETTLE`] of a change.
    pub fn unsure(&self) -> bool {
        self.shaky
            || self
                .kinds()
                .any(|(_, k, s)| k != THROUGH && !self.settled(s))
    }

    #[cfg(unix)]
    fn settled(&self, s: &Stamp) -> bool {
        s.settled(self.settled_before)
    }

    #[cfg(not(unix))]
    fn settled(&self, _: &Stamp) -> bool {
        false
    }

    /// Each stamp with its kind: a directory only walked through is
    /// [`THROUGH`].
    fn kinds(&self) -> impl Iterator<Item = (&PathBuf, u8, &Stamp)> {
        self.stamps.iter().map(|(p, (k, s))| {
            let through = *k == DIR && self.through.contains(p) && !self.full.contains(p);
            (p, if through { THROUGH } else { *k }, s)
        })
    }

    /// In a walk, `dir` was left for its entry `next`, which is `n`.
    fn walked(&mut self, dir: &Path, n: &Node) {
        if *n == Node::Dir {
            self.through.insert(dir.to_path_buf());
        } else {
            self.full.insert(dir.to_path_buf());
        }
    }

    #[cfg(unix)]
    fn stamp(&mut self, p: &Path, kind: u8, md: &std::fs::Metadata) -> Option<Stamp> {
        let s = Stamp::of(md);
        self.keep(p, kind, s);
        Some(s)
    }

    #[cfg(unix)]
    fn keep(&mut self, p: &Path, kind: u8, s: Stamp) {
        self.stamps.insert(p.to_path_buf(), (kind, s));
    }

    #[cfg(not(unix))]
    fn stamp(&mut self, _: &Path, _: u8, _: &std::fs::Metadata) -> Option<Stamp> {
        let _ = (&self.stamps, self.settled_before);
        self.shaky = true;
        None
    }

    #[cfg(not(unix))]
    fn keep(&mut self, _: &Path, _: u8, _: Stamp) {
        self.shaky = true;
    }

    /// What `p` (absolute, its parent resolved) is; a directory is stamped
    /// in full.
    pub fn node(&mut self, p: &Path) -> Node {
        let n = self.node_in_walk(p);
        if n == Node::Dir {
            self.full.insert(p.to_path_buf());
        }
        n
    }

    /// [`Deps::node`] in a walk (the walk says what the stamp must hold).
    fn node_in_walk(&mut self, p: &Path) -> Node {
        if let Some((n, s, shaky)) = self.seen.get(p).cloned() {
            self.shaky |= shaky;
            if let Some(s) = s {
                self.keep(p, DIR, s);
            }
            return n;
        }
        let was = std::mem::replace(&mut self.shaky, false);
        let mut stamp = None;
        let n = match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(p) {
                Ok(t) => Node::Link(t),
                Err(_) => {
                    self.shaky = true;
                    Node::Missing
                }
            },
            Ok(m) if m.is_dir() => {
                stamp = self.stamp(p, DIR, &m);
                Node::Dir
            }
            Ok(m) if m.is_file() => Node::File,
            Ok(_) => Node::Other,
            Err(_) => Node::Missing,
        };
        self.seen
            .insert(p.to_path_buf(), (n.clone(), stamp, self.shaky));
        self.shaky |= was;
        n
    }

    /// Where `p` leads as the kernel resolves it when a program opens or
    /// creates it ([`crate::protect::linked_targets::kernel_path`]: links
    /// followed, the first missing component ends the lookup and the rest
    /// is kept as written), every directory walked stamped. `None`: a
    /// loop, more than [`MAX_HOPS`] links, or a relative `p`.
    pub fn kernel_path(&mut self, p: &Path) -> Option<PathBuf> {
        if !p.is_absolute() {
            self.shaky = true;
            return None;
        }
        let mut todo: Vec<OsString> = Vec::new();
        push_parts(&mut todo, p);
        let mut out = PathBuf::from("/");
        self.node_in_walk(&out);
        let (mut hops, mut missing) = (0usize, false);
        while let Some(c) = todo.pop() {
            if c == ".." {
                out.pop();
                continue;
            }
            let next = out.join(&c);
            if !missing {
                let n = self.node_in_walk(&next);
                self.walked(&out, &n);
                match n {
                    Node::Link(t) => {
                        hops += 1;
                        if hops > MAX_HOPS {
                            return None;
                        }
                        if t.has_root() {
                            out = PathBuf::from("/");
                        }
                        push_parts(&mut todo, &t);
                        continue;
                    }
                    Node::Missing => missing = true,
                    _ => {}
                }
            }
            out = next;
        }
        self.full.insert(out.clone());
        Some(out)
    }

    /// The stamps taken since the last call (or since [`Deps::new`]) and
    /// whether that fact is unsure; the answers stay known (one working
    /// out can then keep several facts, each with its own stamps).
    #[cfg(unix)]
    pub fn take(&mut self) -> (Vec<(PathBuf, u8, Stamp)>, bool) {
        let stamps = self.kinds().map(|(p, k, s)| (p.clone(), k, *s)).collect();
        let unsure = self.unsure();
        self.stamps.clear();
        self.through.clear();
        self.full.clear();
        self.shaky = false;
        (stamps, unsure)
    }

    /// `p` resolved as `realpath` does (every link, `..` after it), with
    /// what it is (never a link or missing); `None` where `realpath` fails.
    pub fn resolve(&mut self, p: &Path) -> Option<(PathBuf, Node)> {
        if !p.is_absolute() {
            self.shaky = true;
            let r = std::fs::canonicalize(p).ok()?;
            let n = if r.is_dir() { Node::Dir } else { Node::File };
            return Some((r, n));
        }
        let mut todo: Vec<OsString> = Vec::new();
        push_parts(&mut todo, p);
        let mut cur = PathBuf::from("/");
        if self.node_in_walk(&cur) != Node::Dir {
            return None;
        }
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            if c == ".." {
                cur.pop();
                continue;
            }
            let next = cur.join(&c);
            let n = self.node_in_walk(&next);
            self.walked(&cur, &n);
            match n {
                Node::Dir => cur = next,
                Node::Link(t) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return None;
                    }
                    if t.has_root() {
                        cur = PathBuf::from("/");
                    }
                    push_parts(&mut todo, &t);
                }
                Node::Missing => return None,
                n @ (Node::File | Node::Other) => return todo.is_empty().then_some((next, n)),
            }
        }
        self.full.insert(cur.clone());
        Some((cur, Node::Dir))
    }

    /// Opens `p` (canonical, a regular file) for reading, stamped first.
    pub fn open_file(&mut self, p: &Path) -> Option<std::fs::File> {
        let f = std::fs::File::open(p).ok()?;
        let md = f.metadata().ok()?;
        if !md.is_file() {
            return None;
        }
        self.stamp(p, FILE, &md);
        Some(f)
    }

    #[cfg(unix)]
    /// The stamps' bytes (kept with the fact).
    pub fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(&u32::try_from(self.stamps.len()).ok()?.to_le_bytes());
        for (p, k, s) in self.kinds() {
            out.push(k);
            s.put(out);
            put_bytes(out, p.as_os_str().as_bytes())?;
        }
        Some(())
    }
}

/// The components of `p` on the stack `todo`, the first on top (`.`,
/// the root and empty names left out).
fn push_parts(todo: &mut Vec<OsString>, p: &Path) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    todo.extend(parts.into_iter().rev());
}

#[cfg(unix)]
/// Appends a length (u32) and `b`.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) -> Option<()> {
    out.extend_from_slice(&u32::try_from(b.len()).ok()?.to_le_bytes());
    out.extend_from_slice(b);
    Some(())
}

#[cfg(unix)]
/// Bytes of [`put_bytes`] taken from `r`.
pub fn take_bytes<'a>(r: &mut Fields<'a>) -> Option<&'a [u8]> {
    let n = r.u32()? as usize;
    r.bytes(n)
}

#[cfg(unix)]
/// A path of [`put_bytes`] taken from `r`.
pub fn take_path(r: &mut Fields<'_>) -> Option<PathBuf> {
    Some(PathBuf::from(OsString::from_vec(take_bytes(r)?.to_vec())))
}

#[cfg(unix)]
/// Whether every stamp kept in `r` (by [`Deps::put`]) is still the
/// path's: `None` when the record is cut, `Some(false)` on any change.
/// A record that kept no stamp at all never holds: every working-out
/// depends on some path, and 41 bytes of "no stamps, nothing found" would
/// otherwise hold forever wherever someone could write them (atk30a F2).
pub fn still(r: &mut Fields<'_>) -> Option<bool> {
    let n = r.u32()? as usize;
    if n == 0 {
        return Some(false);
    }
    let mut kept = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let k = r.bytes(1)?[0];
        let s = Stamp::take(r)?;
        let p = take_path(r)?;
        kept.push((k, s, p));
    }
    Some(kept.iter().all(|(k, s, p)| holds(p, *k, s)))
}

#[cfg(unix)]
/// Whether `p` is still what was stamped (`kind`, `s`).
pub fn holds(p: &Path, kind: u8, s: &Stamp) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| {
        let now = Stamp::of(&m);
        match kind {
            DIR => m.is_dir() && now == *s,
            FILE => m.is_file() && now == *s,
            THROUGH => m.is_dir() && now.id() == s.id(),
            _ => false,
        }
    })
}

#[cfg(test)]
#[path = "fact_deps_tests.rs"]
mod tests;
