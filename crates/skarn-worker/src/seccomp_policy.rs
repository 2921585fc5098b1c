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
//!   kills the process (seccompiler's architecture check).
//!
//! The set was worked out by tracing real worker runs with `strace -f`
//! (see docs/worker.md, "How the allow-list was derived").

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What the filter checks on an allowed syscall's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRule {
    /// Allowed with any arguments.
    Any,
    /// Allowed only when argument `0` (a file descriptor) is one of these.
    FdIn(&'static [u64]),
    /// Allowed only when argument `index` equals `value`.
    ArgEq { index: u8, value: u64 },
    /// Allowed only when `arg & mask == 0` for argument `index`.
    MaskClear { index: u8, mask: u64 },
    /// Allowed only when argument `index` equals the worker's own pid
    /// (filled in when the filter is built).
    OwnPid { index: u8 },
    /// `clone`: only thread creation (all of `THREAD_FLAGS` set) and never
    /// any namespace flag.
    ThreadOnly,
}

/// One allowed syscall.
#[derive(Debug, Clone, Copy)]
pub struct Allowed {
    pub name: &'static str,
    pub nr: i64,
    pub rule: ArgRule,
    pub why: &'static str,
}

const fn allow(name: &'static str, nr: i64, rule: ArgRule, why: &'static str) -> Allowed {
    Allowed {
        name,
        nr,
        rule,
        why,
    }
}

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

/// The allow-list shared by x86_64 and aarch64 (numbers come from `libc`
/// for the target being built).
#[rustfmt::skip]
pub const COMMON: &[Allowed] = &[
    // --- pipe I/O: only the job pipe in, the result pipe and stderr out ---
    allow("read", libc::SYS_read, ArgRule::FdIn(&[0]), "read the job and host-call replies from stdin"),
    allow("write", libc::SYS_write, ArgRule::FdIn(&[1, 2]), "write protocol lines to stdout, diagnostics to stderr"),
    allow("close", libc::SYS_close, ArgRule::Any, "drop descriptors (never opens new ones)"),
    // --- memory management (no executable mappings: QuickJS has no JIT) ---
    allow("mmap", libc::SYS_mmap, ArgRule::MaskClear { index: 2, mask: PROT_EXEC }, "allocator and thread stacks, never PROT_EXEC"),
    allow("mprotect", libc::SYS_mprotect, ArgRule::MaskClear { index: 2, mask: PROT_EXEC }, "thread stack guard pages, never PROT_EXEC"),
    allow("munmap", libc::SYS_munmap, ArgRule::Any, "allocator frees, thread stacks"),
    allow("mremap", libc::SYS_mremap, ArgRule::Any, "realloc of large blocks"),
    allow("madvise", libc::SYS_madvise, ArgRule::Any, "allocator trimming, freed thread stacks"),
    allow("brk", libc::SYS_brk, ArgRule::Any, "glibc main heap"),
    // --- threads and synchronisation ---
    allow("futex", libc::SYS_futex, ArgRule::Any, "mutexes, condvars, thread join, waking the engine"),
    allow("clone", libc::SYS_clone, ArgRule::ThreadOnly, "threads only (engine isolate thread, pipe reader)"),
    allow("set_robust_list", libc::SYS_set_robust_list, ArgRule::Any, "glibc registers it in every new thread"),
    allow("rseq", libc::SYS_rseq, ArgRule::Any, "glibc registers restartable sequences in every new thread"),
    allow("prctl", libc::SYS_prctl, ArgRule::ArgEq { index: 0, value: libc::PR_SET_NAME as u64 }, "PR_SET_NAME only: std names its threads"),
    allow("sched_yield", libc::SYS_sched_yield, ArgRule::Any, "spin-wait back-off"),
    allow("sched_getaffinity", libc::SYS_sched_getaffinity, ArgRule::Any, "glibc/std query the CPU set when sizing threads"),
    allow("gettid", libc::SYS_gettid, ArgRule::Any, "own thread id (abort, thread naming)"),
    allow("getpid", libc::SYS_getpid, ArgRule::Any, "own process id (abort)"),
    allow("getppid", libc::SYS_getppid, ArgRule::Any, "parent pid (self-test reports what it tried on the parent)"),
    allow("tgkill", libc::SYS_tgkill, ArgRule::OwnPid { index: 0 }, "abort() raises SIGABRT in its own thread group only"),
    // --- signals (own handlers only; sending is limited to tgkill above) ---
    allow("rt_sigreturn", libc::SYS_rt_sigreturn, ArgRule::Any, "return from a signal handler"),
    allow("rt_sigprocmask", libc::SYS_rt_sigprocmask, ArgRule::Any, "glibc masks signals around thread creation and abort"),
    allow("rt_sigaction", libc::SYS_rt_sigaction, ArgRule::Any, "abort() resets the SIGABRT handler"),
    allow("sigaltstack", libc::SYS_sigaltstack, ArgRule::Any, "Rust's stack-overflow handler in every thread"),
    // --- time ---
    allow("clock_gettime", libc::SYS_clock_gettime, ArgRule::Any, "deadline checks when the vDSO falls back to the kernel"),
    allow("clock_getres", libc::SYS_clock_getres, ArgRule::Any, "clock resolution (vDSO fallback)"),
    allow("gettimeofday", libc::SYS_gettimeofday, ArgRule::Any, "Date.now() (vDSO fallback)"),
    allow("clock_nanosleep", libc::SYS_clock_nanosleep, ArgRule::Any, "sleeping waits"),
    allow("nanosleep", libc::SYS_nanosleep, ArgRule::Any, "sleeping waits"),
    // --- misc ---
    allow("getrandom", libc::SYS_getrandom, ArgRule::Any, "hash-map seeds, Math.random seed"),
    allow("restart_syscall", libc::SYS_restart_syscall, ArgRule::Any, "kernel restarts an interrupted wait"),
    allow("exit", libc::SYS_exit, ArgRule::Any, "a thread ends"),
    allow("exit_group", libc::SYS_exit_group, ArgRule::Any, "the worker ends"),
];

