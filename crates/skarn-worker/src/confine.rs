//! The worker confines itself, in this order, before it reads any job:
//!
//! 1. close every descriptor above 2 (only the pipes remain);
//! 2. an empty network namespace: as root `unshare(CLONE_NEWNET)` and then
//!    a switch to uid/gid 65534 with no supplementary groups; otherwise (or
//!    when `unshare` fails) `unshare(CLONE_NEWUSER | CLONE_NEWNET)`; as root
//!    of a user namespace where 65534 is not mapped, a nested user namespace
//!    after the network namespace;
//! 3. every capability dropped: bounding set, ambient set, then
//!    effective/permitted/inheritable;
//! 4. resource limits: address space a little above the QuickJS memory
//!    limit, a handful of descriptors, no file writes, no core dumps;
//! 5. `no_new_privs`;
//! 6. a Landlock ruleset that handles every filesystem and network right
//!    and both ABI 6 scopes (abstract unix sockets, signals) with no rule
//!    at all: nothing is readable, writable or executable, no TCP bind or
//!    connect, no signal to a process outside the worker;
//! 7. death with the parent (`PR_SET_PDEATHSIG`), then a check that the
//!    parent is still the one that started us;
//! 8. the seccomp allow-list of [`crate::seccomp_policy`], last, because
//!    every step above needs syscalls it refuses.
//!
//! Everything here runs while the process is single-threaded (the hidden
//! entry is dispatched before any thread exists), which `unshare` of a user
//! namespace and the per-thread credential calls require.

use std::io;

#[cfg(target_os = "linux")]
use rustix::process::{Resource, Rlimit};
use serde::{Deserialize, Serialize};

#[cfg(target_os = "linux")]
use crate::seccomp_policy;

/// Fixed room above the QuickJS heap limit for the binary's own mappings
/// beyond its start-up size, the reply thread's stack, the engine thread's
/// stack slack (4 MiB), allocator slack and the JSON buffers of the result.
/// Measured in docs/worker.md ("Address-space margin"): a 64 MiB heap
/// filled to its limit peaks about 17 MiB above start-up size + heap.
pub const AS_FIXED_MARGIN_BYTES: u64 = 48 << 20;

/// RLIMIT_AS for a worker whose address space was `baseline` bytes at
/// start-up and that must honour these QuickJS limits: the heap plus a
/// quarter (fragmentation grows with the heap), twice the stack, and the
/// fixed margin.
pub fn address_space_limit(baseline: u64, memory_bytes: u64, stack_bytes: u64) -> u64 {
    baseline
        .saturating_add(memory_bytes)
        .saturating_add(memory_bytes / 4)
        .saturating_add(stack_bytes.saturating_mul(2))
        .saturating_add(AS_FIXED_MARGIN_BYTES)
}
/// Descriptor limit: stdin, stdout, stderr and one spare.
pub const NOFILE_LIMIT: u64 = 4;
/// The unprivileged identity a root-started worker switches to.
pub const NOBODY: u32 = 65534;

/// What the worker applied to itself; sent to the parent in its `ready`
/// message and shown by `skarn doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfinementReport {
    /// "user+net" or "net" (root, with a switch to uid 65534).
    pub namespaces: String,
    /// The uid the worker runs as, seen from its own user namespace.
    pub uid: u32,
    /// Landlock ABI version the kernel offers.
    pub landlock_abi: i32,
    /// "fully_enforced" or "partially_enforced" (kernel older than ABI 6).
    pub landlock: String,
    /// Number of syscalls on the seccomp allow-list.
    pub seccomp_allowed: usize,
    /// RLIMIT_AS in bytes.
    pub address_space_limit: u64,
    /// RLIMIT_NOFILE.
    pub nofile_limit: u64,
}

/// One confinement step failed; the worker refuses to run anything.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct ConfineError {
    pub step: &'static str,
    #[source]
    pub source: io::Error,
}

#[cfg(target_os = "linux")]
fn step<T>(step: &'static str, r: Result<T, impl Into<io::Error>>) -> Result<T, ConfineError> {
    r.map_err(|e| ConfineError {
        step,
        source: e.into(),
    })
}

#[cfg(target_os = "linux")]
fn other(step: &'static str, msg: impl std::fmt::Display) -> ConfineError {
    ConfineError {
        step,
        source: io::Error::other(msg.to_string()),
    }
}

/// Options from the parent (passed on the command line).
#[derive(Debug, Clone, Copy)]
pub struct ConfineOptions {
    /// QuickJS heap limit the worker must be able to honour.
    pub memory_bytes: u64,
    /// Native stack limit the worker must be able to honour.
    pub stack_bytes: u64,
    /// The pid of the process that started us; we exit if it is gone.
    pub parent_pid: Option<u32>,
    /// Debug builds only: leave seccomp out so the tests can check that the
    /// other layers hold on their own. Such a worker runs only the
    /// self-test, never a script (enforced in [`crate::worker`]).
    pub skip_seccomp: bool,
}

