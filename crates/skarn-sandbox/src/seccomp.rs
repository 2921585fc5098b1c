//! seccomp-bpf: the sandbox's deny-list, kept as readable data.
//!
//! [`DENY_LIST`] is the sandbox's deny-list: one entry per syscall (or
//! syscall + argument pattern) with the reason it is denied, written with
//! the confinement kit's one rule type ([`SyscallRule`], shared with the
//! worker's allow-list) and compiled by the kit's one compile path in
//! deny-list mode: one program per errno, everything unmatched allowed.
//! The kit's foreign-ABI guard applies: a foreign-architecture syscall
//! (e.g. the i386 `int 0x80` ABI on x86_64) kills the process, and on
//! x86_64 every x32 ABI syscall (number with bit 30 set) fails with ENOSYS,
//! so neither ABI can be used to slip past the table. Numbers above
//! [`HIGHEST_AUDITED_SYSCALL`] fail with ENOSYS.

use skarn_confine::seccomp::{self as kit, Context, Mode};
pub use skarn_confine::seccomp::{
    ArgCheck, ArgMatch, BpfProgram, Cmp, OnMatch, SeccompError, SyscallRule, Width,
};

const EPERM: i32 = libc::EPERM;
const ENOSYS: i32 = libc::ENOSYS;

const fn deny(name: &'static str, nr: i64, why: &'static str) -> SyscallRule {
    SyscallRule::errno(name, nr, ArgMatch::Any, EPERM, why)
}

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

const fn nosys(name: &'static str, nr: i64, why: &'static str) -> SyscallRule {
    SyscallRule::errno(name, nr, ArgMatch::Any, ENOSYS, why)
}

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

/// Highest syscall number audited for this filter (`file_setattr`, Linux
/// 6.17; x86_64 and aarch64 share numbers from 424 on). Every higher
/// number, i.e. a syscall added by a later kernel that nobody has looked
/// at, fails with ENOSYS, the answer of a kernel that lacks it, so libc and
/// runtimes fall back to older calls.
pub const HIGHEST_AUDITED_SYSCALL: u32 = 469;

/// Syscalls newer than the `libc` crate's tables (same number on x86_64
/// and aarch64).
pub mod newer {
    /// `setxattrat` (Linux 6.13).
    pub const SETXATTRAT: i64 = 463;
    /// `open_tree_attr` (Linux 6.15).
    pub const OPEN_TREE_ATTR: i64 = 467;
    /// `file_setattr` (Linux 6.17).
    pub const FILE_SETATTR: i64 = 469;
}

/// Socket families a sandboxed command may create, under every network
/// policy: unix, IPv4, IPv6 (inside an empty or loopback-only network
/// namespace unless `--net outbound|all`) and netlink (restricted to
/// [`NETLINK_ALLOWED`]). Everything else (vsock, packet, bluetooth, alg,
/// key, xdp, rds, tipc, can, nfc, pppox, llc, ...) reaches kernel code or
/// peers outside the namespaces and fails with EAFNOSUPPORT, what a
/// kernel without that family says.
pub const SOCKET_FAMILIES_ALLOWED: &[u64] = &[
    libc::AF_UNIX as u64,
    libc::AF_INET as u64,
    libc::AF_INET6 as u64,
    libc::AF_NETLINK as u64,
];

/// Netlink protocols allowed: ROUTE (glibc `getaddrinfo(AI_ADDRCONFIG)`,
/// `if_nameindex`, `ip`), SOCK_DIAG (`ss`), KOBJECT_UEVENT (libudev
/// monitors; read-only). Others (audit, netfilter, xfrm, generic, ...)
/// fail with EAFNOSUPPORT, which libaudit and friends read as "not in this
/// kernel".
pub const NETLINK_ALLOWED: &[u64] = &[
    libc::NETLINK_ROUTE as u64,
    libc::NETLINK_SOCK_DIAG as u64,
    libc::NETLINK_KOBJECT_UEVENT as u64,
];

