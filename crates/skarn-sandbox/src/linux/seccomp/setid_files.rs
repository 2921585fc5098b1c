//! Deny-list family: set-user-ID and set-group-ID files, which would
//! outlive the run.

use super::entries::{EPERM, nosys};
use super::{ArgMatch, SyscallRule};

/// Deny `name` when its mode argument `arg` carries S_ISUID or S_ISGID.
const fn setid_mode(name: &'static str, nr: i64, arg: u8) -> SyscallRule {
    SyscallRule::errno(
        name,
        nr,
        ArgMatch::AnyBit {
            arg,
            bits: &[libc::S_ISUID as u64, libc::S_ISGID as u64],
        },
        EPERM,
        "a set-user-ID or set-group-ID file would outlive the run",
    )
}

pub(super) const RULES: &[SyscallRule] = &[
    // A file the command makes setuid or setgid outlives the run: run as
    // root, a setuid-root copy of a shell left in the workspace is a root
    // shell for any local user later. The mode argument is checked for
    // either bit; everything else about these calls is allowed.
    #[cfg(target_arch = "x86_64")]
    setid_mode("chmod", libc::SYS_chmod, 1),
    setid_mode("fchmod", libc::SYS_fchmod, 1),
    setid_mode("fchmodat", libc::SYS_fchmodat, 2),
    setid_mode("fchmodat2", libc::SYS_fchmodat2, 2),
    #[cfg(target_arch = "x86_64")]
    setid_mode("open", libc::SYS_open, 2),
    setid_mode("openat", libc::SYS_openat, 3),
    #[cfg(target_arch = "x86_64")]
    setid_mode("creat", libc::SYS_creat, 1),
    #[cfg(target_arch = "x86_64")]
    setid_mode("mknod", libc::SYS_mknod, 1),
    setid_mode("mknodat", libc::SYS_mknodat, 2),
    // openat2 carries its mode inside `struct open_how`, behind a pointer
    // seccomp cannot read. ENOSYS, like a pre-5.6 kernel: glibc and musl
    // never call it for open(3); direct callers (systemd, ...) fall back
    // to openat, whose mode is checked above.
    nosys(
        "openat2",
        libc::SYS_openat2,
        "mode is behind a pointer (struct open_how); callers fall back to openat",
    ),
];
