//! The kernel mechanisms a plan asks for: namespaces, Landlock, seccomp,
//! resource limits. Data only.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which namespaces to create.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespaces {
    /// User namespace (needed by non-root callers).
    pub user: bool,
    /// Mount namespace (new root built from grants).
    pub mount: bool,
    /// PID namespace (fresh /proc, tree killed as a whole).
    pub pid: bool,
    /// Network namespace.
    pub net: bool,
    /// IPC namespace.
    pub ipc: bool,
    /// UTS namespace.
    pub uts: bool,
}

impl Namespaces {
    /// The helper unshares at least one namespace itself (all but the
    /// mount namespace, which init creates): only then can that fail at
    /// run time and the plan's namespace fallback apply.
    pub fn helper_unshares_any(&self) -> bool {
        self.user || self.pid || self.net || self.ipc || self.uts
    }
}

/// One Landlock rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockRule {
    /// Path (inside the sandbox's view, which equals the host path).
    pub path: PathBuf,
    /// Access class.
    pub access: LandlockAccess,
}

/// Landlock access classes used by the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockAccess {
    /// Read files and list directories.
    Read,
    /// Read and execute.
    ReadExec,
    /// Full access.
    ReadWrite,
    /// Device node: read, write, ioctl.
    Device,
    /// procfs: read only.
    Proc,
    /// List the directory only (not its files' contents).
    ListOnly,
}

/// Landlock part of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockPlan {
    /// Allow-list rules.
    pub rules: Vec<LandlockRule>,
    /// Paths that must not be reachable through any rule: when a rule's
    /// path contains one of them and no mount hides it, the target grants
    /// the rule's other children instead.
    pub secrets: Vec<PathBuf>,
    /// Handle (deny) TCP bind.
    pub deny_tcp_bind: bool,
    /// Handle (deny) TCP connect.
    pub deny_tcp_connect: bool,
    /// ABI 6 signal scope.
    pub scope_signal: bool,
    /// ABI 6 abstract unix socket scope.
    pub scope_abstract_unix: bool,
}

/// seccomp part of the plan (the base deny-list is always included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompPlan {
    /// Also deny creating AF_INET/AF_INET6/AF_PACKET sockets (DenyAll
    /// without a network namespace).
    pub deny_inet_sockets: bool,
    /// Also deny listen(2) (AllowOutbound: no inbound connections).
    pub deny_listen: bool,
    /// Also deny the TIOCSWINSZ ioctl when the target inherits a host
    /// terminal (checked by the target just before it installs the filter:
    /// the command cannot resize the host's terminal).
    #[serde(default)]
    pub deny_tiocswinsz_on_host_tty: bool,
}

/// Which resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rlimit {
    /// RLIMIT_DATA.
    Data,
    /// RLIMIT_AS (memory limit without a memory cgroup).
    As,
    /// RLIMIT_NPROC.
    Nproc,
    /// RLIMIT_FSIZE.
    Fsize,
    /// RLIMIT_CORE.
    Core,
}
