//! The caller's terminal, when the command inherits it on fd 0, 1 or 2.
//!
//! The command may change the terminal's settings (echo off, raw mode) and
//! die before it restores them, or on purpose. The helper saves the
//! settings of every terminal among fds 0-2 before the run ([`Saved::take`])
//! and puts them back afterwards, whatever the command's fate (normal exit,
//! signal, timeout), with [`Saved::restore`]. While a host terminal is
//! inherited, the seccomp filter also refuses `ioctl(TIOCSWINSZ)`
//! ([`crate::linux::seccomp::DENY_TIOCSWINSZ`]).

/// Terminal settings saved before a run.
#[derive(Default)]
pub struct Saved {
    ttys: Vec<(libc::c_int, libc::termios)>,
}

/// Whether `fd` is a terminal.
fn is_tty(fd: libc::c_int) -> bool {
    // SAFETY: isatty takes an integer and touches no memory of ours.
    unsafe { libc::isatty(fd) == 1 }
}

/// Whether any of fds 0, 1, 2 is a terminal.
pub(crate) fn host_tty_inherited() -> bool {
    (0..3).any(is_tty)
}

fn get(fd: libc::c_int) -> Option<libc::termios> {
    // SAFETY: zeroed termios is a valid out-parameter for tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: t is a valid termios.
    (unsafe { libc::tcgetattr(fd, &mut t) } == 0).then_some(t)
}

fn same(a: &libc::termios, b: &libc::termios) -> bool {
    a.c_iflag == b.c_iflag
        && a.c_oflag == b.c_oflag
        && a.c_cflag == b.c_cflag
        && a.c_lflag == b.c_lflag
        && a.c_line == b.c_line
        && a.c_cc == b.c_cc
        && a.c_ispeed == b.c_ispeed
        && a.c_ospeed == b.c_ospeed
}

impl Saved {
    /// Save the settings of every terminal among fds 0-2.
    pub fn take() -> Saved {
        Saved {
            ttys: (0..3)
                .filter(|fd| is_tty(*fd))
                .filter_map(|fd| Some((fd, get(fd)?)))
                .collect(),
        }
    }

    /// Whether a terminal was found.
    pub fn any(&self) -> bool {
        !self.ttys.is_empty()
    }

    /// Put the saved settings back where they changed. SIGTTOU is ignored
    /// meanwhile, so a run in a background job is not stopped by it.
    /// Returns how many descriptors were restored.
    pub fn restore(&self) -> usize {
        for (fd, _) in &self.ttys {
            // Output suspended by the command (tcflow TCOOFF) would block
            // the host shell's next write: resume it. Harmless otherwise.
            // SAFETY: tcflow on a descriptor we saved as a terminal.
            unsafe { libc::tcflow(*fd, libc::TCOON) };
        }
        let changed: Vec<&(libc::c_int, libc::termios)> = self
            .ttys
            .iter()
            .filter(|(fd, t)| get(*fd).is_some_and(|now| !same(&now, t)))
            .collect();
        if changed.is_empty() {
            return 0;
        }
        // SAFETY: setting and then restoring the disposition of SIGTTOU.
        let old = unsafe { libc::signal(libc::SIGTTOU, libc::SIG_IGN) };
        let mut n = 0;
        for (fd, t) in changed {
            // SAFETY: t is a termios obtained from tcgetattr on this fd.
            if unsafe { libc::tcsetattr(*fd, libc::TCSANOW, t) } == 0 {
                n += 1;
            }
        }
        // SAFETY: restoring the previous disposition.
        unsafe { libc::signal(libc::SIGTTOU, old) };
        n
    }
}