const fn family_not_allowed(arg: u8) -> [ArgCheck; 4] {
    [
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_UNIX as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_INET as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_INET6 as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_NETLINK as u64)),
    ]
}
const SOCKET_FAMILY_NOT_ALLOWED: [ArgCheck; 4] = family_not_allowed(0);
const NETLINK_PROTO_NOT_ALLOWED: [ArgCheck; 4] = [
    ArgCheck::dword(0, Cmp::Eq(libc::AF_NETLINK as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_ROUTE as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_SOCK_DIAG as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_KOBJECT_UEVENT as u64)),
];

/// Namespace-creating clone(2) flags.
const CLONE_NS_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// The sandbox deny-list, applied after set-up, right before exec.
pub const DENY_LIST: &[SyscallRule] = &[
    // --- other processes ---
    deny(
        "ptrace",
        libc::SYS_ptrace,
        "inspect or control another process",
    ),
    deny(
        "process_vm_readv",
        libc::SYS_process_vm_readv,
        "read another process's memory",
    ),
    deny(
        "process_vm_writev",
        libc::SYS_process_vm_writev,
        "write another process's memory",
    ),
    deny(
        "process_madvise",
        libc::SYS_process_madvise,
        "act on another process's memory",
    ),
    deny(
        "pidfd_getfd",
        libc::SYS_pidfd_getfd,
        "steal a descriptor from another process",
    ),
    deny(
        "kcmp",
        libc::SYS_kcmp,
        "probe other processes' kernel objects",
    ),
    // --- filesystem topology and namespaces ---
    deny("mount", libc::SYS_mount, "change the filesystem view"),
    deny(
        "umount2",
        libc::SYS_umount2,
        "uncover hidden paths by unmounting",
    ),
    deny(
        "pivot_root",
        libc::SYS_pivot_root,
        "change the root filesystem",
    ),
    deny("chroot", libc::SYS_chroot, "change the root directory"),
    deny(
        "fsopen",
        libc::SYS_fsopen,
        "new mount API: create a filesystem context",
    ),
    deny(
        "fsconfig",
        libc::SYS_fsconfig,
        "new mount API: configure a filesystem",
    ),
    deny(
        "fsmount",
        libc::SYS_fsmount,
        "new mount API: create a mount",
    ),
    deny(
        "fspick",
        libc::SYS_fspick,
        "new mount API: reconfigure a mount",
    ),
    deny(
        "move_mount",
        libc::SYS_move_mount,
        "new mount API: attach a mount",
    ),
    deny(
        "open_tree",
        libc::SYS_open_tree,
        "new mount API: clone a mount tree",
    ),
    deny(
        "mount_setattr",
        libc::SYS_mount_setattr,
        "change mount flags (e.g. drop read-only)",
    ),
    deny(
        "unshare",
        libc::SYS_unshare,
        "create new namespaces after set-up",
    ),
    deny("setns", libc::SYS_setns, "join another namespace"),
    SyscallRule {
        name: "clone",
        nr: libc::SYS_clone,
        args: ArgMatch::AnyBit {
            arg: 0,
            bits: CLONE_NS_FLAGS,
        },
        on_match: OnMatch::Errno(EPERM),
        why: "clone with CLONE_NEW* flags creates namespaces (plain fork/thread creation allowed)",
    },
    nosys(
        "clone3",
        libc::SYS_clone3,
        "flags are behind a pointer; libc falls back to clone",
    ),
    deny(
        "open_by_handle_at",
        libc::SYS_open_by_handle_at,
        "open files by handle, bypassing paths",
    ),
    deny(
        "name_to_handle_at",
        libc::SYS_name_to_handle_at,
        "obtain file handles",
    ),
    // --- kernel attack surface ---
    deny("bpf", libc::SYS_bpf, "load eBPF programs"),
    deny(
        "perf_event_open",
        libc::SYS_perf_event_open,
        "performance counters (side channels, kernel surface)",
    ),
    deny(
        "userfaultfd",
        libc::SYS_userfaultfd,
        "stall kernel page faults (exploit primitive)",
    ),
    nosys(
        "io_uring_setup",
        libc::SYS_io_uring_setup,
        "io_uring bypasses syscall filtering",
    ),
    nosys(
        "io_uring_enter",
        libc::SYS_io_uring_enter,
        "io_uring bypasses syscall filtering",
    ),
    nosys(
        "io_uring_register",
        libc::SYS_io_uring_register,
        "io_uring bypasses syscall filtering",
    ),
    deny(
        "keyctl",
        libc::SYS_keyctl,
        "kernel keyrings are not namespaced",
    ),
    deny(
        "add_key",
        libc::SYS_add_key,
        "kernel keyrings are not namespaced",
    ),
    deny(
        "request_key",
        libc::SYS_request_key,
        "kernel keyrings are not namespaced",
    ),
    deny(
        "fanotify_init",
        libc::SYS_fanotify_init,
        "watch filesystem events host-wide",
    ),
    deny(
        "move_pages",
        libc::SYS_move_pages,
        "move another process's pages",
    ),
    deny(
        "migrate_pages",
        libc::SYS_migrate_pages,
        "move another process's pages",
    ),
    // --- system administration ---
    deny("kexec_load", libc::SYS_kexec_load, "load a new kernel"),
    deny(
        "kexec_file_load",
        libc::SYS_kexec_file_load,
        "load a new kernel",
    ),
    deny("init_module", libc::SYS_init_module, "load a kernel module"),
    deny(
        "finit_module",
        libc::SYS_finit_module,
        "load a kernel module",
    ),
    deny(
        "delete_module",
        libc::SYS_delete_module,
        "unload a kernel module",
    ),
    deny("reboot", libc::SYS_reboot, "reboot the machine"),
    deny("swapon", libc::SYS_swapon, "enable swap"),
    deny("swapoff", libc::SYS_swapoff, "disable swap"),
    deny("acct", libc::SYS_acct, "process accounting"),
    deny("quotactl", libc::SYS_quotactl, "disk quotas"),
    deny("syslog", libc::SYS_syslog, "read the kernel log"),
    deny("vhangup", libc::SYS_vhangup, "hang up the terminal"),
    deny("settimeofday", libc::SYS_settimeofday, "set the clock"),
    deny("clock_settime", libc::SYS_clock_settime, "set the clock"),
    deny("clock_adjtime", libc::SYS_clock_adjtime, "adjust the clock"),
    deny("adjtimex", libc::SYS_adjtimex, "adjust the clock"),
    deny(
        "lookup_dcookie",
        libc::SYS_lookup_dcookie,
        "kernel profiling",
    ),
    deny(
        "nfsservctl",
        libc::SYS_nfsservctl,
        "obsolete NFS daemon control",
    ),
    #[cfg(target_arch = "x86_64")]
    deny("uselib", libc::SYS_uselib, "obsolete shared-library loader"),
    #[cfg(target_arch = "x86_64")]
    deny("_sysctl", libc::SYS__sysctl, "obsolete sysctl interface"),
    #[cfg(target_arch = "x86_64")]
    deny("iopl", libc::SYS_iopl, "raw I/O port access"),
    #[cfg(target_arch = "x86_64")]
    deny("ioperm", libc::SYS_ioperm, "raw I/O port access"),
    #[cfg(target_arch = "x86_64")]
    deny(
        "modify_ldt",
        libc::SYS_modify_ldt,
        "segment descriptors (exploit primitive)",
    ),
    // --- set-user-ID / set-group-ID files ---
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
    deny(
        "open_tree_attr",
        newer::OPEN_TREE_ATTR,
        "new mount API: clone a mount tree with new attributes",
    ),
    // --- socket families ---
    SyscallRule {
        name: "socket(family not unix/inet/inet6/netlink)",
        nr: libc::SYS_socket,
        args: ArgMatch::All(&SOCKET_FAMILY_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "vsock, packet, bluetooth, alg, key, xdp, rds, tipc, can, ... reach the host \
              or kernel code outside the namespaces",
    },
    SyscallRule {
        name: "socket(AF_NETLINK, protocol not route/sock_diag/uevent)",
        nr: libc::SYS_socket,
        args: ArgMatch::All(&NETLINK_PROTO_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "audit, netfilter, xfrm, generic netlink: kernel surface no command needs",
    },
    SyscallRule {
        name: "socketpair(family not unix/inet/inet6/netlink)",
        nr: libc::SYS_socketpair,
        args: ArgMatch::All(&SOCKET_FAMILY_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "same family allow-list as socket(2)",
    },
    // --- terminal injection ---
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

/// Extra rule for `NetPolicy::DenyAll` without a network namespace.
pub const DENY_INET_SOCKETS: SyscallRule = SyscallRule {
    name: "socket(AF_INET|AF_INET6|AF_PACKET)",
    nr: libc::SYS_socket,
    args: ArgMatch::OneOf {
        arg: 0,
        width: Width::Dword,
        values: &[
            libc::AF_INET as u64,
            libc::AF_INET6 as u64,
            libc::AF_PACKET as u64,
        ],
    },
    on_match: OnMatch::Errno(libc::EACCES),
    why: "network denied and no network namespace: refuse IP and packet sockets",
};

/// Extra rule for `NetPolicy::AllowOutbound`.
pub const DENY_LISTEN: SyscallRule = SyscallRule {
    name: "listen",
    nr: libc::SYS_listen,
    args: ArgMatch::Any,
    on_match: OnMatch::Errno(libc::EACCES),
    why: "outbound-only network: accept no inbound connections",
};

/// The full deny-list for a plan: [`DENY_LIST`] plus optional extras, one
/// program per errno value, in install order.
pub fn deny_programs(extra: &[SyscallRule]) -> Result<Vec<BpfProgram>, SeccompError> {
    let all: Vec<SyscallRule> = DENY_LIST.iter().chain(extra.iter()).copied().collect();
    let mode = Mode::DenyList {
        highest_audited: HIGHEST_AUDITED_SYSCALL,
    };
    kit::compile(&all, mode, &Context::current())
}

/// Install programs on the calling thread. Requires no_new_privs (or
/// CAP_SYS_ADMIN). Irreversible.
pub fn install(programs: &[BpfProgram]) -> Result<(), SeccompError> {
    kit::install(programs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_covers_the_required_syscalls() {
        let names: Vec<&str> = DENY_LIST.iter().map(|r| r.name).collect();
        for required in [
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "mount",
            "umount2",
            "pivot_root",
            "unshare",
            "setns",
            "bpf",
            "perf_event_open",
            "keyctl",
            "add_key",
            "request_key",
            "kexec_load",
            "kexec_file_load",
            "init_module",
            "finit_module",
            "delete_module",
            "reboot",
            "swapon",
            "swapoff",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            "userfaultfd",
            "ioctl(TIOCSTI)",
            "openat2",
            "open_tree_attr",
            "socket(family not unix/inet/inet6/netlink)",
            "socketpair(family not unix/inet/inet6/netlink)",
        ] {
            assert!(names.contains(&required), "{required} missing");
        }
        // Every mode-carrying creation call is either mode-checked or refused.
        for r in DENY_LIST.iter().filter(|r| r.why.contains("set-user-ID")) {
            assert!(matches!(r.args, ArgMatch::AnyBit { .. }), "{}", r.name);
        }
        assert!(DENY_LIST.iter().any(|r| r.name == "openat2"
            && r.errno_value() == Some(libc::ENOSYS)
            && r.args == ArgMatch::Any));
        assert!(DENY_LIST.iter().all(|r| !r.why.is_empty()));
        assert!(DENY_LIST.iter().all(|r| r.errno_value().is_some()));
    }

    #[test]
    fn programs_compile_with_x32_guard() {
        let progs = deny_programs(&[DENY_LISTEN, DENY_INET_SOCKETS, DENY_TIOCSWINSZ]).unwrap();
        assert_eq!(
            progs.len(),
            5,
            "EPERM, ENOTTY, EACCES, EAFNOSUPPORT and ENOSYS groups"
        );
        let x86 = std::env::consts::ARCH == "x86_64";
        for p in &progs {
            if x86 {
                assert_eq!(p[4].code, 0x45);
                assert_eq!(p[4].k, 0x4000_0000);
            }
            let g = if x86 { 6 } else { 4 };
            assert_eq!(p[g].code, 0x25);
            assert_eq!(p[g].k, HIGHEST_AUDITED_SYSCALL);
        }
    }
}
