//! Binding one grant into the new root: whole, rebuilt without the
//! secrets it holds, through symlinks it names, or as a private
//! copy-on-write layer (toolchain caches).

use std::path::{Path, PathBuf};

use super::{MountError, NEW, Notes, OLD, bind_idmapped, bind_with, ctx, mkdir_p, tmpfs, under};
use crate::linux::plan::Access;
use crate::linux::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};
use std::os::unix::fs::symlink;

/// A read-only grant that holds secrets, rebuilt without them: a tmpfs at
/// the grant's place holding a bind of each child except the secrets (and
/// the same, recursively, for each child that holds a secret deeper down),
/// then made read-only. A secret is then absent rather than covered, so it
/// stays hidden even if the host replaces it by a rename during the run
/// (which would silently detach a mask mounted on it).
pub(super) fn bind_excluding(
    path: &Path,
    access: Access,
    secrets: &[&Path],
    notes: &mut Notes,
    depth: u32,
    idmap: bool,
) -> Result<(), MountError> {
    let src = under(OLD, path);
    let dst = under(NEW, path);
    if depth > 32 {
        notes.push(format!("{}: too deep; not granted", path.display()));
        return Ok(());
    }
    ctx(mkdir_p(&dst), "mkdir", &dst)?;
    tmpfs(&dst, libc::MS_NOSUID | libc::MS_NODEV, "mode=0755,size=1m")?;
    let entries = ctx(std::fs::read_dir(&src), "read_dir", path)?;
    for e in entries.flatten() {
        let child = path.join(e.file_name());
        if secrets.iter().any(|s| child.starts_with(s)) {
            continue; // a secret, or inside one: absent
        }
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let cdst = under(NEW, &child);
        if md.file_type().is_symlink() {
            if let Ok(t) = std::fs::read_link(e.path()) {
                ctx(symlink(&t, &cdst), "symlink", &cdst)?;
            }
        } else if md.is_dir() && secrets.iter().any(|s| s.starts_with(&child)) {
            bind_excluding(&child, access, secrets, notes, depth + 1, idmap)?;
        } else if idmap {
            bind_idmapped(&child, &e.path(), &cdst, access == Access::Read)?;
        } else {
            bind_with(&e.path(), &cdst, false, access == Access::Read)?;
        }
    }
    ctx(
        sys::mount_setattr(
            &dst,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            false,
        ),
        "remount read-only",
        &dst,
    )
}

/// Bind one grant; through the id mapping of [`crate::linux::idmap`] when
/// `idmap` (read-only grants only).
pub(super) fn bind_grant(
    path: &Path,
    access: Access,
    notes: &mut Notes,
    idmap: bool,
) -> Result<(), MountError> {
    bind_grant_depth(path, access, notes, 0, idmap)
}

fn bind_grant_depth(
    path: &Path,
    access: Access,
    notes: &mut Notes,
    depth: u32,
    idmap: bool,
) -> Result<(), MountError> {
    let src = under(OLD, path);
    let dst = under(NEW, path);
    let Ok(md) = std::fs::symlink_metadata(&src) else {
        return Ok(()); // granted but absent on this host
    };
    let system = crate::policy::SYSTEM_EXEC_DIRS
        .iter()
        .any(|d| Path::new(d) == path)
        || depth > 0;
    if !system && crate::policy::canonical::passes_through_symlink(&src) {
        // Grants are canonical when planned: a symlink here appeared since
        // (a concurrent run in the same tree). Never follow it.
        notes.push(format!(
            "grant {} turned into a symlink after planning; not granted",
            path.display()
        ));
        return Ok(());
    }
    if md.file_type().is_symlink() {
        // Recreate the link (e.g. /bin -> usr/bin) and grant its target,
        // resolved in the host tree (not in the half-built root).
        let target = ctx(std::fs::read_link(&src), "readlink", path)?;
        if std::fs::symlink_metadata(&dst).is_err() {
            if let Some(parent) = dst.parent() {
                ctx(mkdir_p(parent), "mkdir", parent)?;
            }
            ctx(symlink(&target, &dst), "symlink", &dst)?;
        }
        if depth >= 16 {
            notes.push(format!("grant {}: too many symlinks", path.display()));
            return Ok(());
        }
        let real = if target.is_absolute() {
            target
        } else {
            path.parent().unwrap_or(Path::new("/")).join(target)
        };
        let real = crate::policy::config::normalize(&real);
        if std::fs::symlink_metadata(under(NEW, &real)).is_ok() {
            return Ok(()); // already granted
        }
        return bind_grant_depth(&real, access, notes, depth + 1, idmap);
    }
    if std::fs::symlink_metadata(&dst)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        notes.push(format!(
            "grant {} sits under a symlinked directory; skipped",
            path.display()
        ));
        return Ok(());
    }
    if access == Access::Private {
        return overlay(&src, &dst, notes);
    }
    if idmap {
        return bind_idmapped(path, &src, &dst, access == Access::Read);
    }
    if access == Access::ReadWrite {
        ctx(super::mountpoint_like(&src, &dst), "mkdir", &dst)?;
        match crate::linux::idmap_workspace::bind(path, &src, &dst) {
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => notes.push(format!(
                "workspace {}: the id mapping for its owner could not be bound ({e}): files \
                 there that only their owner may write are read-only to the command",
                path.display()
            )),
            None => {}
        }
    }
    bind_with(
        &src,
        &dst,
        access == Access::ReadWrite,
        access == Access::Read,
    )
}

