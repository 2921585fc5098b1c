//! The worker's seccomp ALLOW-list, kept as data.
//!
//! Every entry is one syscall the confined worker may make, with the reason
//! it is needed and, where the kernel lets a classic-BPF filter see it, a
//! restriction on its arguments. Anything not listed fails with `EPERM`
//! (decision recorded in ADR 0041: an error rather than a kill, so that a
//! library probing an optional syscall such as `rseq` or `statx` degrades
//! instead of crashing the run, and so the self-test can report what was
//! refused). Two exceptions are deliberate:
//! - `clone3` fails with `ENOSYS`, which makes glibc fall back to `clone`,
//!   whose flags (unlike `clone3`'s, passed in memory) the filter can check:
//!   only thread creation is allowed, never a new process.
//! - a syscall from a foreign architecture (e.g. the i386 ABI on x86_64)
//!   kills the process, and an x32-ABI number gets `EPERM` like any other
//!   unlisted call (the foreign-ABI guard of [`skarn_confine::seccomp`]).
//!
//! The table is written with the confinement kit's one rule type
//! ([`SyscallRule`]) and compiled by its one compile path, in allow-list
//! mode.
//!
//! The set was worked out by tracing real worker runs with `strace -f`
//! (see docs/worker.md, "How the allow-list was derived").

use skarn_confine::seccomp::{
    self, ArgCheck, ArgMatch, BpfProgram, Cmp, Context, Mode, Refusal, SyscallRule, Width,
};

const PROT_EXEC: u64 = libc::PROT_EXEC as u64;

/// Flags every thread-creating `clone` carries (glibc's `pthread_create`).
pub const THREAD_FLAGS: u64 = (libc::CLONE_VM
    | libc::CLONE_FS
    | libc::CLONE_FILES
    | libc::CLONE_SIGHAND
    | libc::CLONE_THREAD
    | libc::CLONE_SYSVSEM) as u64;

/// Flags a thread never needs and a process-creating or
/// namespace-changing clone would use.
pub const FORBIDDEN_CLONE_FLAGS: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_VFORK
    | libc::CLONE_PARENT
    | libc::CLONE_PTRACE
    | libc::CLONE_UNTRACED
    | libc::CLONE_PIDFD
    | libc::CLONE_NEWTIME) as u64;

/// Argument 0 (a descriptor) is stdin.
const FD_STDIN: ArgMatch = ArgMatch::OneOf {
    arg: 0,
    width: Width::Dword,
    values: &[0],
};
/// Argument 0 (a descriptor) is stdout or stderr.
const FD_STDOUT_STDERR: ArgMatch = ArgMatch::OneOf {
    arg: 0,
    width: Width::Dword,
    values: &[1, 2],
};
/// Argument 2 (`prot`) has no `PROT_EXEC`.
const NEVER_EXEC: ArgMatch = ArgMatch::All(&[ArgCheck::qword(
    2,
    Cmp::MaskedEq {
        mask: PROT_EXEC,
        value: 0,
    },
)]);
/// `prctl(PR_SET_NAME, ...)` only.
const PR_SET_NAME_ONLY: ArgMatch =
    ArgMatch::All(&[ArgCheck::qword(0, Cmp::Eq(libc::PR_SET_NAME as u64))]);
/// Argument 0 is the worker's own pid.
const OWN_PID: ArgMatch = ArgMatch::All(&[ArgCheck::dword(0, Cmp::EqOwnPid)]);
/// `clone`: only thread creation (all of `THREAD_FLAGS` set) and never
/// any namespace flag.
pub const THREAD_ONLY: ArgMatch = ArgMatch::All(&[
    ArgCheck::qword(
        0,
        Cmp::MaskedEq {
            mask: THREAD_FLAGS,
            value: THREAD_FLAGS,
        },
    ),
    ArgCheck::qword(
        0,
        Cmp::MaskedEq {
            mask: FORBIDDEN_CLONE_FLAGS,
            value: 0,
        },
    ),
]);

const fn allow(name: &'static str, nr: i64, args: ArgMatch, why: &'static str) -> SyscallRule {
    SyscallRule::allow(name, nr, args, why)
}
const ANY: ArgMatch = ArgMatch::Any;

