//! Undoing the reservation step after the run: placeholders, empty git
//! files and a stage for a new `.git` are removed (or moved into place)
//! under the workspace lock.

use std::path::{Path, PathBuf};

use crate::linux::plan::FsOp;
use crate::linux::sys;
use crate::protect::placeholder::is_placeholder;

/// What the reservation step made: the steps init mounts, the placeholders
/// of one run, its stage for a new `.git` and the run's shared lock on the
/// workspace directory: a run removes placeholders (and an empty `.git`)
/// only when it can take that lock exclusively, i.e. when no other run in
/// the same workspace still uses them.
pub(super) struct Reserved {
    /// The new-root steps with every protection resolved.
    pub(super) fs: Vec<FsOp>,
    pub(super) lock_fd: libc::c_int,
    pub(super) paths: Vec<PathBuf>,
    /// A copy-on-write run's missing protected paths: it makes no
    /// placeholder, but a direct run that overlapped it may have, and left
    /// them to the last run out (issue 24 item 14). Swept like `paths`.
    pub(super) sweep: Vec<PathBuf>,
    /// A copy-on-write run found no `.git`: an empty one a direct run
    /// staged meanwhile is removed by the last run out.
    pub(super) git_was_missing: bool,
    pub(super) stage: Option<PathBuf>,
    pub(super) ws: PathBuf,
    /// Files git would follow that were absent at the start and cannot be
    /// reserved (`commondir`): removed if the run created them.
    pub(super) absent: Vec<PathBuf>,
    /// Empty files made to reserve git configuration files, with their
    /// inode: removed like placeholders if still empty and the same file.
    pub(super) empties: Vec<(PathBuf, u64)>,
    /// Nested repositories found before the run.
    pub(super) nested: Vec<PathBuf>,
}

impl Reserved {
    /// Nothing reserved (no mount namespace): the plan's steps as they are.
    pub(super) fn nothing(fs: Vec<FsOp>, ws: PathBuf) -> Reserved {
        Reserved {
            fs,
            lock_fd: -1,
            paths: Vec::new(),
            sweep: Vec::new(),
            git_was_missing: false,
            stage: None,
            ws,
            absent: Vec::new(),
            empties: Vec::new(),
            nested: Vec::new(),
        }
    }

    /// Whether anything must be undone after the run.
    pub(super) fn leaves_anything(&self) -> bool {
        !self.paths.is_empty()
            || !self.sweep.is_empty()
            || self.stage.is_some()
            || !self.absent.is_empty()
            || !self.empties.is_empty()
    }
}

pub(super) fn open_dir(path: &Path) -> Option<libc::c_int> {
    let c = sys::cstr(path.as_os_str()).ok()?;
    // SAFETY: valid path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    (fd >= 0).then_some(fd)
}

pub(super) fn remove_empties(empties: &[(PathBuf, u64)]) {
    use std::os::unix::fs::MetadataExt;
    for (p, ino) in empties {
        if std::fs::symlink_metadata(p)
            .is_ok_and(|m| m.is_file() && m.ino() == *ino && m.len() == 0)
        {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Remove what the run created at paths that had to stay absent.
pub(super) fn remove_created(paths: &[PathBuf]) -> Vec<String> {
    let mut removed = Vec::new();
    for p in paths {
        if std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir())
            && is_placeholder(p).is_none()
            && std::fs::remove_file(p).is_ok()
        {
            removed.push(p.display().to_string());
        }
    }
    removed
}

pub(super) fn remove_placeholders(paths: &[PathBuf]) {
    for p in paths.iter().rev() {
        if is_placeholder(p).is_some() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Remove the placeholders another run left at `paths` or at one of their
/// ancestors below `ws` (a run reserves a missing path's first missing
/// component).
fn sweep_placeholders(ws: &Path, paths: &[PathBuf]) {
    for p in paths {
        for a in p.ancestors().take_while(|a| a.starts_with(ws) && *a != ws) {
            if is_placeholder(a).is_some() {
                let _ = std::fs::remove_file(a);
            }
        }
    }
}

/// Remove the placeholders if no other run holds the workspace lock, and
/// move a repository created in the sandbox into place (vetted).
pub(super) fn release(r: Reserved) {
    let removed = remove_created(&r.absent);
    if !removed.is_empty() {
        sys::write_fd(
            2,
            format!(
                "skarn: removed what the command created at {} (it redirects git)\n",
                removed.join(", ")
            )
            .as_bytes(),
        );
    }
    if r.lock_fd < 0 {
        return;
    }
    let mut exclusive = false;
    if !r.paths.is_empty() || !r.sweep.is_empty() || r.stage.is_some() || !r.empties.is_empty() {
        // SAFETY: lock_fd is open; a non-blocking exclusive attempt.
        exclusive = unsafe { libc::flock(r.lock_fd, libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if exclusive {
            remove_placeholders(&r.paths);
            sweep_placeholders(&r.ws, &r.sweep);
            remove_empties(&r.empties);
            let git = r.ws.join(".git");
            if r.git_was_missing
                && std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir())
                && std::fs::read_dir(&git).is_ok_and(|mut d| d.next().is_none())
            {
                let _ = std::fs::remove_dir(&git);
            }
        }
    }
    if let Some(stage) = &r.stage
        && let Some(msg) = crate::linux::staging::finalize(&r.ws, stage, exclusive)
    {
        sys::write_fd(2, format!("{msg}\n").as_bytes());
    }
    // SAFETY: closing our own fd (drops the lock).
    unsafe { libc::close(r.lock_fd) };
}
