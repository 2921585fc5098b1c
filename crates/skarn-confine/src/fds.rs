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
    close_above_stderr_keeping(keep.as_slice());
}

/// [`close_above_stderr`] keeping each descriptor of `keep`.
pub fn close_above_stderr_keeping(keep: &[BorrowedFd<'_>]) {
    let mut kept: Vec<u32> = keep
        .iter()
        .map(|k| k.as_raw_fd().unsigned_abs())
        .filter(|&k| k > 2)
        .collect();
    kept.sort_unstable();
    kept.dedup();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut first = 3u32;
    for k in &kept {
        if *k > first {
            ranges.push((first, k - 1));
        }
        first = k + 1;
    }
    ranges.push((first, u32::MAX));
    if ranges.iter().all(|&(a, b)| close_range(a, b, 0).is_ok()) {
        return;
    }
    // Kernels before 5.9: close what /proc lists, or a fixed span.
    let fds = open_above_stderr().unwrap_or_else(|_| (3..1024).collect());
    for fd in fds
        .into_iter()
        .filter(|fd| !kept.contains(&fd.unsigned_abs()))
    {
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

/// Why a standard descriptor (0, 1 or 2) was replaced by
/// [`neutralize_stdio_handles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// The descriptor number.
    pub fd: i32,
    /// What it was (a directory, a path handle, a network socket).
    pub was: &'static str,
}

/// The address family of socket `fd`, if it is a socket.
fn socket_domain(fd: i32) -> Option<i32> {
    let mut domain: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `domain`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut domain as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(domain)
}

/// Replace each of stdin, stdout and stderr that is a directory or an
/// `O_PATH` handle by `/dev/null` (opened read-write from the current
/// root). Such a descriptor is no stream at all, and it reaches the file
/// tree it came from: `openat(0, ...)` and `/proc/self/fd/0/...` resolve
/// names in the caller's view of the filesystem, past a mount namespace's
/// masks and read-only binds. Unless `keep_net_sockets`, a socket of any
/// family but `AF_UNIX` is replaced too: it belongs to the caller's
/// network namespace, so a command could `connect` or `sendto` anywhere
/// through it whatever its own network policy says. Other streams (pipes,
/// unix sockets, terminals, regular files) are kept. Returns what was
/// replaced; errors when `/dev/null` cannot be opened or a descriptor
/// cannot be replaced.
pub fn neutralize_stdio_handles(keep_net_sockets: bool) -> io::Result<Vec<Replaced>> {
    let mut out = Vec::new();
    for fd in 0..=2 {
        // SAFETY: fcntl on an integer descriptor; an unused one is EBADF.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            continue; // closed: nothing to reach through it
        }
        // SAFETY: an all-zero stat is a valid value to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes into st; fd is an integer.
        let kind = if unsafe { libc::fstat(fd, &mut st) } == 0 {
            st.st_mode & libc::S_IFMT
        } else {
            0
        };
        let was = if kind == libc::S_IFDIR {
            "a directory (a handle on the caller's file tree)"
        } else if flags & libc::O_PATH != 0 {
            "a path handle (a handle on the caller's file tree)"
        } else if kind == libc::S_IFSOCK
            && !keep_net_sockets
            && socket_domain(fd).is_none_or(|d| d != libc::AF_UNIX)
        {
            "a network socket of the caller's network (outside the run's network policy)"
        } else {
            continue;
        };
        // SAFETY: static NUL-terminated path; flags are integers.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if null < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: integers; dup2 replaces fd atomically (and clears
        // close-on-exec on it); then our temporary descriptor is closed.
        let r = unsafe { libc::dup2(null, fd) };
        let err = io::Error::last_os_error();
        // SAFETY: closing the descriptor opened above.
        unsafe { libc::close(null) };
        if r < 0 {
            return Err(err);
        }
        out.push(Replaced { fd, was });
    }
    Ok(out)
}
