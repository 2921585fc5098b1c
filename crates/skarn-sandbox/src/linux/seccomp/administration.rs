//! Deny-list family: system administration (kernels and modules, reboot,
//! swap, accounting, quotas, the kernel log, clocks, raw I/O ports).

use super::SyscallRule;
use super::entries::deny;

pub(super) const RULES: &[SyscallRule] = &[
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
];