#[cfg(target_os = "linux")]
/// Apply every step. On success the process can only use its pipes.
pub fn confine(opts: &ConfineOptions) -> Result<ConfinementReport, ConfineError> {
    close_other_fds();
    // Read what we need from /proc while we still can.
    let baseline_vm = read_vm_size().unwrap_or(64 << 20);

    let (namespaces, uid, bounding_dropped) = enter_namespaces()?;
    if !bounding_dropped {
        drop_bounding_and_ambient()?;
    }
    drop_capabilities()?;

    let as_limit = address_space_limit(baseline_vm, opts.memory_bytes, opts.stack_bytes);
    set_limit(Resource::As, as_limit)?;
    set_limit(Resource::Nofile, NOFILE_LIMIT)?;
    set_limit(Resource::Fsize, 0)?;
    // With RLIMIT_FSIZE 0 a write to an inherited regular file (a debug
    // stderr redirected to a log) must fail with EFBIG, not kill us.
    // SAFETY: installing SIG_IGN for SIGXFSZ; no handler code runs.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    set_limit(Resource::Core, 0)?;
    set_limit(Resource::Memlock, 0)?;
    set_limit(Resource::Msgqueue, 0)?;
    // RLIMIT_NPROC is not set: it also counts threads and the engine needs
    // some; the seccomp `clone` rule is what forbids new processes.
    limit_malloc_arenas();

    step("no_new_privs", rustix::thread::set_no_new_privs(true))?;
    let (landlock_abi, landlock) = apply_landlock()?;

    step(
        "PR_SET_PDEATHSIG",
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL)),
    )?;
    if let Some(ppid) = opts.parent_pid {
        let now = rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32);
        if now != Some(ppid) {
            return Err(other("parent check", "the parent process is gone"));
        }
    }

    let pid = rustix::process::getpid().as_raw_nonzero().get() as u32;
    let programs = seccomp_policy::build(pid).map_err(|e| other("seccomp", e))?;
    if !(opts.skip_seccomp && cfg!(debug_assertions)) {
        for p in &programs {
            seccompiler::apply_filter(p).map_err(|e| other("seccomp", e))?;
        }
    }
    Ok(ConfinementReport {
        namespaces,
        uid,
        landlock_abi,
        landlock,
        seccomp_allowed: if opts.skip_seccomp && cfg!(debug_assertions) {
            0
        } else {
            seccomp_policy::allowed().count()
        },
        address_space_limit: as_limit,
        nofile_limit: NOFILE_LIMIT,
    })
}

#[cfg(target_os = "linux")]
fn close_other_fds() {
    // SAFETY: close_range only closes descriptors; none above 2 is owned by
    // live Rust objects at this point (we run first thing in main).
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r != 0 {
        for fd in 3..1024 {
            // SAFETY: as above; EBADF for unused numbers is harmless.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(target_os = "linux")]
fn read_vm_size() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(target_os = "linux")]
/// Returns the namespaces entered, the uid now in effect, and whether the
/// bounding and ambient sets were already dropped.
fn enter_namespaces() -> Result<(String, u32, bool), ConfineError> {
    use rustix::thread::UnshareFlags;
    let euid = rustix::process::geteuid();
    if euid.is_root() {
        // Root (with CAP_SYS_ADMIN) can have an empty network namespace
        // directly and then become nobody, which strips every capability.
        // SAFETY: single-threaded; no file descriptor table or fs state is
        // shared with anyone, so unsharing the network namespace only
        // changes what future sockets see.
        if unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) }.is_ok() {
            drop_bounding_and_ambient()?;
            if become_nobody().is_ok() {
                return Ok(("net".into(), NOBODY, true));
            }
            // uid 0 of an unprivileged user namespace (rootless containers,
            // CI sandboxes): 65534 is not mapped there. The network
            // namespace is already empty; a nested user namespace leaves
            // this process no capability over anything outside it.
            // SAFETY: single-threaded (required by the kernel for
            // CLONE_NEWUSER); the namespace affects only this process.
            step("unshare(CLONE_NEWUSER) after CLONE_NEWNET", unsafe {
                rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER)
            })?;
            return Ok(("net+user".into(), rustix::process::getuid().as_raw(), true));
        }
    }
    // SAFETY: single-threaded (required by the kernel for CLONE_NEWUSER);
    // the new namespaces affect only this process.
    step("unshare(CLONE_NEWUSER|CLONE_NEWNET)", unsafe {
        rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNET)
    })?;
    Ok(("user+net".into(), rustix::process::getuid().as_raw(), false))
}

