//! Deny-list family: kernel attack surface (eBPF, perf counters,
//! userfaultfd, io_uring, keyrings, host-wide watches, page migration).

use super::SyscallRule;
use super::entries::{deny, nosys};

pub(super) const RULES: &[SyscallRule] = &[
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
];
