//! The worker confines itself, in this order, before it reads any job:
//!
//! 1. close every descriptor above 2 (only the pipes remain);
//! 2. an empty network namespace: as root `unshare(CLONE_NEWNET)` and then
//!    a switch to uid/gid 65534 with no supplementary groups; otherwise (or
//!    when `unshare` fails) `unshare(CLONE_NEWUSER | CLONE_NEWNET)`; as root
//!    of a user namespace where 65534 is not mapped, a nested user namespace
//!    after the network namespace. With [`Network::SyscallFilter`] (the
//!    one-shot `skarn exec`, ADR 0261) no network namespace: root switches
//!    to 65534 (or, where it is not mapped, enters a user namespace), any
//!    other user enters a user namespace, only to empty its bounding set;
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
//! Every step is a mechanism of the confinement kit (`skarn-confine`),
//! shared with `skarn run`; what is applied (the order, the limits, the
//! allow-list, which Landlock parts are hard requirements) is decided
//! here.
//!
//! Everything here runs while the process is single-threaded (the hidden
//! entry is dispatched before any thread exists), which `unshare` of a user
//! namespace and the per-thread credential calls require.

use std::io;

use serde::{Deserialize, Serialize};
use skarn_confine::Enforcement;
#[cfg(target_os = "linux")]
use skarn_confine::landlock::{self as ll, Access, AccessNet, Need, PINNED_ABI, Scope};
#[cfg(target_os = "linux")]
use skarn_confine::namespaces::{self, NetEntry, SelfMap, UnshareFlags};
#[cfg(target_os = "linux")]
use skarn_confine::rlimits::{self, Limit};
#[cfg(target_os = "linux")]
use skarn_confine::{Layer, caps, fds, process, seccomp};

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
/// quarter (fragmentation grows with the heap), the tool answers in hand
/// outside the heap (the held answers' budget, one `reply_cap` of an
/// eighth of the heap, counted four times: the line read, its decoded
/// value, the JSON text handed to the engine and the reader's buffer;
/// atk25c F6), twice the stack, and the fixed margin.
pub fn address_space_limit(baseline: u64, memory_bytes: u64, stack_bytes: u64) -> u64 {
    baseline
        .saturating_add(memory_bytes)
        .saturating_add(memory_bytes / 4)
        .saturating_add(memory_bytes / 2)
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
    /// "user+net" or "net" (root, with a switch to uid 65534); with
    /// [`Network::SyscallFilter`] "user" or "none" (root, switched to 65534).
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
    /// Each layer as applied, in the confinement kit's vocabulary (the
    /// one the sandbox's report uses too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Enforcement>,
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
    /// Which layers keep the process off the network.
    pub network: Network,
}

/// What keeps a confined process off the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// An empty network namespace, under the seccomp allow-list and
    /// Landlock's TCP rules and scopes (the worker: it is made once per
    /// pooled process, off the request path).
    EmptyNamespace,
    /// No network namespace (ADR 0261): the seccomp allow-list refuses
    /// every call that makes a descriptor (`socket`, `socketpair`, `accept`,
    /// `open*`, `io_uring_setup`, `pidfd_getfd`, `recvmsg`, ...), so the
    /// process has no way to a socket, in any namespace; Landlock's TCP
    /// rules and scopes stay as a second layer. Never combined with
    /// `skip_seccomp` (refused in [`confine`]). Used by the one-shot
    /// `skarn exec`, where an empty network namespace cost most of the
    /// confinement's start-up.
    SyscallFilter,
}

