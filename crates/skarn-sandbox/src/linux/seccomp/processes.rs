//! Deny-list family: reaching into other processes (their memory, their
//! descriptors, their kernel objects).

use super::SyscallRule;
use super::entries::deny;

pub(super) const RULES: &[SyscallRule] = &[
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
];
