//! Host sockets found by the identity of their file (issue 22, eighth
//! round), for those `/proc/net/unix` names where the file is not: one
//! renamed into another directory after its bind, or bound by a relative
//! name whose owner has left that directory since. The kernel's socket
//! diagnostics (`NETLINK_SOCK_DIAG`, `UNIX_DIAG_VFS`, what `ss -x -e`
//! shows) give every listening socket's file as (device, inode); a file
//! not at its listed name is looked for by that identity in the grants
//! on its device ([`find`]: one bounded walk, only when such a socket
//! exists; past the bound the caller fails closed, the run makes no unix
//! socket).

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A socket file's identity: (device as `stat` gives it, inode).
pub(super) type Id = (u64, u64);

/// Entries looked at by one search, at most.
const MAX_WALK: usize = 200_000;
/// Bytes of diagnostics read at most.
const MAX_BYTES: usize = 64 << 20;

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const UDIAG_SHOW_VFS: u32 = 0x2;
const UNIX_DIAG_VFS: u16 = 1;
const TCP_LISTEN: u32 = 10;

/// The file identity of every listening unix socket of this network
/// namespace, by its sockfs inode; `None` when the diagnostics cannot be
/// read.
pub(super) fn listening() -> Option<HashMap<u64, Id>> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened and is owned here only.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // nlmsghdr (16) + unix_diag_req (24).
    let mut req = [0u8; 40];
    req[0..4].copy_from_slice(&40u32.to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    req[6..8].copy_from_slice(&flags.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    req[16] = libc::AF_UNIX as u8;
    req[20..24].copy_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    req[28..32].copy_from_slice(&UDIAG_SHOW_VFS.to_ne_bytes());
    req[32..40].copy_from_slice(&[0xff; 8]);
    // SAFETY: the kernel address is zeroed (pid 0), `req` is valid for
    // its length.
    let sent = unsafe {
        let mut to: libc::sockaddr_nl = std::mem::zeroed();
        to.nl_family = libc::AF_NETLINK as u16;
        libc::sendto(
            sock.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&raw const to).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if sent != req.len() as isize {
        return None;
    }
    let mut out = HashMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0usize;
    loop {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            return None;
        }
        let n = n as usize;
        total += n;
        if total > MAX_BYTES {
            return None;
        }
        match parse(&buf[..n], &mut out) {
            Some(true) => return Some(out),
            Some(false) => {}
            None => return None,
        }
    }
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(i..i + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(i..i + 4)?.try_into().ok()?))
}

/// One datagram of the dump into `out`: `Some(true)` at its end,
/// `None` on an error or a malformed message.
fn parse(b: &[u8], out: &mut HashMap<u64, Id>) -> Option<bool> {
    let mut i = 0;
    while i + 16 <= b.len() {
        let len = u32_at(b, i)? as usize;
        let kind = u16_at(b, i + 4)?;
        if len < 16 || i + len > b.len() {
            return None;
        }
        if kind == libc::NLMSG_DONE as u16 {
            return Some(true);
        }
        if kind == libc::NLMSG_ERROR as u16 {
            return None;
        }
        // unix_diag_msg (16): family, type, state, pad, ino, cookie.
        let msg = &b[i + 16..i + len];
        let sock_ino = u64::from(u32_at(msg, 4)?);
        let mut a = 16;
        while a + 4 <= msg.len() {
            let alen = usize::from(u16_at(msg, a)?);
            let akind = u16_at(msg, a + 2)?;
            if alen < 4 || a + alen > msg.len() {
                break;
            }
            if akind == UNIX_DIAG_VFS && alen >= 12 {
                let ino = u64::from(u32_at(msg, a + 4)?);
                let kdev = u32_at(msg, a + 8)?;
                // The kernel's device number (major << 20 | minor) as
                // `stat` encodes it.
                let dev = libc::makedev(kdev >> 20, kdev & 0xf_ffff);
                out.insert(sock_ino, (dev, ino));
            }
            a += (alen + 3) & !3;
        }
        i += (len + 3) & !3;
    }
    Some(false)
}

/// Whether the socket file at `name` (its directory resolved) has the
/// inode of `id` (the device is not compared: a stacked file system may
/// show its own).
pub(super) fn at_name(name: &Path, id: Id) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Some(parent), Some(file)) = (name.parent(), name.file_name()) else {
        return false;
    };
    let Ok(dir) = std::fs::canonicalize(parent) else {
        return false;
    };
    std::fs::symlink_metadata(dir.join(file))
        .is_ok_and(|m| m.file_type().is_socket() && m.ino() == id.1)
}

/// The socket files in `roots` (walked on the devices of `want` only,
/// never through links) whose identity is in `want`; `None` when the
/// walk reached its bound or met a directory it may not list (not every
/// place was looked at).
pub(super) fn find(roots: &[PathBuf], want: &HashSet<Id>) -> Option<Vec<PathBuf>> {
    use std::os::unix::fs::{DirEntryExt, FileTypeExt, MetadataExt};
    let devs: HashSet<u64> = want.iter().map(|w| w.0).collect();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut todo: Vec<PathBuf> = roots
        .iter()
        .filter(|r| std::fs::metadata(r).is_ok_and(|m| devs.contains(&m.dev())))
        .cloned()
        .collect();
    let mut done: HashSet<Id> = HashSet::new();
    while let Some(d) = todo.pop() {
        let Ok(m) = std::fs::symlink_metadata(&d) else {
            continue;
        };
        if !done.insert((m.dev(), m.ino())) {
            continue;
        }
        let rd = match std::fs::read_dir(&d) {
            Ok(rd) => rd,
            // A directory this user cannot list may hold it: unsure.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return None,
            Err(_) => continue,
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return None;
            }
            // The entry's type and inode come with the listing: only a
            // socket whose inode is wanted, and a directory (for its
            // device), cost a `statx` (most entries are regular files).
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_socket() {
                if want.iter().any(|w| w.1 == e.ino())
                    && let Ok(m) = e.metadata()
                    && want.contains(&(m.dev(), m.ino()))
                {
                    out.push(e.path());
                }
            } else if ft.is_dir() {
                let Ok(m) = e.metadata() else { continue };
                if devs.contains(&m.dev()) {
                    todo.push(e.path());
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_listener_is_found_by_identity() {
        use std::os::unix::fs::MetadataExt;
        let tmp = skarn_test_support::TempDir::new("socket-identity");
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(dir.join("a")).unwrap();
        std::fs::create_dir(dir.join("b")).unwrap();
        let first = dir.join("a/s.sock");
        let l = std::os::unix::net::UnixListener::bind(&first).unwrap();
        let m = std::fs::metadata(&first).unwrap();
        let Some(all) = listening() else {
            // No socket diagnostics in this kernel: nothing to judge.
            return;
        };
        use std::os::fd::AsRawFd;
        let sock_ino = std::fs::read_link(format!("/proc/self/fd/{}", l.as_raw_fd()))
            .unwrap()
            .to_string_lossy()
            .trim_start_matches("socket:[")
            .trim_end_matches(']')
            .parse::<u64>()
            .unwrap();
        let id = all[&sock_ino];
        assert_eq!(id, (m.dev(), m.ino()));
        let moved = dir.join("b/t.sock");
        std::fs::rename(&first, &moved).unwrap();
        assert!(!at_name(&first, id));
        assert!(at_name(&moved, id));
        let want: HashSet<Id> = [id].into_iter().collect();
        assert_eq!(find(&[dir], &want), Some(vec![moved]));
    }
}
