//! Deny-list family: ioctls on an inherited terminal (keystroke injection,
//! line discipline, console redirection, hang-up, exclusive lock), plus the
//! resize rule added when a host terminal is inherited.

use super::entries::EPERM;
use super::{ArgMatch, OnMatch, SyscallRule, Width};

/// `TIOCSTI` ioctl request (same value on x86_64 and aarch64).
pub const TIOCSTI: u64 = 0x5412;
/// `TIOCLINUX` ioctl request (same value on x86_64 and aarch64).
pub const TIOCLINUX: u64 = 0x541C;
/// `TIOCSETD` (set the line discipline).
pub const TIOCSETD: u64 = 0x5423;
/// `TIOCCONS` (redirect console output to this terminal).
pub const TIOCCONS: u64 = 0x541D;
/// `TIOCVHANGUP` (hang up the terminal).
pub const TIOCVHANGUP: u64 = 0x5437;
/// `TIOCEXCL` (exclusive mode: nobody else may open the terminal).
pub const TIOCEXCL: u64 = 0x540C;
/// `TIOCSWINSZ` (set the window size; signals the terminal's foreground
/// process group).
pub const TIOCSWINSZ: u64 = 0x5414;

pub(super) const RULES: &[SyscallRule] = &[
    SyscallRule {
        name: "ioctl(TIOCSTI)",
        nr: libc::SYS_ioctl,
        args: ArgMatch::OneOf {
            arg: 1,
            width: Width::Dword,
            values: &[TIOCSTI, TIOCLINUX],
        },
        on_match: OnMatch::Errno(EPERM),
        why: "TIOCSTI pushes keystrokes into a terminal; TIOCLINUX can too (and reads the console)",
    },
    SyscallRule {
        name: "ioctl(TIOCSETD|TIOCCONS|TIOCVHANGUP|TIOCEXCL)",
        nr: libc::SYS_ioctl,
        args: ArgMatch::OneOf {
            arg: 1,
            width: Width::Dword,
            values: &[TIOCSETD, TIOCCONS, TIOCVHANGUP, TIOCEXCL],
        },
        on_match: OnMatch::Errno(EPERM),
        why: "change the line discipline, steal console output, hang up or lock an \
              inherited host terminal",
    },
];

/// Extra rule when the command inherits a host terminal on fd 0, 1 or 2:
/// resizing it would signal (SIGWINCH) and mislead the host's foreground
/// process group after the run. ENOTTY, which pty users such as pexpect
/// already tolerate. Without a host terminal, ptys the command makes itself
/// (tmux, script, pexpect) resize freely.
pub const DENY_TIOCSWINSZ: SyscallRule = SyscallRule {
    name: "ioctl(TIOCSWINSZ)",
    nr: libc::SYS_ioctl,
    args: ArgMatch::OneOf {
        arg: 1,
        width: Width::Dword,
        values: &[TIOCSWINSZ],
    },
    on_match: OnMatch::Errno(libc::ENOTTY),
    why: "a host terminal is inherited: resizing it signals the host's foreground group",
};