/// x86_64-only entries.
#[cfg(target_arch = "x86_64")]
pub const ARCH: &[Allowed] = &[];

/// aarch64-only entries.
#[cfg(target_arch = "aarch64")]
pub const ARCH: &[Allowed] = &[];

#[cfg(target_arch = "x86_64")]
fn target_arch() -> TargetArch {
    TargetArch::x86_64
}
#[cfg(target_arch = "aarch64")]
fn target_arch() -> TargetArch {
    TargetArch::aarch64
}

/// Every allowed syscall on this architecture.
pub fn allowed() -> impl Iterator<Item = &'static Allowed> {
    COMMON.iter().chain(ARCH.iter())
}

fn cond(
    index: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(index, SeccompCmpArgLen::Qword, op, value)
}

fn rules_for(a: &Allowed, own_pid: u64) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    Ok(match a.rule {
        ArgRule::Any => Vec::new(),
        ArgRule::FdIn(fds) => fds
            .iter()
            .map(|&fd| {
                SeccompRule::new(vec![SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    fd,
                )?])
            })
            .collect::<Result<_, _>>()?,
        ArgRule::ArgEq { index, value } => {
            vec![SeccompRule::new(vec![cond(
                index,
                SeccompCmpOp::Eq,
                value,
            )?])?]
        }
        ArgRule::MaskClear { index, mask } => {
            vec![SeccompRule::new(vec![cond(
                index,
                SeccompCmpOp::MaskedEq(mask),
                0,
            )?])?]
        }
        ArgRule::OwnPid { index } => vec![SeccompRule::new(vec![SeccompCondition::new(
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            own_pid,
        )?])?],
        ArgRule::ThreadOnly => vec![SeccompRule::new(vec![
            cond(0, SeccompCmpOp::MaskedEq(THREAD_FLAGS), THREAD_FLAGS)?,
            cond(0, SeccompCmpOp::MaskedEq(FORBIDDEN_CLONE_FLAGS), 0)?,
        ])?],
    })
}

/// Errors building the filter (a bug in this table, never the script).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("seccomp filter: {0}")]
    Backend(#[from] seccompiler::BackendError),
    #[error("seccomp filter: {0}")]
    Compile(#[from] seccompiler::Error),
}

/// The two BPF programs to install, in this order: the `clone3` → `ENOSYS`
/// filter (it allows everything else), then the allow-list (everything else
/// `EPERM`; it lets `clone3` through to the first filter). The kernel runs
/// both and keeps the most restrictive answer, so `clone3` gets `ENOSYS`.
/// The allow-list goes last because it refuses the `prctl` that installing
/// another filter would need.
pub fn build(own_pid: u32) -> Result<[BpfProgram; 2], PolicyError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for a in allowed() {
        rules.insert(a.nr, rules_for(a, u64::from(own_pid))?);
    }
    // clone3 is answered by the other filter (ENOSYS); let it through here.
    rules.insert(libc::SYS_clone3, Vec::new());
    let allow_list = SeccompFilter::new(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        target_arch(),
    )?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3_enosys = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        target_arch(),
    )?;
    Ok([clone3_enosys.try_into()?, allow_list.try_into()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_no_duplicates_and_every_entry_is_explained() {
        let mut seen = std::collections::BTreeSet::new();
        for a in allowed() {
            assert!(seen.insert(a.nr), "duplicate entry {}", a.name);
            assert!(!a.why.is_empty(), "{} has no reason", a.name);
        }
    }

    #[test]
    fn dangerous_syscalls_are_not_allowed() {
        let names: Vec<&str> = allowed().map(|a| a.name).collect();
        for bad in [
            "openat",
            "socket",
            "connect",
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
        let rule = |name: &str| allowed().find(|a| a.name == name).map(|a| a.rule);
        assert_eq!(
            rule("prctl"),
            Some(ArgRule::ArgEq {
                index: 0,
                value: libc::PR_SET_NAME as u64
            })
        );
        assert_eq!(rule("clone"), Some(ArgRule::ThreadOnly));
        assert_eq!(rule("read"), Some(ArgRule::FdIn(&[0])));
        assert_eq!(rule("write"), Some(ArgRule::FdIn(&[1, 2])));
        assert!(matches!(
            rule("mmap"),
            Some(ArgRule::MaskClear { index: 2, .. })
        ));
        assert!(matches!(
            rule("mprotect"),
            Some(ArgRule::MaskClear { index: 2, .. })
        ));
        assert!(matches!(rule("tgkill"), Some(ArgRule::OwnPid { index: 0 })));
    }

    #[test]
    fn filters_compile() {
        build(1234).expect("filters build");
    }
}
