//! [`Plan`]: the fully resolved list of steps the helper performs, computed
//! from a [`Policy`] and [`HostFacts`] by the pure function [`plan`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};
use crate::policy::{
    Grant, HOME_PERSISTENCE_PATHS, NetPolicy, Policy, SYSTEM_EXEC_DIRS, default_secret_paths,
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
    /// Read the host's copy; writes land in a private copy-on-write layer
    /// that is discarded after the run (toolchain caches).
    Private,
}

impl Access {
    fn label(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::ReadExec => "read+exec",
            Access::ReadWrite => "read-write",
            Access::Private => "read-write (private layer, discarded)",
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
    /// Private writable home: a tmpfs at this path (the canonical home
    /// directory), under which granted paths are bound; discarded after
    /// the run.
    Home {
        /// Canonical home directory.
        path: PathBuf,
    },
    /// A file written into the private home before the command starts.
    File {
        /// Path (under the private home).
        path: PathBuf,
        /// Contents.
        contents: String,
    },
    /// A symlink created in the new root where nothing else is (the name a
    /// grant was written with, or `$HOME` when it is a symlink).
    Symlink {
        /// Where the link goes.
        path: PathBuf,
        /// What it points at.
        target: PathBuf,
    },
    /// Bind a directory inside a writable grant onto itself (still
    /// writable): a mount point cannot be renamed or removed, so the
    /// command cannot move an ancestor of a protected path aside and make
    /// the protection miss it in a later run.
    Pin {
        /// Host path.
        path: PathBuf,
    },
    /// Hide a secret under a granted path (empty read-only file or
    /// directory). When it does not exist and lies in a writable grant,
    /// `reserve` keeps it from being created: the first missing component
    /// of the path gets a placeholder for the run.
    Mask {
        /// Host path.
        path: PathBuf,
        /// Reserve the name when it does not exist.
        #[serde(default)]
        reserve: bool,
    },
    /// Keep a workspace persistence path read-only; when missing and
    /// `reserve` is set, an empty read-only placeholder keeps it from being
    /// created during the run.
    Protect {
        /// Host path.
        path: PathBuf,
        /// Reserve the name when it does not exist.
        reserve: bool,
        /// Also reserve it when one of these paths exists (decided by the
        /// helper on the host; see [`crate::persistence::Reserve::IfAny`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reserve_if: Vec<PathBuf>,
    },
    /// Bind a run's private stage directory onto the workspace's `.git`
    /// (added by the helper when `.git` is missing; see [`crate::staging`]).
    Stage {
        /// The `.git` mount point (host path).
        path: PathBuf,
        /// The stage directory (host path).
        from: PathBuf,
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

// Defined with the report (every OS prints it).
pub use crate::report::ReportFormat;

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
    /// The allow-list proxy (`--net allow:...`), when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<crate::egress::EgressPlan>,
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
    /// One line printed on stderr when the command exits non-zero: what
    /// the sandbox denies, so an agent can tell a denial from a bug and ask
    /// for exactly the grant it needs.
    #[serde(default)]
    pub failure_hint: String,
    /// The workspace when it lies in `/tmp`, which is private to the run:
    /// after the command, init lists what it wrote beside the workspace
    /// (e.g. `git worktree add ../wt`), since that is discarded.
    #[serde(default)]
    pub tmp_watch: Option<PathBuf>,
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
    /// The workspace is the home directory or an ancestor of it.
    #[error(
        "workspace {0} holds the home directory: a command could then change what the host \
         runs or trusts (~/.gitconfig, ~/.config/skarn, shell start-up files); run from a \
         project directory, or pass --allow-home-workspace (every secret and persistence path \
         under it is then protected)"
    )]
    HomeWorkspace(PathBuf),
    /// A writable grant is, holds or lies in a system directory.
    #[error(
        "refusing to make {0} writable: it is, holds or lies in a system directory (/usr, /etc, \
         /bin, /lib, ...), which every later command on this host trusts"
    )]
    SystemWrite(PathBuf),
}

fn is_under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// Order of access widths, to merge two grants of one path.
fn rank(a: Access) -> u8 {
    match a {
        Access::Read => 0,
        Access::ReadExec => 1,
        Access::Private => 2,
        Access::ReadWrite => 3,
    }
}

