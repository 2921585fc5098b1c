//! Builds the sandbox's root filesystem in a fresh mount namespace: an
//! empty read-only tmpfs holding only the granted paths (bind mounts), a
//! fresh /proc, a minimal /dev, a private /tmp, secrets hidden and
//! persistence paths read-only. Paths outside the grants do not exist
//! inside, so neither their files nor their unix sockets can be reached.

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

mod beneath;
mod grant;
mod pinned_socket;
mod primitives;
mod special;
mod store;

use crate::linux::plan::{Access, FsOp};
use crate::linux::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};
pub use grant::OVERLAY_OPTION_TAILS;
pub(crate) use grant::ovl_escape;
use grant::{LAYERS, bind_excluding, bind_grant};
pub(crate) use pinned_socket::socket_moved;
use pinned_socket::{id_in, mask_pinned_socket};
use primitives::{
    bind, bind_existing, bind_idmapped, bind_with, mkdir_p, mountpoint_like, tmpfs, touch, under,
};
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
    // (A host server's socket is hidden by inode where it is, not left
    // out of a rebuilt grant: [`mask_pinned_socket`] checks it is there.)
    let secrets: Vec<&Path> = ops
        .iter()
        .filter_map(|o| match o {
            FsOp::Mask {
                path, pin: None, ..
            } => Some(path.as_path()),
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
