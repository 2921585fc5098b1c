//! Host servers' unix sockets inside every grant (SECURITY.md's gap:
//! a socket under the read-only `/opt` grant, or any read grant, was
//! connectable). Landlock governs making a socket (`MAKE_SOCK`), not
//! `connect(2)` on a pathname socket, and reading a grant needs no write
//! permission on the socket file: a listening host server there (a
//! database with trust authentication, a container engine, an editor's
//! IPC) would take commands from the run under any network policy.
//!
//! The sockets are not looked for by walking the grants (issue 30: the
//! start-up must not grow with the trees): the kernel lists every bound
//! pathname socket of the network namespace in `/proc/net/unix`, so one
//! read of it, filtered by the grants, names them all. Each one found
//! inside a grant is hidden by inode like the walk's
//! ([`crate::linux::plan::FsOp::Mask`] with `pin`). The layered workspace
//! is left out: overlayfs connects to no socket of its lower layer (ADR
//! 0259).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::socket_identity as identity;
use super::socket_places as places;
use super::{Op, ReserveNotes};
use crate::linux::plan::FsOp;

/// Where the kernel lists the bound unix sockets of this network
/// namespace.
const PROC_NET_UNIX: &str = "/proc/net/unix";

/// Bytes of the list read at most (about 400,000 sockets).
const MAX_BYTES: u64 = 32 << 20;

/// Distinct socket names looked at, at most.
const MAX_NAMES: usize = 65_536;

/// One bound socket of the list: its name as bound (absolute or
/// relative), its sockfs inode, whether it listens.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Bound {
    pub(super) name: PathBuf,
    pub(super) ino: u64,
    pub(super) listening: bool,
}

/// The named sockets `text` (the list's format) lists, each absolute name
/// once. The name is the eighth column, to the end of the line (names may
/// hold spaces); abstract (`@`) names are left out.
pub(super) fn bound_names(text: &str) -> Vec<Bound> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    // A name may hold a newline (the kernel prints it raw): a line that
    // does not open with the entry's `address:` column continues the
    // name above it (atk22o F11).
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines().skip(1) {
        let entry = line
            .split_once(": ")
            .is_some_and(|(a, _)| !a.is_empty() && a.bytes().all(|b| b.is_ascii_hexdigit()));
        match lines.last_mut() {
            Some(last) if !entry => {
                last.push('\n');
                last.push_str(line);
            }
            _ => lines.push(line.to_string()),
        }
    }
    for line in &lines {
        let mut rest = line.as_str();
        let mut cols = Vec::with_capacity(7);
        for _ in 0..7 {
            rest = rest.trim_start_matches(' ');
            match rest.find(' ') {
                Some(i) => {
                    cols.push(&rest[..i]);
                    rest = &rest[i..];
                }
                None => break,
            }
        }
        let name = rest.strip_prefix(' ').unwrap_or(rest);
        if cols.len() < 7 || name.is_empty() || name.starts_with('@') {
            continue;
        }
        let listening = u32::from_str_radix(cols[3], 16).is_ok_and(|f| f & 0x10000 != 0);
        let ino = cols[6].parse().unwrap_or(0);
        if name.starts_with('/') && !seen.insert(name) {
            continue;
        }
        out.push(Bound {
            name: PathBuf::from(name),
            ino,
            listening,
        });
        if out.len() >= MAX_NAMES {
            break;
        }
    }
    out
}