/// Directory holding the private layers' upper and work directories: a
/// tmpfs in the set-up root, never reachable from the new root.
pub(super) const LAYERS: &str = "/layers";

/// The overlayfs option sets tried for the workspace layer, in order (the
/// layer's probe tries the same, `cow::probe`). `volatile` first (ADR
/// 0340): without it the layer's unmount when the sandbox ends syncs the
/// whole file system holding the upper directory (every dirty page of the
/// host's disk, 10-70 ms on a busy host); the layer is applied right
/// after the run, and what it applies is written back like any write of
/// the host's own tools. Kernels without `volatile` (before 5.10) take the
/// same sets without it.
pub const OVERLAY_OPTION_TAILS: [&str; 8] = [
    ",redirect_dir=off,metacopy=off,index=off,volatile",
    ",userxattr,redirect_dir=nofollow,metacopy=off,index=off,volatile",
    ",userxattr,volatile",
    ",volatile",
    ",redirect_dir=off,metacopy=off,index=off",
    ",userxattr,redirect_dir=nofollow,metacopy=off,index=off",
    ",userxattr",
    "",
];

/// Escape a path for the comma-separated overlayfs option string.
pub(crate) fn ovl_escape(p: &Path) -> Option<String> {
    let s = p.to_str()?;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, ',' | ':' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    Some(out)
}

/// A private copy-on-write layer over `src` at `dst`: reads see the host's
/// files, writes land in a tmpfs discarded with the sandbox. When overlayfs
/// refuses (an unsupported lower filesystem), `src` is bound read-only
/// instead: never writable.
fn overlay(src: &Path, dst: &Path, notes: &mut Notes) -> Result<(), MountError> {
    let n = NEXT_LAYER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let base = PathBuf::from(format!("{LAYERS}/{n}"));
    if !std::fs::symlink_metadata(src).is_ok_and(|m| m.is_dir()) {
        return private_file(src, dst, &base, notes);
    }
    let (upper, work) = (base.join("u"), base.join("w"));
    ctx(mkdir_p(&upper), "mkdir", &upper)?;
    ctx(mkdir_p(&work), "mkdir", &work)?;
    ctx(mkdir_p(dst), "mkdir", dst)?;
    let mounted = match ovl_escape(src) {
        Some(lower) => ["userxattr,", ""].iter().any(|extra| {
            let opts = format!(
                "{extra}lowerdir={lower},upperdir={},workdir={}",
                upper.display(),
                work.display()
            );
            sys::mount(
                Some(Path::new("overlay")),
                dst,
                Some("overlay"),
                libc::MS_NOSUID | libc::MS_NODEV,
                Some(&opts),
            )
            .is_ok()
        }),
        None => false,
    };
    if !mounted {
        notes.push(format!(
            "{}: no private layer could be made; granted read-only",
            src.strip_prefix(OLD).unwrap_or(src).display()
        ));
        return bind_with(src, dst, false, false);
    }
    Ok(())
}

