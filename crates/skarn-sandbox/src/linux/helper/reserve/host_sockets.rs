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

use super::{Op, ReserveNotes};
use crate::linux::plan::FsOp;

/// Where the kernel lists the bound unix sockets of this network
/// namespace.
const PROC_NET_UNIX: &str = "/proc/net/unix";

/// Bytes of the list read at most (about 400,000 sockets).
const MAX_BYTES: u64 = 32 << 20;

/// Distinct socket names looked at, at most.
const MAX_NAMES: usize = 65_536;

/// The absolute names of the sockets `text` (the list's format) lists,
/// each once. The name is the eighth column, to the end of the line
/// (names may hold spaces); abstract (`@`) and relative names are left
/// out.
pub(super) fn bound_names(text: &str) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let mut rest = line;
        let mut ok = true;
        for _ in 0..7 {
            rest = rest.trim_start_matches(' ');
            match rest.find(' ') {
                Some(i) => rest = &rest[i..],
                None => {
                    ok = false;
                    break;
                }
            }
        }
        let name = rest.strip_prefix(' ').unwrap_or(rest);
        if ok && name.starts_with('/') && seen.insert(name) {
            out.push(PathBuf::from(name));
            if out.len() >= MAX_NAMES {
                break;
            }
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
/// `fs`: each becomes a pinned mask in `ops` (unless already there).
pub(super) fn hide(fs: &[FsOp], ops: &mut Vec<Op>, notes: &mut ReserveNotes) {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
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
    // Parents resolved once each (sockets gather in a few directories).
    let mut parents: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for name in bound_names(&text) {
        let (Some(parent), Some(file)) = (name.parent(), name.file_name()) else {
            continue;
        };
        let real_parent = parents
            .entry(parent.to_path_buf())
            .or_insert_with(|| std::fs::canonicalize(parent).ok())
            .clone();
        let Some(real) = real_parent.map(|p| p.join(file)) else {
            continue;
        };
        if !roots.iter().any(|r| real.starts_with(r)) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&real) else {
            continue;
        };
        if !m.file_type().is_socket() || ops.iter().any(|(p, _, _)| *p == real) {
            continue;
        }
        notes.socket_pins.push((real.clone(), (m.dev(), m.ino())));
        notes.info.push(format!(
            "unix socket {} inside a grant: hidden (a host server listens there)",
            real.display()
        ));
        ops.push((real, false, true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_eighth_column_to_the_end_of_the_line() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20000 /run/a.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 20001 /run/a.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20002 @abstract\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 20003\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20004 /opt/x/with space.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20005 rel.sock\n";
        assert_eq!(
            bound_names(text),
            vec![
                PathBuf::from("/run/a.sock"),
                PathBuf::from("/opt/x/with space.sock")
            ]
        );
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
