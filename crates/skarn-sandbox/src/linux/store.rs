//! The workspace's store (issue 23, ADR 0175): what runs in one workspace
//! fetch into the toolchains' caches (cargo's registry, npm's, pip's and
//! uv's caches, Go's module cache) is kept for the next run in the same
//! workspace.
//!
//! Each cache a run may write is an overlayfs inside the sandbox: the
//! host's cache (when there is one) read-only below, the store's directory
//! for that cache writable above. The store lies in skarn's own state
//! directory (`~/.local/state/skarn/store/<key>`, mode 0700, a secret path
//! no run is granted), keyed by the workspace's canonical path: a run of
//! one workspace never sees another workspace's store, and no host tool
//! reads it (it is on no cache path or PATH a host tool uses). Only the
//! next sandboxed run of the same workspace reads it.
//!
//! One run at a time holds a store (an exclusive lock); a run that finds
//! it held works with discarded layers as before, and says so.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags};
use sha2::{Digest, Sha256};

/// The stores' directory, under the home directory.
pub const DIR: &str = ".local/state/skarn/store";
/// The file, in a store, naming its workspace.
const WS_FILE: &str = "workspace";
/// The file, in a cache's directory, naming the cache's path.
const PATH_FILE: &str = "path";
/// Most entries [`size`] counts before it stops (a bound on the walk).
const MAX_WALK: usize = 200_000;

/// Store errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another run of the workspace holds the store.
    #[error("the store {0} is in use by a running `skarn run` of this workspace")]
    InUse(PathBuf),
    /// The store's directory is not skarn's own (a link, another owner).
    #[error("{0} is not a directory of this user (a link, or another owner): not used")]
    NotOwn(PathBuf),
    /// A file system error.
    #[error("{path}: {err}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error.
        #[source]
        err: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |err| StoreError::Io {
        path: path.to_path_buf(),
        err,
    }
}

fn hex(bytes: &[u8], n: usize) -> String {
    bytes.iter().take(n).map(|b| format!("{b:02x}")).collect()
}

/// The directory of all stores for home directory `home`.
pub fn root(home: &Path) -> PathBuf {
    home.join(DIR)
}

/// The store of workspace `ws` (its canonical path) under `home`.
pub fn dir_for(home: &Path, ws: &Path) -> PathBuf {
    let d = Sha256::digest(ws.as_os_str().as_bytes());
    root(home).join(hex(&d, 16))
}

/// The upper and work directories, in store `store`, of the cache at
/// `cache` (a path inside the sandbox).
pub fn slot(store: &Path, cache: &Path) -> (PathBuf, PathBuf) {
    let d = Sha256::digest(cache.as_os_str().as_bytes());
    let base = store.join("c").join(hex(&d, 8));
    (base.join("u"), base.join("w"))
}

fn mkdir_own(p: &Path) -> Result<(), StoreError> {
    match std::fs::DirBuilder::new().mode(0o700).create(p) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err(p)(e)),
    }
    let md = std::fs::symlink_metadata(p).map_err(io_err(p))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !md.is_dir() || md.uid() != me {
        return Err(StoreError::NotOwn(p.to_path_buf()));
    }
    if md.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).map_err(io_err(p))?;
    }
    Ok(())
}

/// A store held by this run: the lock is released when the last process
/// holding its descriptor (the helper, init, the reaper) is gone.
#[derive(Debug)]
pub struct Held {
    /// The store's directory.
    pub dir: PathBuf,
    _lock: OwnedFd,
}

fn lock(dir: &Path) -> Result<OwnedFd, StoreError> {
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err(dir)(e.into()))?;
    rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)
        .map_err(|_| StoreError::InUse(dir.to_path_buf()))?;
    Ok(fd)
}

/// Make (when missing) and lock the store `dir` of workspace `ws`, and the
/// directories of `caches` in it. Every directory is this user's, mode
/// 0700; none is reached through a link.
pub fn open(dir: &Path, ws: &Path, caches: &[PathBuf]) -> Result<Held, StoreError> {
    let parent = dir.parent().unwrap_or(dir);
    // `~/.local/state/skarn` and above may be shared directories; the
    // stores' own directory and each store are this user's alone.
    if let Some(up) = parent.parent() {
        std::fs::create_dir_all(up).map_err(io_err(up))?;
    }
    mkdir_own(parent)?;
    mkdir_own(dir)?;
    let l = lock(dir)?;
    let ws_file = dir.join(WS_FILE);
    if !std::fs::symlink_metadata(&ws_file).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(&ws_file);
        std::fs::write(&ws_file, ws.as_os_str().as_bytes()).map_err(io_err(&ws_file))?;
    }
    mkdir_own(&dir.join("c"))?;
    for c in caches {
        let (u, w) = slot(dir, c);
        let base = u.parent().unwrap_or(&u);
        mkdir_own(base)?;
        mkdir_own(&u)?;
        mkdir_own(&w)?;
        let pf = base.join(PATH_FILE);
        if !std::fs::symlink_metadata(&pf).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&pf);
            std::fs::write(&pf, c.as_os_str().as_bytes()).map_err(io_err(&pf))?;
        }
    }
    Ok(Held {
        dir: dir.to_path_buf(),
        _lock: l,
    })
}