/// The allow-list shared by x86_64 and aarch64 (numbers come from `libc`
/// for the target being built).
#[rustfmt::skip]
pub const COMMON: &[SyscallRule] = &[
    // --- pipe I/O: only the job pipe in, the result pipe and stderr out ---
    allow("read", libc::SYS_read, FD_STDIN, "read the job and host-call replies from stdin"),
    allow("write", libc::SYS_write, FD_STDOUT_STDERR, "write protocol lines to stdout, diagnostics to stderr"),
    allow("close", libc::SYS_close, ANY, "drop descriptors (never opens new ones)"),
    // --- memory management (no executable mappings: QuickJS has no JIT) ---
    allow("mmap", libc::SYS_mmap, NEVER_EXEC, "allocator and thread stacks, never PROT_EXEC"),
    allow("mprotect", libc::SYS_mprotect, NEVER_EXEC, "thread stack guard pages, never PROT_EXEC"),
    allow("munmap", libc::SYS_munmap, ANY, "allocator frees, thread stacks"),
    allow("mremap", libc::SYS_mremap, ANY, "realloc of large blocks"),
    allow("madvise", libc::SYS_madvise, ANY, "allocator trimming, freed thread stacks"),
    allow("brk", libc::SYS_brk, ANY, "glibc main heap"),
    // --- threads and synchronisation ---
    allow("futex", libc::SYS_futex, ANY, "mutexes, condvars, thread join, waking the engine"),
    allow("clone", libc::SYS_clone, THREAD_ONLY, "threads only (engine isolate thread, pipe reader)"),
    allow("set_robust_list", libc::SYS_set_robust_list, ANY, "glibc registers it in every new thread"),
    allow("rseq", libc::SYS_rseq, ANY, "glibc registers restartable sequences in every new thread"),
    allow("prctl", libc::SYS_prctl, PR_SET_NAME_ONLY, "PR_SET_NAME only: std names its threads"),
    allow("sched_yield", libc::SYS_sched_yield, ANY, "spin-wait back-off"),
    allow("sched_getaffinity", libc::SYS_sched_getaffinity, ANY, "glibc/std query the CPU set when sizing threads"),
    allow("gettid", libc::SYS_gettid, ANY, "own thread id (abort, thread naming)"),
    allow("getpid", libc::SYS_getpid, ANY, "own process id (abort)"),
    allow("getppid", libc::SYS_getppid, ANY, "parent pid (self-test reports what it tried on the parent)"),
    allow("tgkill", libc::SYS_tgkill, OWN_PID, "abort() raises SIGABRT in its own thread group only"),
    // --- signals (own handlers only; sending is limited to tgkill above) ---
    allow("rt_sigreturn", libc::SYS_rt_sigreturn, ANY, "return from a signal handler"),
    allow("rt_sigprocmask", libc::SYS_rt_sigprocmask, ANY, "glibc masks signals around thread creation and abort"),
    allow("rt_sigaction", libc::SYS_rt_sigaction, ANY, "abort() resets the SIGABRT handler"),
    allow("sigaltstack", libc::SYS_sigaltstack, ANY, "Rust's stack-overflow handler in every thread"),
    // --- time ---
    allow("clock_gettime", libc::SYS_clock_gettime, ANY, "deadline checks when the vDSO falls back to the kernel"),
    allow("clock_getres", libc::SYS_clock_getres, ANY, "clock resolution (vDSO fallback)"),
    allow("gettimeofday", libc::SYS_gettimeofday, ANY, "Date.now() (vDSO fallback)"),
    allow("clock_nanosleep", libc::SYS_clock_nanosleep, ANY, "sleeping waits"),
    allow("nanosleep", libc::SYS_nanosleep, ANY, "sleeping waits"),
    // --- misc ---
    allow("getrandom", libc::SYS_getrandom, ANY, "hash-map seeds, Math.random seed"),
    allow("restart_syscall", libc::SYS_restart_syscall, ANY, "kernel restarts an interrupted wait"),
    allow("exit", libc::SYS_exit, ANY, "a thread ends"),
    allow("exit_group", libc::SYS_exit_group, ANY, "the worker ends"),
];

/// x86_64-only entries.
#[cfg(target_arch = "x86_64")]
pub const ARCH: &[SyscallRule] = &[];

/// aarch64-only entries.
#[cfg(target_arch = "aarch64")]
pub const ARCH: &[SyscallRule] = &[];

/// Calls answered with an errno instead of `EPERM`.
pub const ANSWERED: &[SyscallRule] = &[SyscallRule::errno(
    "clone3",
    libc::SYS_clone3,
    ANY,
    libc::ENOSYS,
    "flags are behind a pointer: ENOSYS makes glibc fall back to clone, whose flags are checked",
)];

