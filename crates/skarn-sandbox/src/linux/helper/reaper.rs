//! The reaper: a detached process that, once the helper and everything
//! holding its pipe are gone, removes the run's cgroups and any
//! placeholder the helper could not remove (because it was killed), and
//! runs the run's check after the run when the helper was killed before
//! it ([`crate::protect::run_record`]; its findings are kept for the next run or
//! hook call to show). The exit status never waits for the kernel to
//! release a cgroup.

use std::path::PathBuf;

use super::cgroup::{Cgroup, cgroup_dir};
use super::release::{Reserved, open_dir, remove_created, remove_empties, remove_placeholders};
use crate::linux::sys;
use crate::protect::placeholder::is_placeholder;

/// Start the reaper (None when it could not be started). Forked before the
/// PID namespace exists (a dead namespace refuses new children).
pub(super) fn spawn(
    cgroup_parents: &[PathBuf],
    reserved: &Reserved,
    cow: Option<&super::layer::Cow>,
    record: Option<&crate::protect::run_record::Held>,
) -> Option<()> {
    let record_fd = record.map_or(-1, |r| r.fd());
    let record_path = record.map(|r| r.path().to_path_buf());
    let cg = (!cgroup_parents.is_empty()).then(|| Cgroup {
        dirs: cgroup_parents.iter().map(|p| cgroup_dir(p)).collect(),
    });
    let ws = reserved.ws.clone();
    let paths = reserved.paths.clone();
    let stage = reserved.stage.clone();
    let absent = reserved.absent.clone();
    let empties = reserved.empties.clone();
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return None;
    }
    // SAFETY: the helper is single-threaded (a fresh exec that starts no threads).
    if let Ok(0) = unsafe { sys::fork() } {
        // SAFETY: setsid/open/dup2/read/close on our own descriptors. Our
        // copy of the workspace lock is closed at once so that it does not
        // keep other runs from cleaning up.
        unsafe {
            libc::close(fds[1]);
            if reserved.lock_fd >= 0 {
                libc::close(reserved.lock_fd);
            }
            // Nor the layer's lock: the layer is free once the helper and
            // init are gone.
            if let Some(c) = cow {
                libc::close(std::os::fd::AsRawFd::as_raw_fd(&c.layer.lock_fd()));
            }
            // Nor the run's record lock (it marks the run alive).
            if record_fd >= 0 {
                libc::close(record_fd);
            }
            libc::setsid();
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            let mut b = [0u8; 1];
            while libc::read(fds[0], b.as_mut_ptr().cast(), 1) != 0 {
                if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
        // The dead helper's descriptors (and its shared lock) may close a
        // moment after the pipe reports EOF: retry briefly. A run still
        // using the workspace keeps its lock and cleans up itself.
        remove_created(&absent);
        let staged = stage.as_ref().is_some_and(|s| s.exists());
        if (staged || !empties.is_empty() || paths.iter().any(|p| is_placeholder(p).is_some()))
            && let Some(fd) = open_dir(&ws)
        {
            let mut exclusive = false;
            for _ in 0..50 {
                // SAFETY: fd is open; non-blocking exclusive attempt.
                if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                    remove_placeholders(&paths);
                    remove_empties(&empties);
                    exclusive = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if let Some(s) = &stage {
                let _ = crate::linux::staging::finalize(&ws, s, exclusive);
            }
            // SAFETY: closing our own fd.
            unsafe { libc::close(fd) };
        }
        // The run was killed before it applied its layer: apply it now,
        // vetted (a layer another process still holds is left alone).
        if let Some(c) = cow {
            let ws = &c.rules.ws;
            for _ in 0..50 {
                let left = std::fs::symlink_metadata(&c.layer.base).is_ok();
                let free = crate::linux::cow::pending(ws, c.state.as_deref());
                let none = free.is_empty();
                for l in free {
                    // (With the workspace's walk deferred to this point:
                    // ADR 0259.)
                    let (rules, _) = c.rules_for(&l.upper);
                    let _ = crate::linux::cow::finish(l, &rules);
                }
                if !left || !none {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        if let Some(cg) = cg {
            cg.remove();
        }
        if let Some(run) = &record_path {
            // A helper killed before its check after the run: run it once
            // init (which holds the record's lock too) is gone as well
            // (the kernel may take a while to end a PID namespace under
            // load: up to a minute; the next run or guard call catches up
            // otherwise).
            for _ in 0..6000 {
                if std::fs::symlink_metadata(run).is_err() {
                    break;
                }
                crate::linux::helper::dead_runs::catch_up_to_file(run);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        sys::exit_now(0)
    }
    // SAFETY: the helper keeps only the write end (close-on-exec).
    unsafe { libc::close(fds[0]) };
    Some(())
}
