//! Inherited descriptors: close them, or mark them close-on-exec.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `close_range(first, last, flags)`; numbers only, no memory.
fn close_range(first: u32, last: u32, flags: u32) -> io::Result<()> {
    // SAFETY: close_range takes integers only. Callers make sure no live
    // Rust object owns a descriptor in the range (see each caller).
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, last, flags) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Descriptors above stderr that are open now (from `/proc/self/fd`).
fn open_above_stderr() -> io::Result<Vec<i32>> {
    Ok(std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect())
}

/// Close every descriptor above 2, keeping `keep` when given. Call it
/// first thing in a process, before any Rust object owns a descriptor
/// above 2 other than `keep` (their owners would close a reused number).
pub fn close_above_stderr(keep: Option<BorrowedFd<'_>>) {
    let ranges: Vec<(u32, u32)> = match keep.map(|k| k.as_raw_fd().unsigned_abs()) {
        Some(k) if k > 3 => vec![(3, k - 1), (k + 1, u32::MAX)],
        Some(3) => vec![(4, u32::MAX)],
        _ => vec![(3, u32::MAX)],
    };
    if ranges.iter().all(|&(a, b)| close_range(a, b, 0).is_ok()) {
        return;
    }
    // Kernels before 5.9: close what /proc lists, or a fixed span.
    let keep = keep.map(|k| k.as_raw_fd());
    let fds = open_above_stderr().unwrap_or_else(|_| (3..1024).collect());
    for fd in fds.into_iter().filter(|fd| Some(*fd) != keep) {
        // SAFETY: as above; EBADF for an unused number is harmless.
        unsafe { libc::close(fd) };
    }
}

/// Mark every descriptor above 2 close-on-exec, so that the next `execve`
/// inherits only stdin, stdout and stderr. Safe at any time: nothing is
/// closed before the exec.
pub fn cloexec_above_stderr() -> io::Result<()> {
    if close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC).is_ok() {
        return Ok(());
    }
    for fd in open_above_stderr()? {
        // SAFETY: fcntl on an integer descriptor; one already closed gives
        // EBADF, which is harmless.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}