#[cfg(target_os = "linux")]
/// Apply every step. On success the process can only use its pipes.
pub fn confine(opts: &ConfineOptions) -> Result<ConfinementReport, ConfineError> {
    // First thing in main: no Rust object owns a descriptor above 2 yet.
    fds::close_above_stderr(None);
    // Read what we need from /proc while we still can.
    let baseline_vm = read_vm_size().unwrap_or(64 << 20);
    let mut layers = vec![Enforcement::full(
        Layer::Descriptors,
        "every descriptor above 2 closed",
    )];

    if opts.network == Network::SyscallFilter && opts.skip_seccomp {
        // Without its namespace the network is closed by seccomp alone.
        return Err(other(
            "network",
            "no network namespace requires the seccomp allow-list",
        ));
    }
    let (namespaces, uid, bounding_dropped) = match opts.network {
        Network::EmptyNamespace => enter_namespaces()?,
        Network::SyscallFilter => drop_identity()?,
    };
    layers.push(Enforcement::full(
        Layer::Namespaces,
        match opts.network {
            Network::EmptyNamespace => format!("{namespaces}: empty network namespace, uid {uid}"),
            Network::SyscallFilter => format!(
                "{namespaces}: no network namespace (the seccomp allow-list makes no socket), \
                 uid {uid}"
            ),
        },
    ));
    if !bounding_dropped {
        drop_bounding_and_ambient()?;
    }
    // After the user-namespace path we hold every capability inside the new
    // namespace; after the root path the uid switch already cleared them.
    step("capset", caps::clear_sets())?;
    layers.push(Enforcement::full(
        Layer::Capabilities,
        "bounding, ambient, effective, permitted and inheritable sets empty",
    ));

    let as_limit = address_space_limit(baseline_vm, opts.memory_bytes, opts.stack_bytes);
    set_limit(Limit::As, as_limit)?;
    set_limit(Limit::Nofile, NOFILE_LIMIT)?;
    set_limit(Limit::Fsize, 0)?;
    // With RLIMIT_FSIZE 0 a write to an inherited regular file (a debug
    // stderr redirected to a log) must fail with EFBIG, not kill us.
    // SAFETY: installing SIG_IGN for SIGXFSZ; no handler code runs.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    set_limit(Limit::Core, 0)?;
    set_limit(Limit::Memlock, 0)?;
    set_limit(Limit::Msgqueue, 0)?;
    // RLIMIT_NPROC is not set: it also counts threads and the engine needs
    // some; the seccomp `clone` rule is what forbids new processes.
    limit_malloc_arenas();
    layers.push(Enforcement::full(
        Layer::Rlimits,
        format!(
            "address space {} MiB, {NOFILE_LIMIT} descriptors, no file writes, no core \
             dumps, no locked memory, no message queues",
            as_limit >> 20
        ),
    ));

    step("no_new_privs", process::set_no_new_privs())?;
    layers.push(Enforcement::full(Layer::NoNewPrivs, "set"));
    let landlock = apply_landlock()?;
    let landlock_state = match landlock.status {
        skarn_confine::Status::FullyEnforced => "fully_enforced",
        _ => "partially_enforced",
    };
    layers.push(landlock.enforcement());

    step(
        "PR_SET_PDEATHSIG",
        process::set_parent_death_signal(process::Signal::KILL),
    )?;
    if let Some(ppid) = opts.parent_pid
        && !process::parent_is(ppid)
    {
        return Err(other("parent check", "the parent process is gone"));
    }
    layers.push(Enforcement::full(Layer::ParentDeath, "SIGKILL"));

    let pid = std::process::id();
    let programs = seccomp_policy::build(pid).map_err(|e| other("seccomp", e))?;
    let skip_seccomp = opts.skip_seccomp && cfg!(debug_assertions);
    if skip_seccomp {
        layers.push(Enforcement::not_enforced(
            Layer::Seccomp,
            "left out for a self-test (debug build)",
        ));
    } else {
        seccomp::install(&programs).map_err(|e| other("seccomp", e))?;
        layers.push(Enforcement::full(
            Layer::Seccomp,
            format!(
                "allow-list of {} syscalls, everything else EPERM",
                seccomp_policy::allowed().count()
            ),
        ));
    }
    Ok(ConfinementReport {
        namespaces,
        uid,
        landlock_abi: i32::try_from(landlock.kernel_abi).unwrap_or(0),
        landlock: landlock_state.to_string(),
        seccomp_allowed: if skip_seccomp {
            0
        } else {
            seccomp_policy::allowed().count()
        },
        address_space_limit: as_limit,
        nofile_limit: NOFILE_LIMIT,
        layers,
    })
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
    // The kit's one way into an empty network namespace: directly as root
    // (with CAP_SYS_ADMIN), otherwise through a new user namespace, left
    // unmapped (the worker runs as the overflow uid there).
    let entry = step(
        "unshare(CLONE_NEWUSER|CLONE_NEWNET)",
        namespaces::enter_empty_network(SelfMap::Leave),
    )?;
    match entry {
        NetEntry::Direct => {
            // Root: become nobody, which strips every capability.
            drop_bounding_and_ambient()?;
            if namespaces::become_ids(NOBODY, NOBODY).is_ok() {
                return Ok(("net".into(), NOBODY, true));
            }
            // uid 0 of an unprivileged user namespace (rootless containers,
            // CI sandboxes): 65534 is not mapped there. The network
            // namespace is already empty; a nested user namespace leaves
            // this process no capability over anything outside it.
            step(
                "unshare(CLONE_NEWUSER) after CLONE_NEWNET",
                namespaces::unshare(UnshareFlags::NEWUSER),
            )?;
            Ok(("net+user".into(), rustix::process::getuid().as_raw(), true))
        }
        NetEntry::ViaUserNamespace => {
            Ok(("user+net".into(), rustix::process::getuid().as_raw(), false))
        }
    }
}

