//! Where a bound unix socket's file is when `/proc/net/unix` does not say
//! it (atk22n F1). The list gives the name as passed to `bind(2)`: a
//! relative one (the server's working directory then), or one the server
//! renamed since. And a file reached through a bind mount has a second
//! name the list never gives. Nothing here walks a tree: the owners'
//! descriptors are looked at only when a relative name is listed, a
//! renamed socket is looked for in the one directory it was bound in, and
//! the other names come from the mount table.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Processes looked at for the owners of relative names, at most.
const MAX_PIDS: usize = 65_536;
/// Descriptors of one process looked at, at most.
const MAX_FDS: usize = 65_536;
/// Entries of one directory looked at for renamed sockets, at most.
const MAX_DIR: usize = 4096;
/// Mounts read at most.
const MAX_MOUNTS: usize = 65_536;

/// The working directories of the processes holding the sockets whose
/// sockfs inodes are `inodes`, by inode (one look at every process's
/// descriptors; none when `inodes` is empty). Inodes no process holds
/// (or that could not be looked at) are missing.
pub(super) fn owner_dirs(inodes: &[u64]) -> HashMap<u64, PathBuf> {
    let mut out = HashMap::new();
    if inodes.is_empty() {
        return out;
    }
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten().take(MAX_PIDS) {
        let name = e.file_name();
        if !name.as_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let pid = e.path();
        let Ok(fds) = std::fs::read_dir(pid.join("fd")) else {
            continue;
        };
        for fd in fds.flatten().take(MAX_FDS) {
            let Ok(t) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let t = t.as_os_str().as_bytes();
            let Some(ino) = t
                .strip_prefix(b"socket:[")
                .and_then(|r| r.strip_suffix(b"]"))
                .and_then(|r| std::str::from_utf8(r).ok())
                .and_then(|r| r.parse::<u64>().ok())
            else {
                continue;
            };
            if inodes.contains(&ino)
                && !out.contains_key(&ino)
                && let Ok(cwd) = std::fs::read_link(pid.join("cwd"))
            {
                out.insert(ino, cwd);
            }
        }
        if out.len() == inodes.len() {
            break;
        }
    }
    out
}

/// The socket files directly in `dir` (a renamed socket stays in the
/// directory it was bound in); `None` when `dir` cannot be read or holds
/// more than can be looked at.
pub(super) fn sockets_in(dir: &Path) -> Option<Vec<PathBuf>> {
    use std::os::unix::fs::FileTypeExt;
    let mut out = Vec::new();
    for (k, e) in std::fs::read_dir(dir).ok()?.enumerate() {
        if k >= MAX_DIR {
            return None;
        }
        let e = e.ok()?;
        if e.file_type().is_ok_and(|t| t.is_socket()) {
            out.push(e.path());
        }
    }
    Some(out)
}

/// One mount: its device (`major:minor`), the path of its root in that
/// file system, and where it is mounted.
pub(super) struct Mount {
    dev: String,
    root: PathBuf,
    at: PathBuf,
}

/// A mount table field with its octal escapes (`\040`) decoded.
fn unescape(s: &str) -> PathBuf {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    PathBuf::from(std::ffi::OsStr::from_bytes(&out))
}

/// The mounts of `/proc/self/mountinfo`'s text.
pub(super) fn mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .take(MAX_MOUNTS)
        .filter_map(|l| {
            let mut f = l.split(' ');
            let dev = f.nth(2)?.to_string();
            let root = unescape(f.next()?);
            let at = unescape(f.next()?);
            Some(Mount { dev, root, at })
        })
        .collect()
}

/// The other names of the file `p` through the mounts of its file system
/// whose root is at or above it (bind mounts of a directory above it):
/// each is the same file.
pub(super) fn other_names(p: &Path, ms: &[Mount]) -> Vec<PathBuf> {
    // The mount `p` is seen through: the last one mounted over the
    // longest place above it.
    let Some(m) = ms
        .iter()
        .enumerate()
        .filter(|(_, m)| p.starts_with(&m.at))
        .max_by_key(|(i, m)| (m.at.components().count(), *i))
        .map(|(_, m)| m)
    else {
        return Vec::new();
    };
    let Ok(rest) = p.strip_prefix(&m.at) else {
        return Vec::new();
    };
    let in_fs = m.root.join(rest);
    ms.iter()
        .filter(|o| o.dev == m.dev)
        .filter_map(|o| in_fs.strip_prefix(&o.root).ok().map(|r| o.at.join(r)))
        .filter(|q| q != p)
        .collect()
}

#[cfg(test)]
#[path = "socket_places_tests.rs"]
mod tests;
