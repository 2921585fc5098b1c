//! Builds the sandbox's root filesystem in a fresh mount namespace: an
//! empty read-only tmpfs holding only the granted paths (bind mounts), a
//! fresh /proc, a minimal /dev, a private /tmp, secrets hidden and
//! persistence paths read-only. Paths outside the grants do not exist
//! inside, so neither their files nor their unix sockets can be reached.

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
use std::path::{Path, PathBuf};

mod beneath;
mod grant;
mod special;
mod store;

use crate::linux::plan::{Access, FsOp};
use crate::linux::sys::{
    self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY,
};
pub use grant::OVERLAY_OPTION_TAILS;
pub(crate) use grant::ovl_escape;
use grant::{LAYERS, bind_excluding, bind_grant};
use special::{mount_dev, mount_home, mount_proc};

const OLD: &str = "/oldroot";
const NEW: &str = "/newroot";

/// A failed step, with the path involved.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {err}")]
pub(crate) struct MountError {
    what: &'static str,
    path: String,
    #[source]
    err: io::Error,
}

impl MountError {
    fn new(what: &'static str, path: &Path, err: io::Error) -> MountError {
        MountError {
            what,
            path: path.display().to_string(),
            err,
        }
    }
}

fn ctx<T>(r: io::Result<T>, what: &'static str, path: &Path) -> Result<T, MountError> {
    r.map_err(|err| MountError {
        what,
        path: path.display().to_string(),
        err,
    })
}

fn under(base: &str, p: &Path) -> PathBuf {
    let rel = p.strip_prefix("/").unwrap_or(p);
    Path::new(base).join(rel)
}

fn mkdir_p(p: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(p)
}