/// One store, as `skarn cache list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    /// The store's directory.
    pub dir: PathBuf,
    /// Its workspace (None: the name file is missing).
    pub workspace: Option<PathBuf>,
    /// Whether that workspace still exists.
    pub workspace_exists: bool,
    /// The caches it holds, with the bytes each holds.
    pub caches: Vec<(PathBuf, u64)>,
    /// Bytes in all.
    pub bytes: u64,
    /// Whether a run holds it now.
    pub in_use: bool,
}

fn read_small(p: &Path) -> Option<PathBuf> {
    let md = std::fs::symlink_metadata(p).ok()?;
    if !md.is_file() || md.len() > 4096 {
        return None;
    }
    let b = std::fs::read(p).ok()?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&b)))
}

/// Bytes held under `p` (no link followed; at most [`MAX_WALK`] entries).
pub fn size(p: &Path) -> u64 {
    let mut total = 0;
    let mut seen = 0;
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return total;
            }
            let Ok(md) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            total += md.blocks() * 512;
            if md.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

/// Every store under `home`.
pub fn list(home: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(root(home)) else {
        return out;
    };
    for e in rd.flatten() {
        let dir = e.path();
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let workspace = read_small(&dir.join(WS_FILE));
        let workspace_exists = workspace.as_ref().is_some_and(|w| w.is_dir());
        let mut caches = Vec::new();
        for c in std::fs::read_dir(dir.join("c"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some(path) = read_small(&c.path().join(PATH_FILE)) {
                caches.push((path, size(&c.path().join("u"))));
            }
        }
        caches.sort();
        let in_use = lock(&dir).is_err();
        out.push(Entry {
            bytes: caches.iter().map(|(_, b)| b).sum(),
            dir,
            workspace,
            workspace_exists,
            caches,
            in_use,
        });
    }
    out.sort_by(|a, b| a.workspace.cmp(&b.workspace));
    out
}

/// Remove store `dir` (refused while a run holds it). Directories the
/// command made unreadable (and overlayfs's work directory, mode 0) are
/// opened up first; no link is followed.
pub fn clear(dir: &Path) -> Result<(), StoreError> {
    let md = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    if !md.is_dir() {
        return Err(StoreError::NotOwn(dir.to_path_buf()));
    }
    let _held = lock(dir)?;
    open_up(dir, 0);
    std::fs::remove_dir_all(dir).map_err(io_err(dir))
}

/// Give the owner access to every directory under `dir` (bounded depth),
/// so that removal can list them.
fn open_up(dir: &Path, depth: u32) {
    if depth > 256 {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir()) {
            open_up(&e.path(), depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workspace_has_its_own_store_and_each_cache_its_own_slot() {
        let h = Path::new("/h");
        let a = dir_for(h, Path::new("/w/a"));
        let b = dir_for(h, Path::new("/w/b"));
        assert_ne!(a, b);
        assert!(a.starts_with("/h/.local/state/skarn/store"));
        assert_eq!(a, dir_for(h, Path::new("/w/a")));
        let (u1, w1) = slot(&a, Path::new("/h/.npm/_cacache"));
        let (u2, _) = slot(&a, Path::new("/h/.cache/pip"));
        assert_ne!(u1, u2);
        assert_eq!(u1.parent(), w1.parent());
    }

    #[test]
    fn open_list_clear() {
        let t = std::env::temp_dir().join(format!("skarn-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        let ws = t.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let dir = dir_for(&t, &ws);
        let cache = t.join(".cache/pip");
        let held = open(&dir, &ws, std::slice::from_ref(&cache)).unwrap();
        let (u, w) = slot(&dir, &cache);
        std::fs::write(u.join("wheel"), b"x").unwrap();
        std::fs::create_dir(w.join("work")).unwrap();
        std::fs::set_permissions(w.join("work"), std::fs::Permissions::from_mode(0o0)).unwrap();
        let l = list(&t);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].workspace.as_deref(), Some(ws.as_path()));
        assert!(l[0].in_use && l[0].workspace_exists);
        assert_eq!(l[0].caches[0].0, cache);
        assert!(matches!(clear(&dir), Err(StoreError::InUse(_))));
        drop(held);
        clear(&dir).unwrap();
        assert!(!dir.exists());
        assert!(list(&t).is_empty());
        std::fs::remove_dir_all(&t).unwrap();
    }
}
