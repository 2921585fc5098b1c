//! [`Plan`]: the fully resolved list of steps the helper performs, computed
//! from a [`Policy`] and [`HostFacts`] by the pure function [`plan`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::policy::{
    Grant, NetPolicy, PERSISTENCE_PATHS, PROTECT_IF_PRESENT_PATHS, Policy, SHELL_RC_PATHS,
    SYSTEM_EXEC_DIRS, default_secret_paths,
};
use crate::report::{Backend, GrantReport, LimitReport, RestrictionReport, Status};

/// Access given to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read files, list directories.
    Read,
    /// Read and execute.
    ReadExec,
    /// Everything (read, write, create, remove, execute).
    ReadWrite,
}

impl Access {
    fn label(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::ReadExec => "read+exec",
            Access::ReadWrite => "read-write",
        }
    }
}

/// One filesystem step of the new root, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum FsOp {
    /// Bind the host path at the same place; read-only unless `ReadWrite`.
    Bind {
        /// Host path.
        path: PathBuf,
        /// Access.
        access: Access,
    },
    /// Fresh procfs for the new PID namespace at /proc.
    Proc,
    /// Minimal /dev: null zero full random urandom tty, private pts and shm.
    Dev,
    /// Private tmpfs at /tmp (TMPDIR points at it).
    Tmp,
    /// Hide a secret under a granted path (empty read-only file or directory).
    Mask {
        /// Host path.
        path: PathBuf,
    },
    /// Keep a workspace persistence path read-only; when missing and
    /// `reserve` is set, an empty read-only placeholder keeps it from being
    /// created during the run.
    Protect {
        /// Host path.
        path: PathBuf,
        /// Reserve the name when it does not exist.
        reserve: bool,
    },
}

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
    /// path contains one of them and no mount hides it, the helper grants
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

/// How the report is printed after the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// Not printed.
    #[default]
    None,
    /// Human-readable text on stderr.
    Text,
    /// One JSON line on stderr.
    Json,
}

/// Everything the helper needs, serialisable (passed as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Target argv (argv\[0\] is looked up in PATH when it has no slash).
    pub argv: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Workspace.
    pub workspace: PathBuf,
    /// Caller uid/gid (for the user namespace maps).
    pub uid: u32,
    /// Caller gid.
    pub gid: u32,
    /// Namespaces to create.
    pub ns: Namespaces,
    /// Bring `lo` up in the new network namespace.
    pub loopback_up: bool,
    /// New-root steps (only with a mount namespace).
    pub fs: Vec<FsOp>,
    /// Landlock (None when the kernel has none).
    pub landlock: Option<LandlockPlan>,
    /// seccomp (None when unavailable).
    pub seccomp: Option<SeccompPlan>,
    /// Resource limits applied with setrlimit.
    pub rlimits: Vec<(Rlimit, u64)>,
    /// pids cgroup parent dir and pids.max (root only).
    pub cgroup: Option<(PathBuf, u64)>,
    /// Memory cgroup parent dir and the limit in bytes (root only; else
    /// the limit is an `Rlimit::As`).
    #[serde(default)]
    pub memory_cgroup: Option<(PathBuf, u64)>,
    /// Wall-clock limit in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Variables set for the command (TMPDIR, ...).
    pub set_env: Vec<(String, String)>,
    /// Without a mount namespace: make a private TMPDIR on the host.
    pub host_private_tmp: bool,
    /// Kill the helper when its parent dies.
    pub die_with_parent: bool,
    /// Refuse to run if a mechanism fails at run time and nothing remains.
    pub fail_closed: bool,
    /// Report as planned; the helper adds run-time notes.
    pub report: RestrictionReport,
    /// How to print the report.
    pub report_format: ReportFormat,
    /// The policy this plan came from (the helper re-plans with it when a
    /// mechanism turns out to be unavailable at run time).
    pub policy: Policy,
    /// The host facts used.
    pub host: HostFacts,
}