/// Turn a policy into a plan for this host. Pure: looks at nothing but its
/// arguments (existence of paths is handled by the helper at run time).
/// Grants are expected canonical ([`crate::grants::canonicalize`]): the
/// secret checks compare paths, and a grant reached through a symlink is
/// bound at what the symlink named when the plan was made.
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
        egress: None,
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

    // ---- home ----
    // The canonical home and, when $HOME is a symlink, the name it has.
    let home_real = host.home_real.clone().or_else(|| host.home.clone());
    let homes: Vec<PathBuf> = host
        .home
        .iter()
        .chain(host.home_real.iter())
        .chain(host.passwd_home.iter())
        .cloned()
        .collect();
    // The workspace and every write grant: never the home or above it
    // (unless allowed), never a system directory or above one.
    for w in std::iter::once(&ws).chain(policy.write.iter().map(|g| &g.path)) {
        if homes.iter().any(|h| h.starts_with(w)) && !policy.allow_home_workspace {
            return Err(PlanError::HomeWorkspace(w.clone()));
        }
        if SYSTEM_EXEC_DIRS
            .iter()
            .any(|d| Path::new(d).starts_with(w) || (w.starts_with(d) && *d != "/opt"))
        {
            return Err(PlanError::SystemWrite(w.clone()));
        }
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
    for g in &policy.overlay {
        // Without a mount namespace there is no private layer: the cache
        // is readable only, never writable.
        let a = if nsok { Access::Private } else { Access::Read };
        push(&mut binds, g, a);
    }
    for g in &policy.write {
        push(&mut binds, g, Access::ReadWrite);
    }
    binds.push((
        ws.clone(),
        Access::ReadWrite,
        match policy.sources.get("workspace") {
            Some(why) => format!("workspace: {why}"),
            None => "workspace".into(),
        },
    ));
    // One entry per path: the widest access wins, the first source stays.
    let mut merged: Vec<(PathBuf, Access, String)> = Vec::new();
    for (p, a, src) in binds {
        match merged.iter_mut().find(|(q, _, _)| *q == p) {
            Some(m) => {
                if rank(a) > rank(m.1) {
                    m.1 = a;
                    m.2 = src;
                }
            }
            None => merged.push((p, a, src)),
        }
    }
    let mut binds = merged;

    // ---- secrets ----
    let mut secrets: Vec<(PathBuf, String)> = Vec::new();
    for h in homes.iter().map(Some).chain([None]) {
        if h.is_none() && !secrets.is_empty() {
            continue;
        }
        for p in default_secret_paths(h.map(PathBuf::as_path)) {
            if !secrets.iter().any(|(q, _)| *q == p) {
                secrets.push((p, "default (secret)".to_string()));
            }
        }
    }
    for p in &host.secret_aliases {
        secrets.push((p.clone(), "default (secret, other name)".to_string()));
    }
    for g in &policy.deny_read {
        secrets.push((g.path.clone(), g.source.clone()));
    }
    for p in &host.owner_only {
        if !secrets.iter().any(|(s, _)| p.starts_with(s)) {
            secrets.push((p.clone(), "default (closed to others)".to_string()));
        }
    }
    if host.owner_only_truncated {
        report.notes.push(
            "too many entries under /etc, /opt and /srv: the directories not examined are \
             hidden whole"
                .into(),
        );
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
    // The grant that decides access to `p`: the deepest one containing it.
    let deciding = |p: &Path| -> Option<(PathBuf, Access)> {
        binds
            .iter()
            .filter(|(g, _, _)| is_under(p, g))
            .max_by_key(|(g, _, _)| g.components().count())
            .map(|(g, a, _)| (g.clone(), *a))
    };
    let writable = |p: &Path| -> Option<PathBuf> {
        deciding(p).and_then(|(g, a)| (a == Access::ReadWrite).then_some(g))
    };
    // Secrets under a grant are hidden; under a writable grant, reserved too.
    let masked: Vec<(PathBuf, bool)> = secrets
        .iter()
        .filter(|(s, _)| deciding(s).is_some())
        .map(|(s, _)| (s.clone(), writable(s).is_some()))
        .collect();
    for (s, src) in &secrets {
        report.grants.push(GrantReport {
            path: s.display().to_string(),
            access: "deny".into(),
            source: src.clone(),
        });
    }
    if policy.allow_home_workspace && homes.iter().any(|h| h.starts_with(&ws)) {
        report.notes.push(format!(
            "workspace {} holds the home directory (--allow-home-workspace): every secret and \
             persistence path under it is protected, existing or not",
            ws.display()
        ));
    }
    if let (Some(owner), 0) = (host.workspace_owner, host.uid)
        && owner != 0
    {
        report.degrade(format!(
            "running as root without capabilities in a workspace owned by uid {owner}: files \
             and directories there that only their owner may write are read-only to the command"
        ));
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

    let broad = ["/", "/tmp", "/home", "/var", "/run"]
        .iter()
        .any(|b| ws == Path::new(b));
    if broad {
        report.notes.push(format!(
            "broad workspace {}: everything under it except secret and persistence paths is \
             read-write (and unix sockets under it are reachable)",
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
        if !policy.overlay.is_empty() {
            report.degrade(
                "toolchain caches are read-only: a private copy-on-write layer needs a mount \
                 namespace",
            );
        }
    }

    // ---- private home ----
    // A tmpfs at the home directory unless a grant already covers the home
    // itself (a grant of the home or of an ancestor: the user asked for it).
    let private_home = match &home_real {
        Some(h) if policy.private_home && ns.mount => !binds.iter().any(|(g, _, _)| {
            h.starts_with(g) && !SYSTEM_EXEC_DIRS.iter().any(|d| Path::new(d) == g)
        }),
        _ => false,
    };
    if let (Some(h), true) = (&home_real, private_home) {
        report.grants.push(GrantReport {
            path: h.display().to_string(),
            access: "read-write (private home, discarded)".into(),
            source: "default (private_home)".into(),
        });
    }

    // ---- filesystem steps ----
    let mut fs = Vec::new();
    // Protected paths (persistence) and masked secrets under writable
    // grants, for pinning their ancestors.
    let mut guarded: Vec<PathBuf> = Vec::new();
    if ns.mount {
        fs.push(FsOp::Proc);
        fs.push(FsOp::Dev);
        fs.push(FsOp::Tmp);
        if let (Some(h), true) = (&home_real, private_home) {
            fs.push(FsOp::Home { path: h.clone() });
            if let Some(named) = &host.home
                && named != h
            {
                fs.push(FsOp::Symlink {
                    path: named.clone(),
                    target: h.clone(),
                });
            }
            for (p, c) in &policy.home_files {
                if p.starts_with(h) && deciding(p).is_none() {
                    fs.push(FsOp::File {
                        path: p.clone(),
                        contents: c.clone(),
                    });
                }
            }
        }
        for (p, a, _) in &binds {
            fs.push(FsOp::Bind {
                path: p.clone(),
                access: *a,
            });
        }
        for g in policy
            .read
            .iter()
            .chain(&policy.exec)
            .chain(&policy.write)
            .chain(&policy.overlay)
        {
            if let Some(alias) = &g.alias
                && binds.iter().any(|(p, _, _)| *p == g.path)
            {
                fs.push(FsOp::Symlink {
                    path: alias.clone(),
                    target: g.path.clone(),
                });
            }
        }
        for (s, reserve) in &masked {
            if *reserve {
                guarded.push(s.clone());
            }
        }
    }
    let mut protects: Vec<FsOp> = Vec::new();
    if policy.protect_persistence {
        if ns.mount {
            let ws_is_home = homes.contains(&ws);
            for en in GIT_DIR_ENTRIES.iter().chain(ENTRIES) {
                let (reserve, reserve_if) = match en.reserve {
                    Reserve::Always => (true, Vec::new()),
                    Reserve::IfHome => (ws_is_home, Vec::new()),
                    Reserve::Never => (false, Vec::new()),
                    Reserve::IfAny(fam) => (false, fam.iter().map(|r| ws.join(r)).collect()),
                };
                protects.push(FsOp::Protect {
                    path: ws.join(en.path),
                    reserve,
                    reserve_if,
                });
            }
            // Other writable directories: their existing persistence paths.
            for (g, a, _) in &binds {
                if *a == Access::ReadWrite && *g != ws {
                    for en in GIT_DIR_ENTRIES.iter().chain(ENTRIES) {
                        protects.push(FsOp::Protect {
                            path: g.join(en.path),
                            reserve: false,
                            reserve_if: Vec::new(),
                        });
                    }
                }
            }
            // The home's own persistence paths, wherever a grant makes
            // them writable (the workspace holds the home).
            let shell_rc = ENTRIES
                .iter()
                .filter(|en| en.reserve == Reserve::IfHome)
                .map(|en| en.path);
            let home_paths: Vec<&str> = HOME_PERSISTENCE_PATHS
                .iter()
                .copied()
                .chain(shell_rc)
                .collect();
            // Every existing top-level dot entry of the home, too: host
            // programs read them (toolchains, caches, configurations).
            let entries: Vec<&str> = host.home_entries.iter().map(String::as_str).collect();
            for h in &homes {
                for rel in &entries {
                    let p = h.join(rel);
                    if writable(&p).is_some()
                        && !protects
                            .iter()
                            .any(|o| matches!(o, FsOp::Protect { path, .. } if *path == p))
                    {
                        protects.push(FsOp::Protect {
                            path: p,
                            reserve: false,
                            reserve_if: Vec::new(),
                        });
                    }
                }
                for rel in &home_paths {
                    let p = h.join(rel);
                    if writable(&p).is_some()
                        && !protects
                            .iter()
                            .any(|o| matches!(o, FsOp::Protect { path, .. } if *path == p))
                    {
                        protects.push(FsOp::Protect {
                            path: p,
                            reserve: true,
                            reserve_if: Vec::new(),
                        });
                    }
                }
            }
            let all: Vec<&str> = GIT_DIR_ENTRIES
                .iter()
                .chain(ENTRIES)
                .map(|en| en.path)
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
    for op in &protects {
        if let FsOp::Protect { path, .. } = op
            && writable(path).is_some()
        {
            guarded.push(path.clone());
        }
    }
    // Ancestors of guarded paths inside their writable grant are pinned, so
    // no rename can carry a protected path away from where the next run
    // looks for it.
    let mut pins: Vec<PathBuf> = Vec::new();
    for p in &guarded {
        let Some(g) = writable(p) else { continue };
        let mut a = p.parent();
        while let Some(d) = a {
            if d == g || !d.starts_with(&g) {
                break;
            }
            if !pins.iter().any(|q| q == d) {
                pins.push(d.to_path_buf());
            }
            a = d.parent();
        }
    }
    pins.sort_by_key(|p| p.components().count());
    fs.extend(pins.into_iter().map(|path| FsOp::Pin { path }));
    for (s, reserve) in &masked {
        if ns.mount {
            fs.push(FsOp::Mask {
                path: s.clone(),
                reserve: *reserve,
            });
        }
    }
    fs.extend(protects);

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
                    Access::ReadWrite | Access::Private => LandlockAccess::ReadWrite,
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
        if let (Some(h), true) = (&home_real, private_home) {
            // The private home is a tmpfs of its own; read-only grants
            // inside it stay read-only mounts.
            rules.push(LandlockRule {
                path: h.clone(),
                access: LandlockAccess::ReadWrite,
            });
        }
        let net = &policy.net;
        Some(LandlockPlan {
            rules,
            secrets: if ns.mount {
                Vec::new()
            } else {
                secrets.iter().map(|(s, _)| s.clone()).collect()
            },
            deny_tcp_bind: abi >= 4
                && (*net == NetPolicy::AllowOutbound || (closed_net(net) && !ns.net)),
            deny_tcp_connect: abi >= 4 && closed_net(net) && !ns.net,
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
            deny_inet_sockets: closed_net(&policy.net) && !ns.net,
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
        // ---- egress (issue 11) ----
        NetPolicy::AllowHosts(_) => crate::egress::plan_notes(&policy.net, ns.net, &mut report),
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
    // ---- egress (issue 11) ----
    let egress = crate::egress::plan_egress(&policy.net, ns.net, &mut set_env);
    if !ns.pid {
        report.degrade(
            "no PID namespace: host processes are visible in /proc; the timeout kills the \
             command's process group",
        );
    }
    let writable: Vec<String> = binds
        .iter()
        .filter(|(_, a, _)| *a == Access::ReadWrite)
        .map(|(p, _, _)| p.display().to_string())
        .collect();
    let mut private: Vec<&str> = Vec::new();
    if ns.mount {
        private.push("/tmp");
    }
    if private_home {
        private.push("~");
    }
    let failure_hint = format!(
        "skarn: sandbox: the command failed; denied here: network {}; writes outside {}{}; \
         secret paths (~/.ssh, ~/.aws, ...); run with --report for the full policy",
        match policy.net {
            NetPolicy::DenyAll => "(all of it: names do not resolve; --net loopback|outbound|all)",
            NetPolicy::AllowLoopback => "beyond the sandbox's own loopback (--net outbound|all)",
            NetPolicy::AllowOutbound => "inbound (listen/bind)",
            NetPolicy::AllowAll => "nothing",
            NetPolicy::AllowHosts(_) => "to hosts outside the allow list (see skarn: net: lines)",
        },
        writable.join(", "),
        if private.is_empty() {
            String::new()
        } else {
            format!(
                " ({} {} private to the run and discarded)",
                private.join(" and "),
                if private.len() > 1 { "are" } else { "is" }
            )
        },
    );
    let tmp_watch =
        (ns.mount && ws.starts_with("/tmp") && ws != Path::new("/tmp")).then(|| ws.clone());
    Ok(Plan {
        argv: argv.to_vec(),
        cwd,
        workspace: ws,
        uid: host.uid,
        gid: host.gid,
        ns,
        loopback_up: ns.net
            && matches!(
                policy.net,
                NetPolicy::AllowLoopback | NetPolicy::AllowHosts(_)
            ),
        egress,
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
        failure_hint,
        tmp_watch,
        policy: policy.clone(),
        host: host.clone(),
    })
}

/// Policies that fall back to "no network" without a network namespace
/// (`AllowHosts` needs one for its proxy: without it nothing is reachable).
fn closed_net(n: &NetPolicy) -> bool {
    matches!(n, NetPolicy::DenyAll | NetPolicy::AllowHosts(_))
}