fn touch(p: &Path) -> io::Result<()> {
    if let Some(parent) = p.parent() {
        mkdir_p(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Create the mountpoint `dst` matching the kind of `src` (dir or file).
pub(super) fn mountpoint_like(src: &Path, dst: &Path) -> io::Result<()> {
    if std::fs::metadata(src)?.is_dir() {
        mkdir_p(dst)
    } else {
        touch(dst)
    }
}

/// Mount a fresh tmpfs at `dst` (which must exist) with `flags` and `opts`.
fn tmpfs(dst: &Path, flags: libc::c_ulong, opts: &str) -> Result<(), MountError> {
    ctx(
        sys::mount(
            Some(Path::new("tmpfs")),
            dst,
            Some("tmpfs"),
            flags,
            Some(opts),
        ),
        "mount tmpfs",
        dst,
    )
}

/// Set when a host server's socket the walk found was not where it was by
/// the time init hid it ([`mask_pinned_socket`]): the target then makes no
/// unix socket (read by [`socket_moved`] after the mounts, in the target
/// forked from init).
static SOCKET_MOVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a pinned socket had moved (see [`SOCKET_MOVED`]).
pub(crate) fn socket_moved() -> bool {
    SOCKET_MOVED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The identities a pinned socket found with (device, inode) `id` may
/// have once mounted: itself, or, below a copy-on-write layer of device
/// `layer`, that device with its inode (overlayfs without `xino`).
fn id_in(id: (u64, u64), layer: Option<u64>) -> [(u64, u64); 2] {
    [id, layer.map_or(id, |d| (d, id.1))]
}

/// Hide the host server's socket found at `path` with (device, inode)
/// `id`: its name is opened (no symlink followed) and checked to be that
/// inode, and the placeholder is mounted through that descriptor, so a
/// rename between the check and the mount cannot move the socket out from
/// under it (attack atk24e F1). Anything else there: the socket moved
/// (a concurrent run renamed a directory) and the run makes no unix
/// socket.
fn mask_pinned_socket(
    path: &Path,
    id: [(u64, u64); 2],
    notes: &mut Vec<String>,
) -> Result<(), MountError> {
    use std::os::unix::fs::MetadataExt;
    let dst = under(NEW, path);
    let opened = crate::linux::fdmount::open_nofollow(&dst)
        .ok()
        .and_then(|fd| {
            let md = std::fs::File::from(fd.try_clone().ok()?).metadata().ok()?;
            (id.contains(&(md.dev(), md.ino())) && md.file_type().is_socket()).then_some(fd)
        });
    let Some(fd) = opened else {
        SOCKET_MOVED.store(true, std::sync::atomic::Ordering::Relaxed);
        notes.push(format!(
            "the host server's unix socket {} was moved while the run was set up (another run \
             renamed a directory?): this run makes no unix socket",
            path.display()
        ));
        return Ok(());
    };
    let tree = crate::linux::fdmount::clone_tree(
        Path::new("/empty.s"),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        None,
    );
    match tree.and_then(|t| crate::linux::fdmount::attach_to(&t, &fd)) {
        Ok(()) => Ok(()),
        // Kernels without the new mount API: by path, checked once more.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            bind(Path::new("/empty.s"), &dst, false)
        }
        Err(e) => Err(MountError {
            what: "bind onto a pinned socket",
            path: dst.display().to_string(),
            err: e,
        }),
    }
}

fn bind(src: &Path, dst: &Path, writable: bool) -> Result<(), MountError> {
    bind_with(src, dst, writable, false)
}

/// Bind the host's `path` (at `src` in the set-up root) read-only at
/// `dst` through the id mapping of [`crate::linux::idmap`]; `noexec` when asked.
fn bind_idmapped(path: &Path, src: &Path, dst: &Path, noexec: bool) -> Result<(), MountError> {
    ctx(mountpoint_like(src, dst), "mkdir", dst)?;
    let mut set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if noexec {
        set |= MOUNT_ATTR_NOEXEC;
    }
    ctx(
        crate::linux::idmap::bind(path, src, dst, set),
        "idmapped bind",
        dst,
    )
}

/// Bind `src` at `dst`; read-only unless `writable`, `noexec` when asked
/// (mount flags enforce read-only/no-exec even where a broader Landlock
/// rule, such as the one on /tmp, covers the path).
fn bind_with(src: &Path, dst: &Path, writable: bool, noexec: bool) -> Result<(), MountError> {
    ctx(mountpoint_like(src, dst), "mkdir", dst)?;
    bind_onto(src, dst, writable, noexec)
}

/// [`bind`] onto a `dst` that exists (just examined by the caller): no
/// mount point to make.
fn bind_existing(src: &Path, dst: &Path, writable: bool) -> Result<(), MountError> {
    bind_onto(src, dst, writable, false)
}

fn bind_onto(src: &Path, dst: &Path, writable: bool, noexec: bool) -> Result<(), MountError> {
    let mut set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if !writable {
        set |= MOUNT_ATTR_RDONLY;
    }
    if noexec {
        set |= MOUNT_ATTR_NOEXEC;
    }
    // Mount exactly what is opened, through no symlink (see fdmount).
    match crate::linux::fdmount::bind(src, dst, set) {
        Ok(()) => return Ok(()),
        // Kernels without openat2 / the new mount API: bind by path.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
        Err(e) => {
            return Err(MountError {
                what: "bind (no symlinks)",
                path: dst.display().to_string(),
                err: e,
            });
        }
    }
    ctx(
        sys::mount(Some(src), dst, None, libc::MS_BIND | libc::MS_REC, None),
        "bind",
        dst,
    )?;
    ctx(sys::mount_setattr(dst, set, true), "mount_setattr", dst)
}

/// Notes produced while building (non-fatal gaps).
pub type Notes = Vec<String>;

/// Build the new root and pivot into it. Must run inside a new mount
/// namespace (and, for /proc, inside the new PID namespace).
pub(crate) fn build_root(
    ops: &[FsOp],
    upstream_roots: &str,
    tmpfs_bytes: Option<u64>,
    notes: &mut Notes,
) -> Result<(), MountError> {
    let tmpfs_opts = match tmpfs_bytes {
        Some(b) => format!("mode=1777,size={b}"),
        None => "mode=1777".to_string(),
    };
    let root = Path::new("/");
    ctx(
        sys::mount(None, root, None, libc::MS_REC | libc::MS_PRIVATE, None),
        "make-rprivate",
        root,
    )?;
    // Base tmpfs on /tmp (only in this namespace), then pivot into it so
    // the host tree is reachable under /oldroot while building.
    let base = Path::new("/tmp");
    tmpfs(base, libc::MS_NOSUID | libc::MS_NODEV, "mode=0755,size=1m")?;
    ctx(mkdir_p(Path::new("/tmp/oldroot")), "mkdir", base)?;
    ctx(
        sys::pivot_root(base, Path::new("/tmp/oldroot")),
        "pivot_root",
        base,
    )?;
    ctx(sys::chdir(root), "chdir", root)?;
    let newroot = Path::new(NEW);
    ctx(mkdir_p(newroot), "mkdir", newroot)?;
    tmpfs(newroot, libc::MS_NOSUID | libc::MS_NODEV, "mode=0755")?;
    // Empty, unreadable stand-ins used to hide secrets and to cover
    // placeholders (a socket inode: opening it fails at once).
    ctx(mkdir_p(Path::new("/empty.d")), "mkdir", root)?;
    ctx(touch(Path::new("/empty.f")), "touch", root)?;
    ctx(
        crate::protect::placeholder::make_socket_inode(Path::new("/empty.s")),
        "socket inode",
        root,
    )?;
    for p in ["/empty.d", "/empty.f", "/empty.s"] {
        let c = sys::cstr(p).expect("static path");
        // SAFETY: valid NUL-terminated path.
        unsafe { libc::chmod(c.as_ptr(), 0) };
    }

    if ops.iter().any(|o| {
        matches!(
            o,
            FsOp::Bind {
                access: Access::Private,
                ..
            }
        )
    }) {
        let layers = Path::new(LAYERS);
        ctx(mkdir_p(layers), "mkdir", layers)?;
        tmpfs(
            layers,
            libc::MS_NOSUID | libc::MS_NODEV,
            &tmpfs_opts.replace("mode=1777", "mode=0700"),
        )?;
    }
    let roots: Vec<&Path> = ops
        .iter()
        .filter_map(|o| match o {
            FsOp::Bind { path, .. } | FsOp::IdmapBind { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    let secrets: Vec<&Path> = ops
        .iter()
        .filter_map(|o| match o {
            FsOp::Mask { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    let mut pinned = Vec::new();
    // The copy-on-write layers mounted so far, with their device (see
    // [`mask_pinned_socket`]).
    let mut layers: Vec<(&Path, u64)> = Vec::new();
    for op in ops {
        match op {
            FsOp::Bind { path, access } | FsOp::IdmapBind { path, access } => {
                let idmap = matches!(op, FsOp::IdmapBind { .. });
                // A read-only grant holding secrets is rebuilt without them
                // (see bind_excluding); everything else is bound whole.
                let inside: Vec<&Path> = secrets
                    .iter()
                    .copied()
                    .filter(|s| s.starts_with(path) && *s != path)
                    .collect();
                // (Not for the system directories: /etc alone has over a
                // hundred entries to bind; its secrets keep their masks.)
                let system = crate::policy::SYSTEM_EXEC_DIRS
                    .iter()
                    .any(|d| Path::new(d) == path);
                if matches!(access, Access::Read | Access::ReadExec)
                    && !system
                    && !inside.is_empty()
                    && std::fs::symlink_metadata(under(OLD, path)).is_ok_and(|m| m.is_dir())
                {
                    bind_excluding(path, *access, &inside, notes, 0, idmap)?
                } else {
                    bind_grant(path, *access, notes, idmap)?
                }
            }
            FsOp::Proc => mount_proc(notes)?,
            FsOp::Dev => mount_dev(&tmpfs_opts)?,
            FsOp::Tmp => {
                let t = under(NEW, Path::new("/tmp"));
                ctx(mkdir_p(&t), "mkdir", &t)?;
                tmpfs(&t, libc::MS_NOSUID | libc::MS_NODEV, &tmpfs_opts)?;
            }
            FsOp::Mask {
                path,
                pin: Some(id),
                ..
            } => {
                // A socket of a layered workspace is seen through the
                // layer: overlayfs gives the layer's device, with the
                // lower file's own inode number (one lower layer, its
                // upper empty while the run is set up).
                let layer = layers.iter().find(|(l, _)| path.starts_with(l));
                mask_pinned_socket(path, id_in(*id, layer.map(|l| l.1)), notes)?
            }
            FsOp::Mask { path, reserve, .. } => {
                let dst = under(NEW, path);
                let Ok(md) = std::fs::symlink_metadata(&dst) else {
                    if *reserve {
                        // Reserved, then removed on the host during set-up:
                        // reserve it again (see the same case below).
                        reserve_vanished(path, &dst, notes)?;
                    }
                    continue;
                };
                if md.file_type().is_symlink() {
                    // Its target is denied under its own (canonical) name.
                    notes.push(format!(
                        "secret {} is a symlink; its target is hidden only if it is a secret too",
                        path.display()
                    ));
                    continue;
                }
                let src = if md.is_dir() {
                    "/empty.d"
                } else if md.file_type().is_socket() {
                    "/empty.s"
                } else {
                    "/empty.f"
                };
                bind(Path::new(src), &dst, false)?;
            }
            FsOp::Home { path } => mount_home(path, tmpfs_bytes)?,
            FsOp::Bundle { path, roots, extra } => {
                // The directory may be writable inside and kept between
                // starts (a server's state directory): never write through
                // a link left there ([`beneath`]).
                let dst = under(NEW, path);
                let mut text = if *roots {
                    upstream_roots.to_string()
                } else {
                    String::new()
                };
                text.push_str(extra);
                ctx(
                    beneath::replace_file(Path::new(NEW), path, text.as_bytes()),
                    "write",
                    &dst,
                )?;
            }
            FsOp::StateFile { path, contents } => {
                // Kept between starts and writable inside: never through a
                // link left there ([`beneath`]).
                if let Err(e) =
                    beneath::replace_file_mode(Path::new(NEW), path, contents.as_bytes(), 0o600)
                {
                    notes.push(format!(
                        "{}: the copy with the secret's placeholder was not written: {e}",
                        path.display()
                    ));
                }
            }
            FsOp::File { path, contents } => {
                let dst = under(NEW, path);
                ctx(
                    beneath::create_file_if_missing(Path::new(NEW), path, contents.as_bytes()),
                    "write",
                    &dst,
                )?;
            }
            FsOp::Symlink { path, target } => {
                // Best effort: the name inside a read-only grant cannot be
                // made, and the grant stays reachable by its target.
                let _ = beneath::symlink_if_missing(Path::new(NEW), path, target);
            }
            FsOp::Pin { path } => {
                let dst = under(NEW, path);
                match std::fs::symlink_metadata(&dst) {
                    Ok(md) if md.is_dir() && !pinned.contains(path) => {
                        bind_existing(&dst.clone(), &dst, true)?;
                        pinned.push(path.clone());
                    }
                    _ => {}
                }
            }
            FsOp::Protect { path, reserve, .. } => {
                let dst = under(NEW, path);
                pin_parents(path, &roots, &mut pinned)?;
                match std::fs::symlink_metadata(&dst) {
                    Ok(md) if md.file_type().is_symlink() => {
                        // The link is pinned (where it leads is protected
                        // under its own name, see `linked_targets`).
                        if let Err(e) = crate::linux::fdmount::pin_link(&dst) {
                            notes.push(format!(
                                "persistence path {} is a symlink and could not be pinned: {e}",
                                path.display()
                            ));
                        }
                    }
                    Ok(md) if md.file_type().is_socket() => {
                        // A run's placeholder (or a live socket): cover it.
                        bind_existing(Path::new("/empty.s"), &dst, false)?
                    }
                    Ok(_) => bind_existing(&dst.clone(), &dst, false)?,
                    Err(_) if *reserve => reserve_vanished(path, &dst, notes)?,
                    Err(_) => {}
                }
            }
            FsOp::Layer { path, upper, work } => {
                grant::workspace_layer(path, upper, work, notes)?;
                if let Ok(md) = std::fs::symlink_metadata(under(NEW, path)) {
                    use std::os::unix::fs::MetadataExt;
                    layers.push((path.as_path(), md.dev()));
                }
            }
            FsOp::Store { path, upper, work } => store::store_layer(path, upper, work, notes)?,
            FsOp::Stage { path, from } => {
                let dst = under(NEW, path);
                bind(&under(NEW, from), &dst, true)?;
            }
        }
    }
    ctx(
        sys::mount_setattr(
            newroot,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            false,
        ),
        "remount read-only",
        newroot,
    )?;
    ctx(sys::chdir(newroot), "chdir", newroot)?;
    let dot = Path::new(".");
    ctx(sys::pivot_root(dot, dot), "pivot_root", newroot)?;
    ctx(sys::umount2(dot, libc::MNT_DETACH), "detach old root", dot)?;
    ctx(sys::chdir(root), "chdir", root)
}

/// A reserved path found missing when the new root is built (the host
/// removed it after the reservation step looked): reserve it now, before
/// the command runs, or fail the set-up (fail closed). The placeholder is
/// left behind; the next run in this workspace takes it over and removes it.
fn reserve_vanished(path: &Path, dst: &Path, notes: &mut Notes) -> Result<(), MountError> {
    ctx(
        crate::protect::placeholder::make_socket_inode(dst),
        "reserve a protected path removed during set-up",
        dst,
    )?;
    bind_existing(Path::new("/empty.s"), dst, false)?;
    notes.push(format!(
        "protected path {} was removed on the host during set-up: reserved by a \
         placeholder that the next run here removes",
        path.display()
    ));
    Ok(())
}

/// Before a path is write-protected, bind each of its parent directories
/// below the enclosing grant onto itself (still writable). A mount point
/// cannot be renamed or removed, so the command cannot move `.git` (or a
/// worktree's git directory, or a directory holding an include file) aside
/// and build a fresh one, with its own hooks and config, in its place.
fn pin_parents(path: &Path, roots: &[&Path], pinned: &mut Vec<PathBuf>) -> Result<(), MountError> {
    let mut chain = Vec::new();
    let mut granted = false;
    for a in path.ancestors().skip(1) {
        if roots.contains(&a) {
            granted = true;
            break;
        }
        chain.push(a);
    }
    if !granted {
        return Ok(());
    }
    for a in chain.into_iter().rev() {
        if pinned.iter().any(|p| p == a) {
            continue;
        }
        pinned.push(a.to_path_buf());
        let dst = under(NEW, a);
        match std::fs::symlink_metadata(&dst) {
            Ok(md) if md.is_dir() => bind_existing(&dst.clone(), &dst, true)?,
            _ => return Ok(()),
        }
    }
    Ok(())
}
