//! Whether overlayfs takes the run's layer here (ADR 0226): tried in a
//! forked child in its own mount namespace (and user namespace when the run
//! gets one), with the options init tries, over the workspace itself. The
//! caller is untouched; the child's mount is gone with it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The option sets init tries, in its order (kept with the mount code,
/// `mounts::grant::workspace_layer`).
pub use crate::linux::mounts::OVERLAY_OPTION_TAILS as OPTION_TAILS;

fn c(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

/// Whether an overlayfs with lower `ws`, upper `upper` and work `work`
/// mounts; `userns`: in a new user namespace mapping the caller to itself
/// (as the run's own namespaces do for an unprivileged user).
pub fn overlay_mounts(ws: &Path, upper: &Path, work: &Path, userns: bool) -> bool {
    // A scratch work directory beside the layer's own (same file system):
    // a `volatile` mount marks its work directory, which overlayfs then
    // refuses to mount again (ADR 0340), so the probe never uses the one
    // init mounts.
    let scratch = work.with_file_name("probe-w");
    if std::fs::create_dir(&scratch).is_err() {
        return false;
    }
    let ok = try_mount(ws, upper, &scratch, userns);
    super::place::open_work(&scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    ok
}

fn try_mount(ws: &Path, upper: &Path, work: &Path, userns: bool) -> bool {
    let (Some(target), Some(_), Some(_)) = (c(ws), c(upper), c(work)) else {
        return false;
    };
    let esc = crate::linux::mounts::ovl_escape;
    let (Some(l), Some(u), Some(w)) = (esc(ws), esc(upper), esc(work)) else {
        return false;
    };
    let base = format!("lowerdir={l},upperdir={u},workdir={w}");
    let opts: Vec<CString> = OPTION_TAILS
        .iter()
        .filter_map(|t| CString::new(format!("{base}{t}")).ok())
        .collect();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1\n");
    let gid_map = format!("{gid} {gid} 1\n");
    let flags = if userns {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS
    } else {
        libc::CLONE_NEWNS
    };
    // SAFETY: everything the child uses was allocated before the fork; it
    // calls only async-signal-safe system calls (unshare, prctl, open,
    // write, close, mount, _exit) on those buffers. The parent reaps it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            if libc::unshare(flags) != 0 {
                libc::_exit(1);
            }
            if userns {
                // An undumpable parent (holding secrets) leaves this child's
                // /proc files to root: dumpable for the maps (the core
                // size limit stays 0 where the parent set it).
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                for (f, v) in [
                    (c"/proc/self/setgroups", "deny".as_bytes()),
                    (c"/proc/self/uid_map", uid_map.as_bytes()),
                    (c"/proc/self/gid_map", gid_map.as_bytes()),
                ] {
                    let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 || libc::write(fd, v.as_ptr().cast(), v.len()) < 0 {
                        libc::_exit(1);
                    }
                    libc::close(fd);
                }
            }
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                libc::_exit(1);
            }
            for o in &opts {
                if libc::mount(
                    c"overlay".as_ptr(),
                    target.as_ptr(),
                    c"overlay".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    o.as_ptr().cast(),
                ) == 0
                {
                    libc::_exit(0);
                }
            }
            libc::_exit(1);
        }
        if pid < 0 {
            return false;
        }
        let mut st = 0;
        while libc::waitpid(pid, &mut st, 0) < 0 {
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
    }
}
