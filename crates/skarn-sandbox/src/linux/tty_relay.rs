//! `skarn run` with its output on a terminal: the sandbox helper's stdout
//! and stderr (those that are terminals) go to a pseudo-terminal of ours,
//! so the command still sees a terminal (colours, progress bars), and what
//! it writes reaches the real terminal through [`term_guard::Filter`]:
//! clipboard writes, title reports and other control strings never do.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, ExitCode};

use crate::protect::terminal_filter as term_guard;

fn is_tty(fd: i32) -> bool {
    // SAFETY: isatty takes an integer and touches no memory of ours.
    unsafe { libc::isatty(fd) == 1 }
}

/// Whether stdout or stderr is a terminal (the relay is needed).
pub fn output_is_terminal() -> bool {
    is_tty(1) || is_tty(2)
}

/// When standard input is a terminal, reopen it read-only in this
/// process, before the sandbox helper starts: the command still reads its
/// input there, but what it writes to fd 0 would reach the terminal
/// unfiltered, whatever its stdout and stderr are (with both redirected
/// to files the relay does not run at all; attack atk22k F4). The
/// command has no controlling terminal (`/dev/tty` fails: the helper
/// starts it in a session of its own) and Landlock refuses a reopen of
/// the terminal for writing. Returns a message when the terminal could
/// not be reopened and fd 0 became `/dev/null` instead.
pub fn input_read_only() -> Option<String> {
    if !is_tty(0) {
        return None;
    }
    // SAFETY: a NUL-terminated literal path; flags only otherwise.
    let mut fd = unsafe {
        libc::open(
            c"/proc/self/fd/0".as_ptr(),
            libc::O_RDONLY | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    let mut said = None;
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        said = Some(format!(
            "the terminal on standard input could not be reopened read-only ({e}): the command \
             reads /dev/null instead"
        ));
        // SAFETY: as above.
        fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            // Nothing to put there: the command must not write the
            // terminal, so it gets no standard input at all.
            // SAFETY: closing our own fd 0.
            unsafe { libc::close(0) };
            return said;
        }
    }
    // SAFETY: fd is ours; dup2 replaces fd 0 (without close-on-exec) and
    // the original descriptor is closed after.
    unsafe {
        libc::dup2(fd, 0);
        libc::close(fd);
    }
    said
}

/// A new pseudo-terminal: (master, slave).
fn open_pty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let err = std::io::Error::last_os_error;
    // SAFETY: posix_openpt takes flags only.
    let m = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if m < 0 {
        return Err(err());
    }
    // SAFETY: m is a descriptor we own from here on.
    let master = unsafe { OwnedFd::from_raw_fd(m) };
    // SAFETY: grantpt/unlockpt take the master descriptor only.
    if unsafe { libc::grantpt(m) } != 0 || unsafe { libc::unlockpt(m) } != 0 {
        return Err(err());
    }
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: name is a writable buffer of the length given.
    if unsafe { libc::ptsname_r(m, name.as_mut_ptr(), name.len()) } != 0 {
        return Err(err());
    }
    // SAFETY: ptsname_r NUL-terminated name; flags only otherwise.
    let s = unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if s < 0 {
        return Err(err());
    }
    // SAFETY: s is a descriptor we own from here on.
    let slave = unsafe { OwnedFd::from_raw_fd(s) };
    // Newlines pass as they are: the real terminal translates them itself.
    // SAFETY: zeroed termios is a valid out-parameter; s is ours.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: t is a valid termios for both calls.
    if unsafe { libc::tcgetattr(s, &mut t) } == 0 {
        t.c_oflag &= !libc::ONLCR;
        // SAFETY: as above.
        unsafe { libc::tcsetattr(s, libc::TCSANOW, &t) };
    }
    // The real terminal's size, so that the command lays out its lines.
    for fd in [1, 2] {
        // SAFETY: zeroed winsize is a valid out-parameter.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: ws is a valid winsize for both ioctls.
        if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0 {
            // SAFETY: as above.
            unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
            break;
        }
    }
    Ok((master, slave))
}

/// Run `cmd` (the sandbox helper) with its terminal outputs on a
/// pseudo-terminal, relaying them filtered; returns its exit status.
pub fn run(mut cmd: Command) -> std::io::Result<ExitCode> {
    let (master, slave) = open_pty()?;
    let (out_tty, err_tty) = (is_tty(1), is_tty(2));
    if is_tty(0) {
        // The terminal stays the command's input, but read-only: written
        // through fd 0, control strings would reach it unfiltered.
        // (Reopening it for writing through /proc/self/fd is refused by
        // Landlock: the terminal is no granted path.)
        let c = std::ffi::CString::new("/proc/self/fd/0").map_err(std::io::Error::other)?;
        // SAFETY: c is a valid NUL-terminated path; flags only otherwise.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        };
        if fd >= 0 {
            // SAFETY: fd is a descriptor we own from here on.
            cmd.stdin(unsafe { OwnedFd::from_raw_fd(fd) });
        } else {
            cmd.stdin(std::process::Stdio::null());
        }
    }
    if out_tty {
        cmd.stdout(slave.try_clone()?);
    }
    if err_tty {
        cmd.stderr(slave.try_clone()?);
    }
    let mut child = cmd.spawn()?;
    // The Command holds its copies of the slave side: without dropping
    // them the master never reports the end of the output.
    drop(cmd);
    drop(slave);
    let real = if out_tty { 1 } else { 2 };
    let mut from = std::fs::File::from(master);
    // SAFETY: fd 1 or 2 stays open for the life of this process; the
    // ManuallyDrop keeps the File from closing it.
    let mut to = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(real) });
    let mut filter = term_guard::Filter::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut out = Vec::with_capacity(buf.len());
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.clear();
                filter.push(&buf[..n], &mut out);
                if to.write_all(&out).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // EIO: every holder of the slave side has closed it.
            Err(_) => break,
        }
    }
    let status = child.wait()?;
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
