//! Where a run's layer lives: a private directory (mode 0700) on the
//! workspace's own file system when one can be found, so that applying a
//! change is a `rename(2)`, not a copy (ADR 0130).
//!
//! Candidates, in order: skarn's state directory
//! (`~/.local/state/skarn/layers`, a path no run is granted), then the
//! workspace's parent (a hidden `.skarn-layer-<random>`; overlayfs refuses
//! an upper directory inside its lower one). The first on the workspace's
//! device wins; when none is, the state directory holds the layer and
//! applying copies.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// The name of the file, inside a layer, holding its workspace's path.
pub(super) const WS_FILE: &str = "workspace";
/// Prefix of a layer directory in the workspace's parent.
pub const SIBLING_PREFIX: &str = ".skarn-layer-";
/// Prefix of a layer directory in the state directory.
const STATE_PREFIX: &str = "layer-";

/// One run's layer: `upper` and `work` for overlayfs, locked for the run.
#[derive(Debug)]
pub struct Layer {
    /// The layer's directory (mode 0700).
    pub base: PathBuf,
    /// Overlayfs's upper directory: what the run wrote.
    pub upper: PathBuf,
    /// Overlayfs's work directory.
    pub work: PathBuf,
    /// Whether `upper` lies on the workspace's file system (apply by
    /// rename).
    pub same_fs: bool,
    /// When the layer was made (seconds, nanoseconds of the realtime
    /// clock): workspace entries the host changed since are kept.
    pub since: (i64, i64),
    /// The exclusive lock held while the layer is in use: released when
    /// the last process holding it (the helper, init) is gone.
    pub(super) lock: OwnedFd,
}

impl Layer {
    /// The lock's descriptor (the reaper closes its copy).
    pub fn lock_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.lock.as_fd()
    }
}

/// The directories that may hold layers of `ws`, each with its name
/// prefix.
pub(super) fn candidates(ws: &Path, state: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    if let Some(s) = state {
        out.push((s.to_path_buf(), STATE_PREFIX));
    }
    if let Some(p) = ws.parent().filter(|p| *p != ws) {
        out.push((p.to_path_buf(), SIBLING_PREFIX));
    }
    out
}

fn random_name(prefix: &str) -> String {
    let mut b = [0u8; 8];
    let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{prefix}{hex}")
}

/// The name prefix of `ws`'s layers in the state directory:
/// `layer-<hash of its path>-` (issue 30, ADR 0289), so that a run finds
/// its workspace's pending layers by name without opening every other
/// workspace's. A shared hash only means reading the other's `workspace`
/// file, which decides, as before.
fn state_prefix(ws: &Path) -> String {
    // FNV-1a: stable across builds (a name written by one version is
    // found by the next).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in ws.as_os_str().as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{STATE_PREFIX}{h:016x}-")
}

