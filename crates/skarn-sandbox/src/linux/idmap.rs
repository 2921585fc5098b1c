//! Idmapped read-only binds of the system directories where root keeps
//! files closed to others (`/etc`, `/opt`, `/srv`), for a command run as
//! root.
//!
//! Root owns root's files even with every capability dropped, so a file
//! its owner closed to others (`/etc/wireguard/wg0.conf`, a private key
//! under `/opt/app`) would be readable to a sandboxed root. Bound through a
//! user namespace whose only mapping sends on-disk id 0 to [`NOBODY`] (uid
//! and gid), every file of these directories belongs inside to `nobody` or
//! to an unmapped id, and the command (uid 0, no capability) is "other" for
//! all of them: the kernel applies the mode bits at every access, at any
//! depth, including to files the host creates or renames there during the
//! run. One mount per directory replaces a walk of thousands of entries
//! ([`crate::protect::owner_only`], still used where this is unavailable).
//!
//! The probe prepares the detached trees once per process; the sandbox's
//! init (a fork of the same process) attaches them. A process without them
//! (a freshly executed helper) makes the user namespace in [`prepare`]
//! before unsharing anything, and the trees when init binds them.

use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::linux::sys::{MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};

/// Directories bound idmapped (the ones [`crate::protect::owner_only`] walks).
pub(crate) const DIRS: &[&str] = crate::protect::owner_only::WALKED_DIRS;

/// The id that on-disk uid and gid 0 become inside (every other id is
/// unmapped and shows as the overflow id, also 65534 by default).
pub const NOBODY: u32 = 65534;

/// Attributes every idmapped tree gets.
const BASE_ATTRS: u64 = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

/// Why idmapped binds cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IdmapError {
    /// The caller is in the group root's files would belong to inside.
    #[error("the caller belongs to group {0}, which root's files would belong to inside")]
    InGroup(u32),
    /// The user namespace holding the mapping could not be made.
    #[error("user namespace for the id mapping: {0}")]
    Userns(#[source] io::Error),
    /// The filesystem (or kernel) refused the idmapped bind.
    #[error("idmapped bind of {path}: {err}")]
    Bind {
        /// The directory.
        path: PathBuf,
        /// What the kernel said.
        #[source]
        err: io::Error,
    },
}

/// The user namespace and the trees made by [`probe`], kept for the
/// sandbox's init.
struct Prepared {
    userns: OwnedFd,
    trees: Vec<(PathBuf, OwnedFd)>,
}

static PREPARED: Mutex<Option<Prepared>> = Mutex::new(None);

/// Whether the directory `d` exists as a directory (not a symlink).
fn is_real_dir(d: &Path) -> bool {
    std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir())
}

/// Check that idmapped read-only binds of [`DIRS`] work here for this
/// (root) caller, and prepare them. Returns the directories that can be
/// bound idmapped (absent ones are left out) and, when one cannot, why.
pub fn probe() -> (Vec<PathBuf>, Option<IdmapError>) {
    if let Some(g) = caller_groups().into_iter().find(|g| *g == NOBODY) {
        return (Vec::new(), Some(IdmapError::InGroup(g)));
    }
    let mut guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    let userns = match guard.take() {
        Some(p) => p.userns,
        None => match new_userns() {
            Ok(u) => u,
            Err(e) => return (Vec::new(), Some(IdmapError::Userns(e))),
        },
    };
    let mut trees = Vec::new();
    let mut failed = None;
    for d in DIRS.iter().map(Path::new).filter(|d| is_real_dir(d)) {
        match crate::linux::fdmount::clone_tree(d, BASE_ATTRS, Some(userns.as_fd())) {
            Ok(t) => trees.push((d.to_path_buf(), t)),
            Err(err) => {
                failed.get_or_insert(IdmapError::Bind {
                    path: d.to_path_buf(),
                    err,
                });
            }
        }
    }
    let dirs = trees.iter().map(|(d, _)| d.clone()).collect();
    *guard = Some(Prepared { userns, trees });
    (dirs, failed)
}

