//! The mode an entry put back into the workspace gets (attack atk22k F5).
//! A run may narrow what the host allows, never widen it for other local
//! accounts: `chmod 0777 .git`, `chmod 0666 .git/config` or a new hook
//! directory made 0777 inside a run would let another account of the
//! machine write a hook that host git then runs as the user. So group and
//! other write, set-user-ID, set-group-ID and sticky bits are kept only
//! where the host's entry of the same kind already had them; a new entry
//! gets none of them (at most what a `022` umask leaves).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, FileType, Mode};

use super::MAX_DEPTH;
use super::at::{list, lstat_at, open_dir};

/// The bits a run never adds: set-user-ID, set-group-ID, sticky, group
/// write, other write.
pub(crate) const NEVER_GAINED: u32 = 0o7022;

/// The permission bits an entry of mode `run` (the layer's) gets in the
/// workspace, over the host's entry of mode `host` (none: a new entry;
/// one of another kind counts as none).
pub(crate) fn allowed(run: u32, host: Option<u32>) -> u32 {
    let kind = FileType::from_raw_mode(run);
    let had = host
        .filter(|h| FileType::from_raw_mode(*h) == kind)
        .map_or(0, |h| h & NEVER_GAINED);
    (run & 0o7777 & !NEVER_GAINED) | (run & had)
}

/// Give the layer's entry `n` of `upper` (`st`: its status) the mode
/// [`allowed`] over the host's entry `there`, before it is moved into
/// the workspace (so no other account can open it in between). Links
/// have no mode of their own. Returns `st` with that mode.
pub(super) fn narrow_in_layer(
    upper: BorrowedFd<'_>,
    n: &OsStr,
    st: &rustix::fs::Stat,
    there: Option<&rustix::fs::Stat>,
) -> io::Result<rustix::fs::Stat> {
    let mut out = *st;
    if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
        return Ok(out);
    }
    let m = allowed(st.st_mode, there.map(|t| t.st_mode));
    if m != st.st_mode & 0o7777 {
        rustix::fs::chmodat(upper, n, Mode::from_raw_mode(m), AtFlags::empty())?;
        out.st_mode = (st.st_mode & !0o7777) | m;
    }
    Ok(out)
}

/// Narrow every entry below the directory `dir` of the layer (a
/// repository the run made, moved into the workspace whole) as new
/// entries, never through a link.
pub(super) fn narrow_new_tree(dir: BorrowedFd<'_>, depth: usize) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(io::Error::other("too deep"));
    }
    for n in list(dir)? {
        let Some(st) = lstat_at(dir, &n) else {
            continue;
        };
        narrow_in_layer(dir, &n, &st, None)?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            let sub = open_dir(dir, &n)?;
            narrow_new_tree(sub.as_fd(), depth + 1)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "modes_tests.rs"]
mod tests;
