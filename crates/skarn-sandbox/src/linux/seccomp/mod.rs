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
//!
//! The table is kept by family, one file each (`processes`,
//! `namespaces_and_mounts`, `kernel_surface`, `administration`,
//! `setid_files`, `socket_families`, `terminal_ioctls`), joined in that
//! order at compile time; `entries` has the constructors.

mod administration;
mod entries;
mod kernel_surface;
mod namespaces_and_mounts;
mod processes;
mod setid_files;
mod socket_families;
mod terminal_ioctls;

use skarn_confine::seccomp::{self as kit, Context, Mode};
pub use skarn_confine::seccomp::{
    ArgCheck, ArgMatch, BpfProgram, Cmp, OnMatch, SeccompError, SyscallRule, Width,
};
pub use socket_families::{
    DENY_INET_SOCKETS, DENY_LISTEN, DENY_UNIX_SOCKETS, NETLINK_ALLOWED, SOCKET_FAMILIES_ALLOWED,
};
pub use terminal_ioctls::{
    DENY_TIOCSWINSZ, TIOCCONS, TIOCEXCL, TIOCLINUX, TIOCSETD, TIOCSTI, TIOCSWINSZ, TIOCVHANGUP,
};

/// Highest syscall number audited for this filter (`file_setattr`, Linux
/// 6.17; x86_64 and aarch64 share numbers from 424 on). Every higher
/// number, i.e. a syscall added by a later kernel that nobody has looked
/// at, fails with ENOSYS, the answer of a kernel that lacks it, so libc and
/// runtimes fall back to older calls.
pub(crate) const HIGHEST_AUDITED_SYSCALL: u32 = 469;

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

/// The family tables, in the order [`DENY_LIST`] holds them.
const FAMILIES: &[&[SyscallRule]] = &[
    processes::RULES,
    namespaces_and_mounts::RULES,
    kernel_surface::RULES,
    administration::RULES,
    setid_files::RULES,
    socket_families::RULES,
    terminal_ioctls::RULES,
];

const DENY_LIST_LEN: usize = entries::total_len(FAMILIES);
const JOINED: [SyscallRule; DENY_LIST_LEN] = entries::join(FAMILIES);

/// The sandbox deny-list, applied after set-up, right before exec.
pub const DENY_LIST: &[SyscallRule] = &JOINED;

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
    fn every_rule_gets_its_errno_and_unnamed_calls_run() {
        use skarn_confine::seccomp::eval::{self, Call, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO};
        let mut extra = vec![DENY_LISTEN, DENY_INET_SOCKETS, DENY_TIOCSWINSZ];
        extra.extend(DENY_UNIX_SOCKETS);
        let progs = deny_programs(&extra).expect("compiles");
        let pid = Context::current().own_pid;
        let all: Vec<SyscallRule> = DENY_LIST.iter().chain(&extra).copied().collect();
        for r in &all {
            let args = eval::matching_args(r, pid).expect("satisfiable rule");
            let call = Call::native(r.nr, args);
            let got = eval::evaluate_all(&progs, &call).expect("evaluates");
            // Another rule may name the same call with another errno.
            let expected: Vec<u32> = all
                .iter()
                .filter(|o| eval::rule_matches(o, &call, pid))
                .filter_map(|o| o.errno_value())
                .map(|e| SECCOMP_RET_ERRNO | e as u32)
                .collect();
            assert!(expected.contains(&got), "{}: {got:#x}", r.name);
        }
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_openat,
            libc::SYS_close,
            libc::SYS_execve,
            libc::SYS_exit_group,
            libc::SYS_mmap,
            libc::SYS_getpid,
            libc::SYS_wait4,
        ] {
            let got = eval::evaluate_all(&progs, &Call::native(nr, [0; 6])).expect("evaluates");
            assert_eq!(got, SECCOMP_RET_ALLOW, "syscall {nr}");
        }
        let above = Call::native(i64::from(HIGHEST_AUDITED_SYSCALL) + 1, [0; 6]);
        assert_eq!(
            eval::evaluate_all(&progs, &above).expect("evaluates"),
            SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        let mut foreign = Call::native(libc::SYS_getpid, [0; 6]);
        foreign.arch = 0x4000_0003; // i386
        assert_eq!(
            eval::evaluate_all(&progs, &foreign).expect("evaluates"),
            eval::SECCOMP_RET_KILL_PROCESS
        );
    }

    #[test]
    fn a_cut_walk_refuses_unix_sockets_but_stream_pairs() {
        use skarn_confine::seccomp::eval::{self, Call, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO};
        let progs = deny_programs(&DENY_UNIX_SOCKETS).expect("compiles");
        let unix = libc::AF_UNIX as u64;
        let cloexec = libc::SOCK_CLOEXEC as u64;
        let verdict = |nr: i64, family: u64, ty: u64| {
            eval::evaluate_all(&progs, &Call::native(nr, [family, ty, 0, 0, 0, 0]))
                .expect("evaluates")
        };
        let refused = SECCOMP_RET_ERRNO | libc::EACCES as u32;
        for ty in [libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_SEQPACKET] {
            let ty = ty as u64;
            assert_eq!(verdict(libc::SYS_socket, unix, ty), refused);
            assert_eq!(verdict(libc::SYS_socket, unix, ty | cloexec), refused);
        }
        for ty in [libc::SOCK_STREAM, libc::SOCK_SEQPACKET] {
            let ty = ty as u64 | cloexec;
            assert_eq!(verdict(libc::SYS_socketpair, unix, ty), SECCOMP_RET_ALLOW);
        }
        for ty in [libc::SOCK_DGRAM, libc::SOCK_RAW] {
            let ty = ty as u64;
            assert_eq!(verdict(libc::SYS_socketpair, unix, ty), refused);
            assert_eq!(verdict(libc::SYS_socketpair, unix, ty | cloexec), refused);
        }
        let inet = libc::AF_INET as u64;
        let stream = libc::SOCK_STREAM as u64;
        assert_eq!(verdict(libc::SYS_socket, inet, stream), SECCOMP_RET_ALLOW);
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