/// Bind `src` (the host's `path`, seen from the set-up root) at `dst`
/// idmapped, read-only, with the extra attributes `set`: the tree the
/// probe prepared for `path` when this process has it, else a new one.
pub fn bind(path: &Path, src: &Path, dst: &Path, set: u64) -> io::Result<()> {
    let mut guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    let ready = guard.as_mut().and_then(|p| {
        let i = p.trees.iter().position(|(d, _)| d == path)?;
        Some(p.trees.swap_remove(i).1)
    });
    let tree = match ready {
        Some(t) => {
            if set & !BASE_ATTRS != 0 {
                crate::linux::fdmount::set_tree_attrs(&t, set)?;
            }
            t
        }
        None => {
            if guard.is_none() {
                *guard = Some(Prepared {
                    userns: new_userns()?,
                    trees: Vec::new(),
                });
            }
            let userns = guard
                .as_ref()
                .map(|p| p.userns.as_fd())
                .ok_or_else(|| io::Error::other("no user namespace"))?;
            crate::linux::fdmount::clone_tree(src, set | BASE_ATTRS, Some(userns))?
        }
    };
    crate::linux::fdmount::attach(&tree, dst)
}

/// Make sure this process holds the user namespace of the id mapping,
/// making it when the probe ran elsewhere (a gateway's freshly executed
/// helper). Called by the helper before it unshares any namespace: the
/// namespace is made through the host's `/proc`, and the short-lived
/// process that makes it must not become a new PID namespace's first.
pub fn prepare() -> io::Result<()> {
    let mut guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(Prepared {
            userns: new_userns()?,
            trees: Vec::new(),
        });
    }
    Ok(())
}

/// Drop what [`probe`] prepared (the helper, once init has its copy).
pub fn release() {
    let mut guard = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    *guard = None;
    reap_killed();
}

/// The caller's gid and supplementary groups.
fn caller_groups() -> Vec<u32> {
    // SAFETY: getgid cannot fail.
    let mut out = vec![unsafe { libc::getgid() }];
    let mut buf = vec![0 as libc::gid_t; 256];
    // SAFETY: buf holds buf.len() gids.
    let n = unsafe { libc::getgroups(buf.len() as libc::c_int, buf.as_mut_ptr()) };
    if n > 0 {
        out.extend_from_slice(&buf[..n as usize]);
    } else if n < 0 {
        // More than 256 groups: ask for the count, then read them all.
        // SAFETY: a zero-sized query writes nothing.
        let want = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
        if want > 0 {
            buf.resize(want as usize, 0);
            // SAFETY: buf holds buf.len() gids.
            let n = unsafe { libc::getgroups(buf.len() as libc::c_int, buf.as_mut_ptr()) };
            out.extend_from_slice(&buf[..n.max(0) as usize]);
        }
    }
    out
}

/// Stack of the short-lived process that creates the user namespace.
const CHILD_STACK: usize = 16 * 1024;

extern "C" fn hold(_: *mut libc::c_void) -> libc::c_int {
    // Wait to be killed (SIGKILL) once the parent has the namespace, or
    // when the parent dies first.
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes integers only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    loop {
        // SAFETY: pause takes no arguments and touches no memory.
        unsafe { libc::pause() };
    }
}

/// A new user namespace whose uid and gid maps hold one line: `0 NOBODY 1`.
fn new_userns() -> io::Result<OwnedFd> {
    let line = format!("0 {NOBODY} 1");
    userns_with(&line, &line)
}