/// Every allowed syscall on this architecture.
pub fn allowed() -> impl Iterator<Item = &'static SyscallRule> {
    COMMON.iter().chain(ARCH.iter())
}

/// The whole table: the allowed calls and the ones answered with an errno.
pub fn rules() -> Vec<SyscallRule> {
    allowed().chain(ANSWERED.iter()).copied().collect()
}

/// Errors building the filter (a bug in this table, never the script).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct PolicyError(#[from] seccomp::SeccompError);

/// The BPF programs to install, in this order: the `clone3` → `ENOSYS`
/// program (it allows everything else), then the allow-list (everything
/// else `EPERM`; it lets `clone3` through to the first program). The
/// kernel runs both and keeps the most restrictive answer, so `clone3`
/// gets `ENOSYS`. The allow-list goes last because it refuses the call
/// that installing another filter would need.
pub fn build(own_pid: u32) -> Result<Vec<BpfProgram>, PolicyError> {
    let mode = Mode::AllowList {
        otherwise: Refusal::Errno(libc::EPERM),
    };
    Ok(seccomp::compile(&rules(), mode, &Context { own_pid })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_no_duplicates_and_every_entry_is_explained() {
        let mut seen = std::collections::BTreeSet::new();
        for a in rules() {
            assert!(seen.insert(a.nr), "duplicate entry {}", a.name);
            assert!(!a.why.is_empty(), "{} has no reason", a.name);
        }
    }

    #[test]
    fn dangerous_syscalls_are_not_allowed() {
        let names: Vec<&str> = allowed().map(|a| a.name).collect();
        for bad in [
            "openat",
            "open",
            "socket",
            "socketpair",
            "accept",
            "accept4",
            "connect",
            "sendto",
            "sendmsg",
            "recvmsg",
            "pidfd_getfd",
            "pidfd_open",
            "dup",
            "dup2",
            "dup3",
            "fcntl",
            "execve",
            "execveat",
            "fork",
            "vfork",
            "ptrace",
            "kill",
            "unshare",
            "setns",
            "mount",
            "bpf",
            "io_uring_setup",
            "seccomp",
            "ioctl",
            "process_vm_writev",
            "memfd_create",
            "pkey_mprotect",
        ] {
            assert!(!names.contains(&bad), "{bad} must not be allowed");
        }
    }

    #[test]
    fn only_restricted_forms_of_risky_syscalls() {
        let rule = |name: &str| allowed().find(|a| a.name == name).map(|a| a.args);
        assert_eq!(rule("prctl"), Some(PR_SET_NAME_ONLY));
        assert_eq!(rule("clone"), Some(THREAD_ONLY));
        assert_eq!(rule("read"), Some(FD_STDIN));
        assert_eq!(rule("write"), Some(FD_STDOUT_STDERR));
        assert_eq!(rule("mmap"), Some(NEVER_EXEC));
        assert_eq!(rule("mprotect"), Some(NEVER_EXEC));
        assert_eq!(rule("tgkill"), Some(OWN_PID));
        assert!(allowed().all(|a| a.errno_value().is_none()));
        assert_eq!(ANSWERED[0].errno_value(), Some(libc::ENOSYS));
    }

    #[test]
    fn allowed_calls_run_and_everything_else_is_refused() {
        use seccomp::eval::{self, Call, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO};
        let pid = 1234;
        let progs = build(pid).expect("filters build");
        for r in rules() {
            let args = eval::matching_args(&r, pid).expect("satisfiable rule");
            let got = eval::evaluate_all(&progs, &Call::native(r.nr, args)).expect("evaluates");
            let want = match r.errno_value() {
                Some(e) => SECCOMP_RET_ERRNO | e as u32,
                None => SECCOMP_RET_ALLOW,
            };
            assert_eq!(got, want, "{}", r.name);
        }
        let eperm = SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let table = rules();
        for nr in 0..480 {
            if table.iter().any(|r| r.nr == nr) {
                continue;
            }
            let got = eval::evaluate_all(&progs, &Call::native(nr, [0; 6])).expect("evaluates");
            assert_eq!(got, eperm, "syscall {nr}");
        }
        // Allowed only with the right arguments: write to a file descriptor
        // other than 1 and 2.
        let got = eval::evaluate_all(&progs, &Call::native(libc::SYS_write, [5, 0, 0, 0, 0, 0]))
            .expect("evaluates");
        assert_eq!(got, eperm);
    }

    #[test]
    fn filters_compile() {
        assert_eq!(build(1234).expect("filters build").len(), 2);
    }
}
