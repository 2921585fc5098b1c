//! The special mounts of the new root: the private home, a fresh /proc
//! and a minimal /dev.

use std::path::Path;

use super::{MountError, NEW, Notes, bind, ctx, mkdir_p, tmpfs, touch, under};
use crate::linux::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};
use std::os::unix::fs::symlink;

/// The private home: a tmpfs (owner only) at `path`, sized like /tmp.
pub(super) fn mount_home(path: &Path, tmpfs_bytes: Option<u64>) -> Result<(), MountError> {
    let dst = under(NEW, path);
    ctx(mkdir_p(&dst), "mkdir", &dst)?;
    let opts = match tmpfs_bytes {
        Some(b) => format!("mode=0700,size={b}"),
        None => "mode=0700".to_string(),
    };
    tmpfs(&dst, libc::MS_NOSUID | libc::MS_NODEV, &opts)
}

pub(super) fn mount_proc(notes: &mut Notes) -> Result<(), MountError> {
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

pub(super) fn mount_dev(shm_opts: &str) -> Result<(), MountError> {
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