/// A new user namespace with the given uid and gid maps (lines of
/// `inside outside count`). Made by a child sharing this process's memory
/// (no page tables copied), which only waits until the maps are written
/// and the namespace opened; then it is killed and, when the kernel gave
/// a pidfd for it, reaped later (issue 30, ADR 0340: waiting here for the
/// killed child to be scheduled and exit took up to 190 ms of wall time
/// on a loaded host, for nothing the run needs).
pub(crate) fn userns_with(uid_map: &str, gid_map: &str) -> io::Result<OwnedFd> {
    reap_killed();
    let mut stack = vec![0u8; CHILD_STACK].into_boxed_slice();
    let mut pidfd: libc::c_int = -1;
    // SAFETY: the stack pointer is the (16-byte aligned) top of a buffer
    // that outlives the child (kept until it is reaped, below or in
    // `reap_killed`); the child runs `hold`, which only calls prctl(2) and
    // pause(2). `pidfd` is a valid int the kernel fills (CLONE_PIDFD).
    let mut pid = unsafe {
        let top = stack.as_mut_ptr().add(CHILD_STACK) as usize & !15;
        libc::clone(
            hold,
            top as *mut libc::c_void,
            libc::CLONE_NEWUSER | libc::CLONE_VM | libc::CLONE_PIDFD | libc::SIGCHLD,
            std::ptr::null_mut(),
            &mut pidfd as *mut libc::c_int,
        )
    };
    if pid < 0 {
        pidfd = -1;
        // SAFETY: as above, without a pidfd (kernels before 5.2).
        pid = unsafe {
            let top = stack.as_mut_ptr().add(CHILD_STACK) as usize & !15;
            libc::clone(
                hold,
                top as *mut libc::c_void,
                libc::CLONE_NEWUSER | libc::CLONE_VM | libc::SIGCHLD,
                std::ptr::null_mut(),
            )
        };
    }
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let r = crate::linux::sys::write_file(
        Path::new(&format!("/proc/{pid}/uid_map")),
        uid_map.as_bytes(),
    )
    .and_then(|_| {
        crate::linux::sys::write_file(
            Path::new(&format!("/proc/{pid}/gid_map")),
            gid_map.as_bytes(),
        )
    })
    .and_then(|_| open_ns(pid));
    crate::linux::sys::kill(pid, libc::SIGKILL);
    if pidfd >= 0 {
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        KILLED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((fd, stack));
        return r;
    }
    let mut status = 0;
    // SAFETY: reaping our own child; status is a valid int.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    drop(stack);
    r
}

/// Killed namespace children not reaped yet: each one's pidfd (no pid
/// reuse can make the wait take another child) and its stack.
type Killed = Vec<(OwnedFd, Box<[u8]>)>;
static KILLED: Mutex<Killed> = Mutex::new(Vec::new());

/// `waitid`'s id type for a pidfd (Linux 5.4).
const P_PIDFD: libc::idtype_t = 3;

/// Reap the killed children that have exited (never blocks); a zombie
/// left is reaped at the next call or with this process.
pub(crate) fn reap_killed() {
    let mut killed = KILLED.lock().unwrap_or_else(|e| e.into_inner());
    killed.retain(|(fd, _)| {
        use std::os::fd::AsRawFd;
        // SAFETY: an all-zero siginfo_t is a valid value to be filled.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: fd is a live pidfd of our child; info is valid.
        let r = unsafe {
            libc::waitid(
                P_PIDFD,
                fd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG,
            )
        };
        // SAFETY: waitid filled info (or left it zeroed: pid 0).
        let done = r < 0 || unsafe { info.si_pid() } != 0;
        !done
    });
}

fn open_ns(pid: libc::pid_t) -> io::Result<OwnedFd> {
    let c = crate::linux::sys::cstr(format!("/proc/{pid}/ns/user"))?;
    // SAFETY: c is a valid path.
    let fd = crate::linux::sys::check(unsafe {
        libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_include_the_gid() {
        // SAFETY: getgid cannot fail.
        assert!(caller_groups().contains(&unsafe { libc::getgid() }));
    }

    #[test]
    fn probe_as_root_prepares_existing_dirs_only() {
        // SAFETY: getuid cannot fail.
        if unsafe { libc::getuid() } != 0 {
            return; // idmapped mounts need root
        }
        let (dirs, why) = probe();
        for d in &dirs {
            assert!(is_real_dir(d), "{}", d.display());
        }
        if why.is_none() {
            let want: Vec<PathBuf> = DIRS
                .iter()
                .map(PathBuf::from)
                .filter(|d| is_real_dir(d))
                .collect();
            assert_eq!(dirs, want);
        }
        release();
    }
}
