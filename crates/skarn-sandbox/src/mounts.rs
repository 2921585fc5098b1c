//! Builds the sandbox's root filesystem in a fresh mount namespace: an
//! empty read-only tmpfs holding only the granted paths (bind mounts), a
//! fresh /proc, a minimal /dev, a private /tmp, secrets hidden and
//! persistence paths read-only. Paths outside the grants do not exist
//! inside, so neither their files nor their unix sockets can be reached.

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, symlink};
use std::path::{Path, PathBuf};

use crate::plan::{Access, FsOp};
use crate::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};

const OLD: &str = "/oldroot";
const NEW: &str = "/newroot";

/// A failed step, with the path involved.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {err}")]
pub struct MountError {
    what: &'static str,
    path: String,
    #[source]
    err: io::Error,
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
fn mountpoint_like(src: &Path, dst: &Path) -> io::Result<()> {
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

fn bind(src: &Path, dst: &Path, writable: bool) -> Result<(), MountError> {
    bind_with(src, dst, writable, false)
}

/// Bind `src` at `dst`; read-only unless `writable`, `noexec` when asked
/// (mount flags enforce read-only/no-exec even where a broader Landlock
/// rule, such as the one on /tmp, covers the path).
fn bind_with(src: &Path, dst: &Path, writable: bool, noexec: bool) -> Result<(), MountError> {
    ctx(mountpoint_like(src, dst), "mkdir", dst)?;
    let mut set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if !writable {
        set |= MOUNT_ATTR_RDONLY;
    }
    if noexec {
        set |= MOUNT_ATTR_NOEXEC;
    }
    // Mount exactly what is opened, through no symlink (see fdmount).
    match crate::fdmount::bind(src, dst, set) {
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
pub fn build_root(
    ops: &[FsOp],
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
        crate::placeholder::make_socket_inode(Path::new("/empty.s")),
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
            FsOp::Bind { path, .. } => Some(path.as_path()),
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
    for op in ops {
        match op {
            FsOp::Bind { path, access } => {
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
                    bind_excluding(path, *access, &inside, notes, 0)?
                } else {
                    bind_grant(path, *access, notes)?
                }
            }
            FsOp::Proc => mount_proc(notes)?,
            FsOp::Dev => mount_dev(&tmpfs_opts)?,
            FsOp::Tmp => {
                let t = under(NEW, Path::new("/tmp"));
                ctx(mkdir_p(&t), "mkdir", &t)?;
                tmpfs(&t, libc::MS_NOSUID | libc::MS_NODEV, &tmpfs_opts)?;
            }
            FsOp::Mask { path, .. } => {
                let dst = under(NEW, path);
                let Ok(md) = std::fs::symlink_metadata(&dst) else {
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
            FsOp::File { path, contents } => {
                let dst = under(NEW, path);
                if std::fs::symlink_metadata(&dst).is_err() {
                    if let Some(parent) = dst.parent() {
                        ctx(mkdir_p(parent), "mkdir", parent)?;
                    }
                    ctx(std::fs::write(&dst, contents), "write", &dst)?;
                }
            }
            FsOp::Symlink { path, target } => {
                let dst = under(NEW, path);
                if std::fs::symlink_metadata(&dst).is_err()
                    && let Some(parent) = dst.parent()
                    && mkdir_p(parent).is_ok()
                {
                    // Best effort: the name inside a read-only grant cannot
                    // be made, and the grant stays reachable by its target.
                    let _ = symlink(target, &dst);
                }
            }
            FsOp::Pin { path } => {
                let dst = under(NEW, path);
                match std::fs::symlink_metadata(&dst) {
                    Ok(md) if md.is_dir() && !pinned.contains(path) => {
                        bind(&dst.clone(), &dst, true)?;
                        pinned.push(path.clone());
                    }
                    _ => {}
                }
            }
            FsOp::Protect { path, .. } => {
                let dst = under(NEW, path);
                pin_parents(path, &roots, &mut pinned)?;
                match std::fs::symlink_metadata(&dst) {
                    Ok(md) if md.file_type().is_symlink() => notes.push(format!(
                        "persistence path {} is a symlink and could not be write-protected",
                        path.display()
                    )),
                    Ok(md) if md.file_type().is_socket() => {
                        // A run's placeholder (or a live socket): cover it.
                        bind(Path::new("/empty.s"), &dst, false)?
                    }
                    Ok(_) => bind(&dst.clone(), &dst, false)?,
                    Err(_) => {}
                }
            }
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
            Ok(md) if md.is_dir() => bind(&dst.clone(), &dst, true)?,
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// A read-only grant that holds secrets, rebuilt without them: a tmpfs at
/// the grant's place holding a bind of each child except the secrets (and
/// the same, recursively, for each child that holds a secret deeper down),
/// then made read-only. A secret is then absent rather than covered, so it
/// stays hidden even if the host replaces it by a rename during the run
/// (which would silently detach a mask mounted on it).
fn bind_excluding(
    path: &Path,
    access: Access,
    secrets: &[&Path],
    notes: &mut Notes,
    depth: u32,
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
            bind_excluding(&child, access, secrets, notes, depth + 1)?;
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

fn bind_grant(path: &Path, access: Access, notes: &mut Notes) -> Result<(), MountError> {
    bind_grant_depth(path, access, notes, 0)
}

fn bind_grant_depth(
    path: &Path,
    access: Access,
    notes: &mut Notes,
    depth: u32,
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
    if !system && crate::grants::passes_through_symlink(&src) {
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
        let real = crate::config::normalize(&real);
        if std::fs::symlink_metadata(under(NEW, &real)).is_ok() {
            return Ok(()); // already granted
        }
        return bind_grant_depth(&real, access, notes, depth + 1);
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
    bind_with(
        &src,
        &dst,
        access == Access::ReadWrite,
        access == Access::Read,
    )
}

/// Directory holding the private layers' upper and work directories: a
/// tmpfs in the set-up root, never reachable from the new root.
const LAYERS: &str = "/layers";

/// Escape a path for the comma-separated overlayfs option string.
fn ovl_escape(p: &Path) -> Option<String> {
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

static NEXT_LAYER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The private home: a tmpfs (owner only) at `path`, sized like /tmp.
fn mount_home(path: &Path, tmpfs_bytes: Option<u64>) -> Result<(), MountError> {
    let dst = under(NEW, path);
    ctx(mkdir_p(&dst), "mkdir", &dst)?;
    let opts = match tmpfs_bytes {
        Some(b) => format!("mode=0700,size={b}"),
        None => "mode=0700".to_string(),
    };
    tmpfs(&dst, libc::MS_NOSUID | libc::MS_NODEV, &opts)
}

fn mount_proc(notes: &mut Notes) -> Result<(), MountError> {
    let p = under(NEW, Path::new("/proc"));
    ctx(mkdir_p(&p), "mkdir", &p)?;
    let r = sys::mount(
        Some(Path::new("proc")),
        &p,
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    );
    if let Err(e) = r {
        // Happens when the host's /proc is partly masked (some containers).
        notes.push(format!(
            "fresh /proc could not be mounted ({e}); the host /proc is bound instead \
             (other processes are listed, Landlock still blocks ptrace-style access)"
        ));
        bind(Path::new("/oldroot/proc"), &p, false)?;
    }
    // Kernel knobs stay read-only even for a uid-0 sandbox without a user
    // namespace (Landlock also grants /proc read-only).
    for sub in [
        "sys",
        "sysrq-trigger",
        "irq",
        "bus",
        "fs",
        "kcore",
        "latency_stats",
        "timer_list",
    ] {
        let q = p.join(sub);
        if std::fs::symlink_metadata(&q).is_ok() {
            ctx(
                sys::mount(Some(&q), &q, None, libc::MS_BIND | libc::MS_REC, None),
                "bind",
                &q,
            )?;
            ctx(
                sys::mount_setattr(
                    &q,
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                    true,
                ),
                "mount_setattr",
                &q,
            )?;
        }
    }
    Ok(())
}

fn mount_dev(shm_opts: &str) -> Result<(), MountError> {
    let dev = under(NEW, Path::new("/dev"));
    ctx(mkdir_p(&dev), "mkdir", &dev)?;
    tmpfs(&dev, libc::MS_NOSUID | libc::MS_NOEXEC, "mode=0755")?;
    for node in ["null", "zero", "full", "random", "urandom", "tty"] {
        let src = Path::new("/oldroot/dev").join(node);
        let dst = dev.join(node);
        if std::fs::symlink_metadata(&src).is_err() {
            continue;
        }
        ctx(touch(&dst), "touch", &dst)?;
        ctx(
            sys::mount(Some(&src), &dst, None, libc::MS_BIND, None),
            "bind",
            &dst,
        )?;
    }
    let pts = dev.join("pts");
    ctx(mkdir_p(&pts), "mkdir", &pts)?;
    ctx(
        sys::mount(
            Some(Path::new("devpts")),
            &pts,
            Some("devpts"),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=0620"),
        ),
        "mount devpts",
        &pts,
    )?;
    let shm = dev.join("shm");
    ctx(mkdir_p(&shm), "mkdir", &shm)?;
    tmpfs(&shm, libc::MS_NOSUID | libc::MS_NODEV, shm_opts)?;
    for (link, target) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let l = dev.join(link);
        ctx(symlink(target, &l), "symlink", &l)?;
    }
    ctx(
        sys::mount_setattr(&dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, false),
        "remount read-only",
        &dev,
    )
}