/// The grants whose content the run sees as the host's (binds of any
/// access), without the copy-on-write workspace.
fn grant_roots(fs: &[FsOp]) -> Vec<PathBuf> {
    let layers: Vec<&Path> = fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Layer { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    fs.iter()
        .filter_map(|o| match o {
            FsOp::Bind { path, .. } | FsOp::IdmapBind { path, .. } => Some(path.clone()),
            _ => None,
        })
        .filter(|p| !layers.contains(&p.as_path()))
        .collect()
}

/// Hide every host socket `/proc/net/unix` names inside a grant of
/// `fs`: each becomes a pinned mask in `ops` (unless already there). A
/// relative name is found through its owner's working directory, a
/// renamed socket in the directory it was bound in, and every other name
/// of the file through bind mounts is hidden too (atk22n F1); a listening
/// one whose file is not at that name (renamed into another directory,
/// its relative owner moved away) is looked for by the file's identity
/// in the grants ([`identity`]). A listening socket that cannot be found
/// makes the run go without unix sockets, and says so.
pub(super) fn hide(fs: &[FsOp], ops: &mut Vec<Op>, notes: &mut ReserveNotes) {
    use std::io::Read;
    let roots = grant_roots(fs);
    if roots.is_empty() {
        return;
    }
    let mut text = String::new();
    let read = std::fs::File::open(PROC_NET_UNIX)
        .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text));
    if let Err(e) = read {
        notes.degraded.push(format!(
            "{PROC_NET_UNIX} could not be read ({e}): host servers' unix sockets inside the \
             read-only grants are not hidden"
        ));
        return;
    }
    let list = bound_names(&text);
    let relative: Vec<u64> = list
        .iter()
        .filter(|b| b.name.is_relative())
        .map(|b| b.ino)
        .take(MAX_RELATIVE)
        .collect();
    let owners = places::owner_dirs(&relative);
    let mut mi = String::new();
    let _ = std::fs::File::open("/proc/self/mountinfo")
        .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut mi));
    let ms = places::mounts(&mi);
    let mut h = Hider {
        roots: &roots,
        ms: &ms,
        parents: HashMap::new(),
        scanned: Vec::new(),
        lost: 0,
        ops,
        notes,
    };
    // Each listening socket's file by identity (issue 22, eighth round):
    // one not at its listed name is looked for by it below.
    let ids = identity::listening();
    let mut unplaced = std::collections::HashSet::new();
    for b in &list {
        let id = ids.as_ref().and_then(|m| m.get(&b.ino)).copied();
        let name = if b.name.is_relative() {
            owners.get(&b.ino).map(|cwd| cwd.join(&b.name))
        } else {
            Some(b.name.clone())
        };
        if let Some(id) = id
            && !name.as_deref().is_some_and(|n| identity::at_name(n, id))
        {
            unplaced.insert(id);
        }
        match name {
            Some(name) => h.one(&name, b.listening && id.is_none()),
            None if b.listening && id.is_none() => h.lost += 1,
            None => {}
        }
    }
    if !unplaced.is_empty() {
        match identity::find(&roots, &unplaced) {
            Some(found) => found.iter().for_each(|p| h.file(p)),
            None => h.lost += unplaced.len(),
        }
    }
    if h.lost > 0 {
        // (Fails closed: the run makes no unix socket, as when the walk is
        // cut, ADR 0204.)
        let lost = h.lost;
        h.notes.walk_cut.get_or_insert_with(|| {
            format!(
                "{lost} listening host unix socket(s) bound by a relative name (or renamed) \
                 could not be located (their owner's working directory or directory is not \
                 readable by this user, or the search for their file by identity reached its \
                 bound): one inside a read grant would take the run's \
                 connections, so unix sockets are unavailable in this run"
            )
        });
    }
}

/// Relative names whose owners are looked for, at most.
const MAX_RELATIVE: usize = 4096;

struct Hider<'a> {
    roots: &'a [PathBuf],
    ms: &'a [places::Mount],
    /// Parents resolved once each (sockets gather in a few directories).
    parents: HashMap<PathBuf, Option<PathBuf>>,
    /// Directories looked in for renamed sockets.
    scanned: Vec<PathBuf>,
    /// Listening sockets not found.
    lost: usize,
    ops: &'a mut Vec<Op>,
    notes: &'a mut ReserveNotes,
}