/// Planning failed: the policy cannot be enforced and `fail_closed` is set,
/// or the policy is malformed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// fail_closed and nothing can be enforced.
    #[error("refusing to run: {0} (fail_closed is set; use --no-sandbox to run unconfined)")]
    CannotEnforce(String),
    /// A path is not absolute.
    #[error("path must be absolute: {0}")]
    RelativePath(PathBuf),
    /// No command.
    #[error("no command given")]
    NoCommand,
}

fn is_under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// Turn a policy into a plan for this host. Pure: looks at nothing but its
/// arguments (existence of paths is handled by the helper at run time).
pub fn plan(policy: &Policy, host: &HostFacts, argv: &[OsString]) -> Result<Plan, PlanError> {
    if argv.is_empty() {
        return Err(PlanError::NoCommand);
    }
    let ws = policy.workspace.clone();
    let all = std::iter::once(&ws)
        .chain(policy.read.iter().map(|g| &g.path))
        .chain(policy.write.iter().map(|g| &g.path))
        .chain(policy.exec.iter().map(|g| &g.path))
        .chain(policy.deny_read.iter().map(|g| &g.path))
        .chain(policy.cwd.iter());
    for p in all {
        if !p.is_absolute() {
            return Err(PlanError::RelativePath(p.clone()));
        }
    }

    let mut report = RestrictionReport {
        backend: Backend::Linux,
        status: Status::FullyEnforced,
        notes: Vec::new(),
        net: format!(
            "{} ({})",
            policy.net.as_str(),
            policy
                .sources
                .get("net")
                .map(String::as_str)
                .unwrap_or("default")
        ),
        grants: Vec::new(),
        limits: Vec::new(),
        removed_env: Vec::new(),
        landlock_abi: host.landlock_abi,
    };

    let abi = host.landlock_abi;
    let nsok = host.namespaces;
    if !nsok && abi == 0 {
        let why = "this host offers neither namespaces nor Landlock".to_string();
        if policy.fail_closed {
            return Err(PlanError::CannotEnforce(why));
        }
        report.status = Status::NotEnforced;
        report
            .notes
            .push(format!("{why}: only seccomp and limits apply"));
    }

    // ---- grants (ordered: system, policy, workspace) ----
    let mut binds: Vec<(PathBuf, Access, String)> = Vec::new();
    for d in SYSTEM_EXEC_DIRS {
        binds.push((
            PathBuf::from(d),
            Access::ReadExec,
            "default (system)".into(),
        ));
    }
    let push = |binds: &mut Vec<(PathBuf, Access, String)>, g: &Grant, a: Access| {
        binds.push((g.path.clone(), a, g.source.clone()));
    };
    for g in &policy.read {
        push(&mut binds, g, Access::Read);
    }
    for g in &policy.exec {
        push(&mut binds, g, Access::ReadExec);
    }
    for g in &policy.write {
        push(&mut binds, g, Access::ReadWrite);
    }
    binds.push((ws.clone(), Access::ReadWrite, "workspace".into()));

    // ---- secrets ----
    let mut secrets: Vec<(PathBuf, String)> = default_secret_paths(host.home.as_deref())
        .into_iter()
        .map(|p| (p, "default (secret)".to_string()))
        .collect();
    for p in &host.secret_aliases {
        secrets.push((p.clone(), "default (secret, other name)".to_string()));
    }
    for g in &policy.deny_read {
        secrets.push((g.path.clone(), g.source.clone()));
    }
    // A grant that is itself a secret (or inside one) is dropped.
    binds.retain(|(p, _, src)| {
        let hit = secrets.iter().any(|(s, _)| is_under(p, s));
        if hit {
            report.notes.push(format!(
                "grant of {} ({src}) dropped: it is a secret path",
                p.display()
            ));
        }
        !hit
    });
    // Shallow paths first so a nested grant is mounted on top of its parent.
    binds.sort_by_key(|(p, _, _)| p.components().count());
    for (p, a, src) in &binds {
        report.grants.push(GrantReport {
            path: p.display().to_string(),
            access: a.label().to_string(),
            source: src.clone(),
        });
    }
    // Secrets that lie under a grant must be hidden.
    let masked: Vec<&(PathBuf, String)> = secrets
        .iter()
        .filter(|(s, _)| binds.iter().any(|(p, _, _)| is_under(s, p)))
        .collect();
    for (s, src) in &secrets {
        report.grants.push(GrantReport {
            path: s.display().to_string(),
            access: "deny".into(),
            source: src.clone(),
        });
    }

    if binds.iter().any(|(p, a, _)| {
        *a != Access::ReadWrite && !SYSTEM_EXEC_DIRS.iter().any(|d| Path::new(d) == p)
    }) {
        report.notes.push(
            "unix sockets that already exist inside read-only grants stay connectable \
             (Landlock ABI <= 7 cannot restrict connect(2) on pathname sockets)"
                .into(),
        );
    }

    let broad = ["/", "/tmp", "/home", "/root", "/var", "/run"]
        .iter()
        .any(|b| ws == Path::new(b))
        || host.home.as_deref() == Some(ws.as_path());
    if broad {
        report.notes.push(format!(
            "broad workspace {}: everything under it except secret paths is read-write \
             (and unix sockets under it are reachable)",
            ws.display()
        ));
    }

    // ---- namespaces ----
    let ns = if nsok {
        Namespaces {
            user: host.needs_userns,
            mount: true,
            pid: true,
            net: policy.net.wants_netns(),
            ipc: true,
            uts: true,
        }
    } else {
        Namespaces::default()
    };
    if !nsok {
        report.degrade(
            "namespaces unavailable (no user namespaces for this user): no private /tmp, /proc, \
             /dev or PID namespace; the filesystem allow-list relies on Landlock alone",
        );
    }

    // ---- filesystem steps ----
    let mut fs = Vec::new();
    if ns.mount {
        fs.push(FsOp::Proc);
        fs.push(FsOp::Dev);
        fs.push(FsOp::Tmp);
        for (p, a, _) in &binds {
            fs.push(FsOp::Bind {
                path: p.clone(),
                access: *a,
            });
        }
        for (s, _) in &masked {
            fs.push(FsOp::Mask { path: s.clone() });
        }
    }
    if policy.protect_persistence {
        if ns.mount {
            for rel in PERSISTENCE_PATHS {
                fs.push(FsOp::Protect {
                    path: ws.join(rel),
                    reserve: true,
                });
            }
            for rel in PROTECT_IF_PRESENT_PATHS {
                fs.push(FsOp::Protect {
                    path: ws.join(rel),
                    reserve: false,
                });
            }
            let ws_is_home = host.home.as_deref() == Some(ws.as_path());
            for rel in SHELL_RC_PATHS {
                fs.push(FsOp::Protect {
                    path: ws.join(rel),
                    reserve: ws_is_home,
                });
            }
            let all: Vec<&str> = PERSISTENCE_PATHS
                .iter()
                .chain(PROTECT_IF_PRESENT_PATHS)
                .chain(SHELL_RC_PATHS)
                .copied()
                .collect();
            report.grants.push(GrantReport {
                path: format!("{}/{{{}}}", ws.display(), all.join(",")),
                access: "read-only (persistence)".into(),
                source: "default (protect_persistence)".into(),
            });
        } else {
            report.degrade(
                "persistence paths (.git/hooks, .envrc, ...) are not write-protected: \
                 this needs a mount namespace",
            );
        }
    } else {
        report.notes.push(
            "persistence paths (.git/hooks, .git/config, .envrc, ...) are writable \
             (protect_persistence is off)"
                .into(),
        );
    }

    // ---- landlock ----
    let landlock = if abi > 0 {
        let mut rules = Vec::new();
        if ns.mount {
            // Only granted paths exist in the new root; listing / is harmless.
            rules.push(LandlockRule {
                path: "/".into(),
                access: LandlockAccess::ListOnly,
            });
        }
        for (p, a, _) in &binds {
            rules.push(LandlockRule {
                path: p.clone(),
                access: match a {
                    Access::Read => LandlockAccess::Read,
                    Access::ReadExec => LandlockAccess::ReadExec,
                    Access::ReadWrite => LandlockAccess::ReadWrite,
                },
            });
        }
        rules.push(LandlockRule {
            path: "/proc".into(),
            access: LandlockAccess::Proc,
        });
        rules.push(LandlockRule {
            path: "/dev".into(),
            access: LandlockAccess::ListOnly,
        });
        for d in [
            "null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts",
        ] {
            rules.push(LandlockRule {
                path: PathBuf::from("/dev").join(d),
                access: LandlockAccess::Device,
            });
        }
        if ns.mount {
            for p in ["/dev/shm", "/tmp"] {
                rules.push(LandlockRule {
                    path: p.into(),
                    access: LandlockAccess::ReadWrite,
                });
            }
        }
        let net = policy.net;
        Some(LandlockPlan {
            rules,
            secrets: if ns.mount {
                Vec::new()
            } else {
                secrets.iter().map(|(s, _)| s.clone()).collect()
            },
            deny_tcp_bind: abi >= 4
                && (net == NetPolicy::AllowOutbound || (net == NetPolicy::DenyAll && !ns.net)),
            deny_tcp_connect: abi >= 4 && net == NetPolicy::DenyAll && !ns.net,
            scope_signal: abi >= 6,
            scope_abstract_unix: abi >= 6,
        })
    } else {
        report.degrade("Landlock unavailable: no filesystem allow-list beyond the mount namespace");
        None
    };
    if abi > 0 && abi < 6 {
        report.degrade(format!(
            "Landlock ABI {abi} < 6: no signal or abstract-unix-socket scoping \
             (the PID and network namespaces still isolate them)"
        ));
    }
    if abi > 0 && abi < 5 {
        report.degrade(format!(
            "Landlock ABI {abi} < 5: device ioctls are not restricted"
        ));
    }
    if abi > 0 && abi < 3 {
        report.degrade(format!(
            "Landlock ABI {abi} < 3: truncate is not restricted"
        ));
    }

    // ---- seccomp ----
    let seccomp = if host.seccomp {
        Some(SeccompPlan {
            deny_inet_sockets: policy.net == NetPolicy::DenyAll && !ns.net,
            deny_listen: policy.net == NetPolicy::AllowOutbound,
        })
    } else {
        report.degrade(
            "seccomp unavailable: dangerous syscalls (ptrace, bpf, io_uring, ...) are not filtered",
        );
        None
    };

    // ---- network notes ----
    match policy.net {
        NetPolicy::DenyAll if ns.net => report
            .notes
            .push("net deny: empty network namespace (no interface, not even lo)".into()),
        NetPolicy::DenyAll => {
            if seccomp.is_some() {
                report.degrade(
                    "net deny without a network namespace: IPv4/IPv6/packet sockets are refused \
                     by seccomp; abstract unix sockets are scoped by Landlock only if ABI >= 6",
                );
            } else if abi >= 4 {
                report.degrade(
                    "net deny without a network namespace or seccomp: only TCP is blocked \
                     (Landlock); UDP and raw sockets are NOT blocked",
                );
            } else {
                report.degrade("net deny could not be enforced: network is OPEN");
            }
        }
        NetPolicy::AllowLoopback if ns.net => report.notes.push(
            "net loopback: private network namespace with only lo up; 127.0.0.1 is the \
             sandbox's own loopback, never the host's"
                .into(),
        ),
        NetPolicy::AllowLoopback => report.degrade(
            "net loopback without a network namespace: degrades to the host network \
             (outbound allowed)",
        ),
        NetPolicy::AllowOutbound => {
            report.notes.push(
                "net outbound: host network; TCP bind denied by Landlock, listen(2) denied by \
                 seccomp"
                    .into(),
            );
            if abi < 4 {
                report.degrade("Landlock ABI < 4: TCP binds are not denied");
            }
            report.degrade(
                "net outbound: UDP sockets can still bind ports (Landlock has no UDP rules)",
            );
        }
        NetPolicy::AllowAll => report
            .notes
            .push("net all: host network, unrestricted (abstract unix sockets outside the sandbox stay unreachable)".into()),
    }

    // ---- limits ----
    let l = &policy.limits;
    let mut rlimits = vec![(Rlimit::Core, 0)];
    let mut cgroup = None;
    let mb = |v: u64| v.saturating_mul(1024 * 1024);
    let mut limits = Vec::new();
    let mut lim = |name: &str, value: String, mech: &str| {
        limits.push(LimitReport {
            name: name.into(),
            value,
            mechanism: mech.into(),
            source: policy
                .sources
                .get(name)
                .cloned()
                .unwrap_or_else(|| "default".into()),
        });
    };
    match l.timeout_secs {
        Some(t) => lim(
            "timeout",
            format!("{t} s"),
            "helper timer, whole tree killed, exit 124",
        ),
        None => lim("timeout", "none".into(), "-"),
    }
    let mut memory_cgroup = None;
    match l.memory_mb {
        Some(m) => {
            rlimits.push((Rlimit::Data, mb(m)));
            if let Some(dir) = &host.cgroup_memory {
                memory_cgroup = Some((dir.clone(), mb(m)));
                lim("memory", format!("{m} MiB"), crate::memory::MECH_CGROUP);
            } else {
                rlimits.push((Rlimit::As, crate::memory::address_space_limit(mb(m))));
                lim(
                    "memory",
                    format!("{m} MiB"),
                    &crate::memory::mech_rlimit_as(mb(m)),
                );
                report.notes.push(crate::memory::NOTE_NO_CGROUP.into());
            }
        }
        None => lim("memory", "none".into(), "-"),
    }
    match l.max_procs {
        Some(n) => {
            if let Some(dir) = &host.cgroup_pids {
                cgroup = Some((dir.clone(), n));
                lim("max_procs", n.to_string(), "pids cgroup");
            } else if ns.user {
                rlimits.push((Rlimit::Nproc, n));
                lim(
                    "max_procs",
                    n.to_string(),
                    "RLIMIT_NPROC in the user namespace",
                );
            } else if host.uid == 0 {
                lim("max_procs", n.to_string(), "NOT ENFORCED");
                report.degrade(
                    "max_procs not enforced: root is exempt from RLIMIT_NPROC and no pids \
                     cgroup is writable",
                );
            } else {
                rlimits.push((Rlimit::Nproc, n));
                lim(
                    "max_procs",
                    n.to_string(),
                    "RLIMIT_NPROC (counts all of this uid's processes)",
                );
                report.notes.push(
                    "max_procs: without a user namespace RLIMIT_NPROC counts every process of \
                     this uid on the host"
                        .into(),
                );
            }
        }
        None => lim("max_procs", "none".into(), "-"),
    }
    match l.max_file_size_mb {
        Some(m) => {
            rlimits.push((Rlimit::Fsize, mb(m)));
            lim("max_file_size", format!("{m} MiB"), "RLIMIT_FSIZE");
        }
        None => lim("max_file_size", "none".into(), "-"),
    }

    report.limits = limits;
    let cwd = policy.cwd.clone().unwrap_or_else(|| ws.clone());
    let mut set_env = Vec::new();
    if ns.mount {
        set_env.push(("TMPDIR".to_string(), "/tmp".to_string()));
    }
    if !ns.pid {
        report.degrade(
            "no PID namespace: host processes are visible in /proc; the timeout kills the \
             command's process group",
        );
    }
    Ok(Plan {
        argv: argv.to_vec(),
        cwd,
        workspace: ws,
        uid: host.uid,
        gid: host.gid,
        ns,
        loopback_up: ns.net && policy.net == NetPolicy::AllowLoopback,
        fs,
        landlock,
        seccomp,
        rlimits,
        cgroup,
        memory_cgroup,
        timeout_ms: l.timeout_secs.map(|t| t.saturating_mul(1000)),
        set_env,
        host_private_tmp: !ns.mount,
        die_with_parent: true,
        fail_closed: policy.fail_closed,
        report,
        report_format: ReportFormat::None,
        policy: policy.clone(),
        host: host.clone(),
    })
}
