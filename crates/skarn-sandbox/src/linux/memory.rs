//! How `--memory` is enforced.
//!
//! `RLIMIT_DATA` alone misses mappings the kernel does not count as data
//! (a `MAP_GROWSDOWN` mapping is counted as stack, shared mappings as
//! shared), so the limit is enforced by something that counts every page:
//! - **memory cgroup** (root, where a memory controller is writable: the
//!   v1 `memory` hierarchy or a v2 cgroup with `memory` delegated): the
//!   run's cgroup gets the limit for RAM and RAM+swap, over the whole
//!   process tree; a process that touches more is killed by the kernel's
//!   OOM killer inside the cgroup;
//! - otherwise **`RLIMIT_AS`** per process, the limit plus a margin
//!   ([`address_space_limit`]) so runtimes that reserve address space
//!   (V8, the JVM) still start.
//!
//! `RLIMIT_DATA` stays in both cases (allocations fail cleanly with ENOMEM
//! before the OOM killer is needed).

use std::path::Path;

/// `LimitReport.mechanism` with a memory cgroup.
pub(crate) const MECH_CGROUP: &str =
    "memory cgroup (every page of the whole tree; OOM kill over it) + RLIMIT_DATA per process";

/// Note when no memory cgroup is available.
pub(crate) const NOTE_NO_CGROUP: &str = "memory: no writable memory cgroup (unprivileged, or no memory \
     controller): limited per process by RLIMIT_AS (address space, with a margin) and \
     RLIMIT_DATA, not across the process tree";

/// Extra address space allowed on top of the memory limit: as much again,
/// at least 256 MiB (`node -e 1` reserves well under 1 GiB).
pub fn address_space_limit(bytes: u64) -> u64 {
    bytes.saturating_add(bytes.max(256 * 1024 * 1024))
}

/// `LimitReport.mechanism` without a memory cgroup.
pub(crate) fn mech_rlimit_as(bytes: u64) -> String {
    format!(
        "RLIMIT_AS {} MiB per process (address space: limit + margin) + RLIMIT_DATA per \
         process; no memory cgroup",
        address_space_limit(bytes) / (1024 * 1024)
    )
}

/// The files to write in a new child of `parent` to cap it at `bytes`, in
/// order (v1: RAM first, then RAM+swap, which must not be below it; v2:
/// RAM, and no swap). Files marked optional may be missing (no swap
/// accounting).
pub(crate) fn limit_files(parent: &Path, bytes: u64) -> Vec<(&'static str, String, bool)> {
    let b = bytes.to_string();
    if parent.join("memory.limit_in_bytes").exists() {
        // v1 charges socket buffers to a cgroup only once its TCP limit is
        // set (a separate counter, not part of `limit_in_bytes`): without
        // it a command could queue gigabytes in TCP sockets to itself.
        vec![
            ("memory.limit_in_bytes", b.clone(), false),
            ("memory.memsw.limit_in_bytes", b.clone(), true),
            ("memory.kmem.tcp.limit_in_bytes", b, true),
        ]
    } else {
        vec![
            ("memory.max", b, false),
            ("memory.swap.max", "0".into(), true),
        ]
    }
}