impl Hider<'_> {
    fn in_grant(&self, p: &Path) -> bool {
        self.roots.iter().any(|r| p.starts_with(r))
    }

    /// `p` or another name of it through a mount lies in a grant.
    fn reachable(&self, p: &Path) -> bool {
        self.in_grant(p)
            || places::other_names(p, self.ms)
                .iter()
                .any(|q| self.in_grant(q))
    }

    /// The socket bound as the absolute `name`.
    fn one(&mut self, name: &Path, listening: bool) {
        use std::os::unix::fs::FileTypeExt;
        let (Some(parent), Some(file)) = (name.parent(), name.file_name()) else {
            return;
        };
        let real_parent = self
            .parents
            .entry(parent.to_path_buf())
            .or_insert_with(|| std::fs::canonicalize(parent).ok())
            .clone();
        let Some(dir) = real_parent else {
            // (Its directory is gone: a socket whose name nobody reaches.)
            return;
        };
        let real = dir.join(file);
        if std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_socket()) {
            self.file(&real);
            return;
        }
        // Renamed (or removed) since it was bound: every socket of its
        // directory, when that is reachable from a grant.
        if !self.reachable(&dir) || self.scanned.contains(&dir) {
            return;
        }
        self.scanned.push(dir.clone());
        match places::sockets_in(&dir) {
            Some(all) => all.iter().for_each(|s| self.file(s)),
            None if listening => self.lost += 1,
            None => {}
        }
    }

    /// Hide the socket file `real` and its other names inside a grant.
    fn file(&mut self, real: &Path) {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let Ok(m) = std::fs::symlink_metadata(real) else {
            return;
        };
        let id = (m.dev(), m.ino());
        let mut names = vec![real.to_path_buf()];
        names.extend(places::other_names(real, self.ms));
        for p in names {
            if !self.in_grant(&p) || self.ops.iter().any(|(q, _, _)| *q == p) {
                continue;
            }
            let same = std::fs::symlink_metadata(&p)
                .is_ok_and(|n| n.file_type().is_socket() && (n.dev(), n.ino()) == id);
            if !same {
                continue;
            }
            self.notes.socket_pins.push((p.clone(), id));
            self.notes.info.push(format!(
                "unix socket {} inside a grant: hidden (a host server listens there)",
                p.display()
            ));
            self.ops.push((p, false, true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_eighth_column_to_the_end_of_the_line_relative_ones_kept() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20000 /run/a.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 20001 /run/a.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20002 @abstract\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 20003\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20004 /opt/x/with space.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20005 rel.sock\n";
        let got: Vec<(String, u64, bool)> = bound_names(text)
            .into_iter()
            .map(|b| (b.name.display().to_string(), b.ino, b.listening))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/run/a.sock".into(), 20000, true),
                ("/opt/x/with space.sock".into(), 20004, true),
                ("rel.sock".into(), 20005, true),
            ]
        );
    }

    #[test]
    fn a_name_holding_a_newline_is_read_whole() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20000 /opt/a\n\
            b.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/c.sock\n";
        let got: Vec<String> = bound_names(text)
            .into_iter()
            .map(|b| b.name.display().to_string())
            .collect();
        assert_eq!(
            got,
            vec!["/opt/a\nb.sock".to_string(), "/run/c.sock".into()]
        );
    }

    #[test]
    fn a_listener_named_with_a_newline_is_hidden() {
        let tmp = skarn_test_support::TempDir::new("host-sockets-nl");
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        let s = dir.join("a\nb.sock");
        let _l = std::os::unix::net::UnixListener::bind(&s).unwrap();
        let fs = vec![FsOp::Bind {
            path: dir.clone(),
            access: crate::linux::plan::Access::Read,
        }];
        let (mut ops, mut notes) = (Vec::new(), ReserveNotes::default());
        hide(&fs, &mut ops, &mut notes);
        assert!(ops.iter().any(|o| o.0 == s), "{ops:?}");
    }

    #[test]
    fn a_listener_in_a_read_grant_is_hidden_by_inode() {
        let tmp = skarn_test_support::TempDir::new("host-sockets");
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        let s = dir.join("srv.sock");
        let _l = std::os::unix::net::UnixListener::bind(&s).unwrap();
        let fs = vec![FsOp::Bind {
            path: dir.clone(),
            access: crate::linux::plan::Access::Read,
        }];
        let (mut ops, mut notes) = (Vec::new(), ReserveNotes::default());
        hide(&fs, &mut ops, &mut notes);
        assert_eq!(ops, vec![(s.clone(), false, true)]);
        assert_eq!(notes.socket_pins.len(), 1);
    }
}