/// The workspace as a copy-on-write layer (ADR 0130): an overlayfs over
/// the host's workspace whose upper and work directories are the run's
/// private layer on the host. Redirects and metadata-only copies are off,
/// so the upper directory holds whole entries only (a renamed directory of
/// the host is copied by the tool that renames it). Fails the set-up when
/// overlayfs refuses: the run never falls back to writing the workspace
/// silently.
pub(super) fn workspace_layer(
    path: &Path,
    upper: &Path,
    work: &Path,
    notes: &mut Notes,
) -> Result<(), MountError> {
    let dst = under(NEW, path);
    ctx(mkdir_p(&dst), "mkdir", &dst)?;
    let (lower, upper, work) = match mapped_layer(path, upper, work) {
        Ok(Some(l)) => l,
        Ok(None) => (under(OLD, path), under(OLD, upper), under(OLD, work)),
        Err(e) => {
            notes.push(format!(
                "workspace {}: the id mapping for its owner could not be put under its \
                 copy-on-write layer ({e}): files there that only their owner may write are \
                 read-only to the command",
                path.display()
            ));
            (under(OLD, path), under(OLD, upper), under(OLD, work))
        }
    };
    let (Some(lower), Some(u), Some(w)) =
        (ovl_escape(&lower), ovl_escape(&upper), ovl_escape(&work))
    else {
        return Err(MountError::new(
            "workspace layer",
            path,
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    };
    let base = format!("lowerdir={lower},upperdir={u},workdir={w}");
    let mut last = None;
    // Root outside a user namespace (trusted xattrs), then a user
    // namespace, which refuses `redirect_dir=off` for `nofollow`.
    for extra in OVERLAY_OPTION_TAILS {
        match sys::mount(
            Some(Path::new("overlay")),
            &dst,
            Some("overlay"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(&format!("{base}{extra}")),
        ) {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(MountError::new(
        "workspace layer (overlayfs refused; --workspace-layer direct writes the workspace directly)",
        path,
        last.unwrap_or_else(|| std::io::Error::other("overlayfs")),
    ))
}

/// Root in a workspace of another owner (ADR 0180) with the layer (ADR
/// 0226): the workspace and the layer's directory (upper and work, the
/// owner's on disk) attached in the set-up root through the owner's id
/// mapping, as the layer's lower, upper and work directories. The command
/// then writes the owner's files by their mode bits and what it makes is
/// the owner's on disk, as with the direct mode's mapped bind. None: no
/// mapping was prepared for this workspace.
fn mapped_layer(
    path: &Path,
    upper: &Path,
    work: &Path,
) -> std::io::Result<Option<(PathBuf, PathBuf, PathBuf)>> {
    let (Some(base), Some(un), Some(wn)) = (upper.parent(), upper.file_name(), work.file_name())
    else {
        return Ok(None);
    };
    if work.parent() != Some(base) {
        return Ok(None);
    }
    let Some(lower) = crate::linux::idmap_workspace::mapped_tree(path, &under(OLD, path)) else {
        return Ok(None);
    };
    let lower = lower?;
    let Some(layer) = crate::linux::idmap_workspace::mapped_tree(path, &under(OLD, base)) else {
        return Ok(None);
    };
    let layer = layer?;
    let (l, b) = (
        Path::new(LAYERS).join("ws-lower"),
        Path::new(LAYERS).join("ws-layer"),
    );
    mkdir_p(&l)?;
    mkdir_p(&b)?;
    crate::linux::fdmount::attach(&lower, &l)?;
    crate::linux::fdmount::attach(&layer, &b)?;
    Ok(Some((l, b.join(un), b.join(wn))))
}

/// Largest file given a private copy (cargo's database is a few MiB).
const MAX_COPY: u64 = 256 << 20;

/// A private copy of the file `src` at `dst` (overlayfs layers
/// directories only): a copy in the layers' tmpfs, bound in its place, so
/// writes change the copy, never the host's file. A file that cannot be
/// copied (larger than the layers' tmpfs, unreadable) is bound read-only.
fn private_file(src: &Path, dst: &Path, base: &Path, notes: &mut Notes) -> Result<(), MountError> {
    ctx(mkdir_p(base), "mkdir", base)?;
    let copy = base.join("f");
    // A regular file of bounded size only (never a FIFO a copy would
    // block on).
    let small = std::fs::symlink_metadata(src).is_ok_and(|m| m.is_file() && m.len() <= MAX_COPY);
    if !small || std::fs::copy(src, &copy).is_err() {
        let _ = std::fs::remove_file(&copy);
        notes.push(format!(
            "{}: no private copy could be made; granted read-only",
            src.strip_prefix(OLD).unwrap_or(src).display()
        ));
        return bind_with(src, dst, false, true);
    }
    bind_with(&copy, dst, true, false)
}

static NEXT_LAYER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