#[cfg(target_os = "linux")]
/// Drop every group and become uid/gid 65534 (fails where 65534 is not
/// mapped, e.g. as root of an unprivileged user namespace).
fn become_nobody() -> Result<(), ConfineError> {
    let nobody_gid = rustix::process::Gid::from_raw(NOBODY);
    let nobody_uid = rustix::process::Uid::from_raw(NOBODY);
    step("setgroups", rustix::thread::set_thread_groups(&[]))?;
    step(
        "setresgid",
        rustix::thread::set_thread_res_gid(nobody_gid, nobody_gid, nobody_gid),
    )?;
    step(
        "setresuid",
        rustix::thread::set_thread_res_uid(nobody_uid, nobody_uid, nobody_uid),
    )
}

#[cfg(target_os = "linux")]
fn drop_bounding_and_ambient() -> Result<(), ConfineError> {
    // Hand-rolled loop over raw numbers: rustix's typed `Capability` enum
    // cannot name capabilities newer than the crate, and the kernel's last
    // capability number is only known at run time (EINVAL past it).
    for cap in 0..64 {
        // SAFETY: PR_CAPBSET_DROP takes an integer argument and touches no memory.
        let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(ConfineError {
                step: "PR_CAPBSET_DROP",
                source: e,
            });
        }
    }
    step(
        "PR_CAP_AMBIENT_CLEAR_ALL",
        rustix::thread::clear_ambient_capability_set(),
    )
}

#[cfg(target_os = "linux")]
fn drop_capabilities() -> Result<(), ConfineError> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    // After the user-namespace path we hold every capability inside the new
    // namespace; after the root path the uid switch already cleared them.
    step(
        "capset",
        rustix::thread::set_capabilities(
            None,
            CapabilitySets {
                effective: CapabilitySet::empty(),
                permitted: CapabilitySet::empty(),
                inheritable: CapabilitySet::empty(),
            },
        ),
    )
}

#[cfg(target_os = "linux")]
fn set_limit(resource: Resource, value: u64) -> Result<(), ConfineError> {
    let name = match resource {
        Resource::As => "RLIMIT_AS",
        Resource::Nofile => "RLIMIT_NOFILE",
        Resource::Fsize => "RLIMIT_FSIZE",
        Resource::Core => "RLIMIT_CORE",
        Resource::Memlock => "RLIMIT_MEMLOCK",
        Resource::Msgqueue => "RLIMIT_MSGQUEUE",
        _ => "setrlimit",
    };
    step(
        name,
        rustix::process::setrlimit(
            resource,
            Rlimit {
                current: Some(value),
                maximum: Some(value),
            },
        ),
    )
}

#[cfg(target_os = "linux")]
/// One malloc arena: glibc otherwise reserves 64 MiB of address space per
/// thread arena, which RLIMIT_AS would count against the script.
fn limit_malloc_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only adjusts allocator tuning; called single-threaded.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(target_os = "linux")]
fn apply_landlock() -> Result<(i32, String), ConfineError> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RulesetAttr, RulesetStatus,
        Scope,
    };
    let abi = ABI::V6;
    let fail = |e: landlock::RulesetError| other("landlock", e);
    let status = landlock::Ruleset::default()
        // Filesystem rights are the floor: without them we refuse to run.
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .map_err(fail)?
        // Newer rights are taken where the kernel has them.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(fail)?
        .scope(Scope::from_all(abi))
        .map_err(fail)?
        .create()
        .map_err(fail)?
        .restrict_self()
        .map_err(fail)?;
    let state = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully_enforced",
        RulesetStatus::PartiallyEnforced => "partially_enforced",
        RulesetStatus::NotEnforced => return Err(other("landlock", "not enforced by this kernel")),
    };
    Ok((kernel_landlock_abi(), state.to_string()))
}

#[cfg(target_os = "linux")]
/// The ABI version the running kernel reports (0 when Landlock is off).
pub fn kernel_landlock_abi() -> i32 {
    // SAFETY: with a null attribute, size 0 and LANDLOCK_CREATE_RULESET_VERSION
    // the syscall only returns the ABI version; no memory is read.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, /* LANDLOCK_CREATE_RULESET_VERSION */
        )
    };
    if r < 0 { 0 } else { r as i32 }
}

/// No worker confinement exists for this OS in this build, so the worker
/// refuses to run anything (the parent never picks it: see
/// [`crate::isolation::probe`]).
#[cfg(not(target_os = "linux"))]
pub fn confine(_opts: &ConfineOptions) -> Result<ConfinementReport, ConfineError> {
    Err(ConfineError {
        step: "confine",
        source: io::Error::new(
            io::ErrorKind::Unsupported,
            "no worker confinement for this OS in this build",
        ),
    })
}

/// Landlock is Linux's: 0 elsewhere.
#[cfg(not(target_os = "linux"))]
pub fn kernel_landlock_abi() -> i32 {
    0
}