/// A state-directory layer named before [`state_prefix`] existed
/// (`layer-` and 16 hex digits): whose it is, only its file says.
fn untagged(name: &str) -> bool {
    name.strip_prefix(STATE_PREFIX)
        .is_some_and(|r| r.len() == 16 && r.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Other workspaces' layers in the state directory a run looks at, at
/// most, to remove those whose workspace is gone.
const SWEEP: usize = 4;

/// Make a layer for `ws` (see the module documentation).
pub fn make(ws: &Path, state: Option<&Path>) -> io::Result<Layer> {
    let dev = std::fs::metadata(ws)?.dev();
    let cands = candidates(ws, state);
    let same: Vec<&(PathBuf, &str)> = cands
        .iter()
        .filter(|(d, _)| {
            // The state directory may not exist yet: its parent decides.
            let probe = d.ancestors().find(|a| a.exists());
            probe
                .and_then(|a| std::fs::metadata(a).ok())
                .map(|m| m.dev())
                == Some(dev)
        })
        .collect();
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no place for a layer");
    for (dir, prefix) in same.iter().map(|c| (*c, true)).chain(
        cands
            .iter()
            .filter(|(d, _)| state == Some(d.as_path()))
            .map(|c| (c, false)),
    ) {
        match make_in(&dir.0, dir.1, ws, prefix) {
            Ok(l) => return Ok(l),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn make_in(dir: &Path, prefix: &str, ws: &Path, same_fs: bool) -> io::Result<Layer> {
    if prefix == STATE_PREFIX {
        // The home itself is never made (atk22f: a HOME naming a missing
        // directory got `.local/state/skarn/layers` created).
        let home = dir.ancestors().nth(4);
        if dir.ends_with(".local/state/skarn/layers") && !home.is_some_and(Path::is_dir) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "HOME is not an existing directory",
            ));
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    // Overlayfs is given these paths after the root has moved: a link on
    // the way (a home reached through `/home -> /data/home`) would then
    // be resolved inside the new root, where its target is missing and
    // every run failed to start (atk27m F4).
    let dir = &std::fs::canonicalize(dir)?;
    let mut err = io::Error::other("no free name");
    let prefix = if prefix == STATE_PREFIX {
        state_prefix(ws)
    } else {
        prefix.to_string()
    };
    for _ in 0..8 {
        let base = dir.join(random_name(&prefix));
        match std::fs::DirBuilder::new().mode(0o700).create(&base) {
            Ok(()) => return fill(base, ws, same_fs),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => err = e,
            Err(e) => return Err(e),
        }
    }
    Err(err)
}

fn fill(base: PathBuf, ws: &Path, same_fs: bool) -> io::Result<Layer> {
    let lock = rustix::fs::open(
        &base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
    let (upper, work) = (base.join("u"), base.join("w"));
    let made = (|| {
        std::fs::DirBuilder::new().mode(0o755).create(&upper)?;
        std::fs::DirBuilder::new().mode(0o700).create(&work)?;
        std::fs::write(base.join(WS_FILE), ws.as_os_str().as_bytes())
    })();
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&base);
        return Err(e);
    }
    let since = std::fs::metadata(base.join(WS_FILE)).map(|m| (m.mtime(), m.mtime_nsec()))?;
    Ok(Layer {
        base,
        upper,
        work,
        same_fs,
        since,
        lock,
    })
}

/// Layers of `ws` left by runs that are gone (their lock is free), each
/// locked for the caller: the next run applies or discards them.
pub fn pending(ws: &Path, state: Option<&Path>) -> Vec<Layer> {
    let Ok(dev) = std::fs::metadata(ws).map(|m| m.dev()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let own = state_prefix(ws);
    for (dir, prefix) in candidates(ws, state) {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut others = Vec::new();
        for e in rd.flatten().take(10_000) {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !name.starts_with(prefix) {
                continue;
            }
            if prefix == STATE_PREFIX && !name.starts_with(&own) && !untagged(&name) {
                // Another workspace's (issue 30): not opened here, but a
                // few, at random, are checked for a workspace gone.
                others.push(e.path());
                continue;
            }
            let base = e.path();
            let owner = std::fs::read(base.join(WS_FILE)).ok();
            if owner.as_deref() != Some(ws.as_os_str().as_bytes()) {
                discard_orphan(&base, owner.as_deref());
                if prefix == STATE_PREFIX && untagged(&name) && base.exists() {
                    retag(&base, owner.as_deref());
                }
                continue;
            }
            let Ok(lock) = rustix::fs::open(
                &base,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
                continue; // a run still uses it
            }
            let upper = base.join("u");
            let same_fs = std::fs::metadata(&upper).is_ok_and(|m| m.dev() == dev);
            let Ok(since) =
                std::fs::metadata(base.join(WS_FILE)).map(|m| (m.mtime(), m.mtime_nsec()))
            else {
                continue;
            };
            out.push(Layer {
                work: base.join("w"),
                upper,
                base,
                same_fs,
                since,
                lock,
            });
        }
        sweep(others);
    }
    out
}

/// Give an untagged layer of another workspace (`owner`) its
/// workspace's name (under its lock, so never one in use), so that runs
/// elsewhere stop opening it.
fn retag(base: &Path, owner: Option<&[u8]>) {
    let (Some(owner), Some(dir)) = (owner, base.parent()) else {
        return;
    };
    let Ok(lock) = rustix::fs::open(
        base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok() {
        let to = dir.join(random_name(&state_prefix(Path::new(
            std::ffi::OsStr::from_bytes(owner),
        ))));
        let _ = rustix::fs::renameat_with(
            rustix::fs::CWD,
            base,
            rustix::fs::CWD,
            &to,
            rustix::fs::RenameFlags::NOREPLACE,
        );
    }
}

/// Remove the layers among `others` (other workspaces' layers in the
/// state directory) whose workspace is gone: [`SWEEP`] of them, from a
/// random place on, so that every one is reached over runs while no run
/// reads them all.
fn sweep(others: Vec<PathBuf>) {
    if others.is_empty() {
        return;
    }
    let mut b = [0u8; 8];
    let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
    let start = usize::try_from(u64::from_le_bytes(b) % others.len() as u64).unwrap_or(0);
    for base in others
        .iter()
        .cycle()
        .skip(start)
        .take(SWEEP.min(others.len()))
    {
        let owner = std::fs::read(base.join(WS_FILE)).ok();
        discard_orphan(base, owner.as_deref());
    }
}

/// A layer whose workspace no longer exists (removed with its directory)
/// can never be applied: removed, when no run holds it.
fn discard_orphan(base: &Path, owner: Option<&[u8]>) {
    let Some(owner) = owner else {
        return; // being made (its workspace is written after its lock)
    };
    let ws = Path::new(std::ffi::OsStr::from_bytes(owner));
    if ws.symlink_metadata().is_ok() {
        return;
    }
    let Ok(lock) = rustix::fs::open(
        base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok() {
        remove(Layer {
            upper: base.join("u"),
            work: base.join("w"),
            base: base.to_path_buf(),
            same_fs: false,
            since: (0, 0),
            lock,
        });
    }
}

/// Remove a layer once applied (or discarded).
pub fn remove(layer: Layer) {
    open_work(&layer.work);
    let _ = std::fs::remove_dir_all(&layer.base);
    drop(layer.lock);
}

/// Overlayfs leaves `work/work` (and, for a `volatile` mount, its
/// `incompat/volatile`) with mode 0: opened up so that an unprivileged
/// caller can empty the work directory.
pub(super) fn open_work(work: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let inner = work.join("work");
    for d in [
        inner.clone(),
        inner.join("incompat"),
        inner.join("incompat/volatile"),
    ] {
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
    }
}