#[cfg(target_os = "linux")]
/// [`Network::SyscallFilter`]: the identity part of [`enter_namespaces`]
/// without the network namespace. Root becomes nobody; root of a user
/// namespace where 65534 is not mapped, and every other user, enter a new
/// user namespace (cheap, unlike a network namespace) so that the
/// bounding set can be emptied. Same return value as [`enter_namespaces`].
fn drop_identity() -> Result<(String, u32, bool), ConfineError> {
    if rustix::process::geteuid().is_root() {
        drop_bounding_and_ambient()?;
        if namespaces::become_ids(NOBODY, NOBODY).is_ok() {
            return Ok(("none".into(), NOBODY, true));
        }
        step(
            "unshare(CLONE_NEWUSER)",
            namespaces::unshare(UnshareFlags::NEWUSER),
        )?;
        return Ok(("user".into(), rustix::process::getuid().as_raw(), true));
    }
    step(
        "unshare(CLONE_NEWUSER)",
        namespaces::unshare(UnshareFlags::NEWUSER),
    )?;
    Ok(("user".into(), rustix::process::getuid().as_raw(), false))
}

#[cfg(target_os = "linux")]
fn drop_bounding_and_ambient() -> Result<(), ConfineError> {
    // The worker holds CAP_SETPCAP here (root, or root of its new user
    // namespace): a bounding set left as is would be a bug.
    match step("PR_CAPBSET_DROP", caps::drop_bounding_set())? {
        caps::Bounding::Cleared => {}
        caps::Bounding::LeftAsIs => {
            return Err(ConfineError {
                step: "PR_CAPBSET_DROP",
                source: io::Error::from_raw_os_error(libc::EPERM),
            });
        }
    }
    step("PR_CAP_AMBIENT_CLEAR_ALL", caps::clear_ambient())
}

#[cfg(target_os = "linux")]
fn set_limit(limit: Limit, value: u64) -> Result<(), ConfineError> {
    step(limit.name(), rlimits::set(limit, value))
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
/// Filesystem rights of ABI 1 are the floor (without them we refuse to
/// run); newer rights, TCP and the scopes are taken where the kernel has
/// them. No rule at all: nothing is reachable.
fn apply_landlock() -> Result<ll::Outcome, ConfineError> {
    let outcome = ll::restrict_self(&ll::Request {
        fs_floor: Need::Required,
        fs_newer: Need::BestEffort,
        net: Some((AccessNet::from_all(PINNED_ABI), Need::BestEffort)),
        scopes: Some((Scope::from_all(PINNED_ABI), Need::BestEffort)),
        rules: Vec::new(),
    })
    .map_err(|e| other("landlock", e))?;
    if outcome.status == skarn_confine::Status::NotEnforced {
        return Err(other("landlock", "not enforced by this kernel"));
    }
    Ok(outcome)
}

#[cfg(target_os = "linux")]
/// The ABI version the running kernel reports (0 when Landlock is off).
pub fn kernel_landlock_abi() -> i32 {
    i32::try_from(ll::kernel_abi()).unwrap_or(0)
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
