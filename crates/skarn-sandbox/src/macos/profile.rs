//! The pure Policy → SBPL profile generator.
//!
//! Layout of a profile (Seatbelt lets the last matching rule win, so every
//! deny comes after the allows it narrows):
//! 1. `(deny default)`;
//! 2. processes: fork and exec allowed; process information and signals
//!    only for processes of the same sandbox;
//! 3. system information: the sysctls and Mach services of
//!    [`super::services`], POSIX semaphores, preference reads;
//! 4. files: every read; writes to the writable roots (workspace, per-run
//!    temporary directory, `--write` grants) and a few devices;
//! 5. network, per [`NetPolicy`];
//! 6. denies: writes to the workspace's persistence paths and git layout,
//!    renames and deletions of their ancestors inside writable roots, and
//!    reads, writes, hard links and clones of every secret path, each under
//!    every name of it ([`MacFacts::names`]) and as a case-insensitive regex
//!    ([`sbpl::deny_regex`]).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::facts::MacFacts;
use super::sbpl::{self, QuoteError};
pub use super::secret_paths::secret_paths;
use super::services::{MACH_SERVICES, SYSCTL_NAMES, SYSCTL_PREFIXES};
use crate::policy::{HOME_PERSISTENCE_PATHS, NetPolicy, Policy};
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};

/// Why no profile could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// A path of the policy cannot be written into a profile faithfully.
    #[error("{what}: {source}")]
    Path {
        /// Which part of the policy names it.
        what: String,
        /// What is wrong with it.
        #[source]
        source: QuoteError,
    },
    /// The workspace is the home directory or holds it.
    #[error(
        "workspace {0} is the home directory or holds it; pass --allow-home-workspace to accept"
    )]
    HomeWorkspace(PathBuf),
    /// A writable root is, holds or lies in a system directory.
    #[error(
        "refusing to make {0} writable: it is, holds or lies in a system directory (/System, \
         /usr, /Library, /etc, ...), which every later command on this host trusts"
    )]
    SystemWrite(PathBuf),
}

/// System directories never writable (nor any directory holding one).
pub const SYSTEM_DIRS: &[&str] = &[
    "/System",
    "/usr",
    "/bin",
    "/sbin",
    "/Library",
    "/Applications",
    "/etc",
    "/private/etc",
    "/opt",
    "/Users/Shared",
];

fn bad(what: impl Into<String>) -> impl FnOnce(QuoteError) -> ProfileError {
    let what = what.into();
    move |source| ProfileError::Path { what, source }
}

/// The writable roots: workspace, per-run temporary directory, `--write`
/// grants (canonical and as written).
pub(crate) fn writable_roots(policy: &Policy, facts: &MacFacts) -> Vec<PathBuf> {
    let mut v = vec![policy.workspace.clone(), facts.run_temp.clone()];
    for g in &policy.write {
        v.push(g.path.clone());
        v.extend(g.alias.clone());
    }
    dedup(v)
}

/// Paths whose writes are denied although they lie under a writable root:
/// persistence entries of the workspace (per their [`Reserve`] rule; a
/// deny on a missing path keeps it from being created), the git layout's
/// guards, and the home's persistence paths under a writable root.
pub(crate) fn protected_paths(policy: &Policy, facts: &MacFacts) -> Vec<PathBuf> {
    let ws = &policy.workspace;
    let home = facts.home.as_deref();
    let ws_is_home = home.is_some_and(|h| h.starts_with(ws));
    let mut v = Vec::new();
    if policy.protect_persistence {
        for e in ENTRIES.iter().chain(GIT_DIR_ENTRIES) {
            let present = facts.present.contains(e.path);
            let reserve = match e.reserve {
                Reserve::Always => true,
                Reserve::IfHome => ws_is_home,
                Reserve::IfAny(family) => family.iter().any(|f| facts.present.contains(*f)),
                Reserve::Never => false,
            };
            if present || reserve {
                v.push(ws.join(e.path));
            }
        }
        v.extend(facts.git_guards.iter().cloned());
    }
    if let Some(h) = home {
        let roots = writable_roots(policy, facts);
        for p in HOME_PERSISTENCE_PATHS {
            let p = h.join(p);
            if roots.iter().any(|r| p.starts_with(r)) {
                v.push(p);
            }
        }
    }
    dedup(v)
}

fn dedup(mut v: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|p| seen.insert(p.clone()));
    v
}

/// The SBPL profile for `policy` on a host described by `facts`.
pub fn profile(policy: &Policy, facts: &MacFacts) -> Result<String, ProfileError> {
    let ws = &policy.workspace;
    if let Some(h) = &facts.home
        && h.starts_with(ws)
        && !policy.allow_home_workspace
    {
        return Err(ProfileError::HomeWorkspace(ws.clone()));
    }
    sbpl::path_text(ws).map_err(bad("workspace"))?;
    for r in writable_roots(policy, facts) {
        let sys = |d: &&str| {
            let d = Path::new(d);
            r.starts_with(d) || d.starts_with(&r)
        };
        if SYSTEM_DIRS.iter().any(sys) {
            return Err(ProfileError::SystemWrite(r));
        }
    }
    let mut s = String::new();
    s.push_str("(version 1)\n; Generated by skarn from a sandbox policy.\n(deny default)\n\n");
    processes(&mut s);
    system(&mut s, &policy.net);
    files(&mut s, policy, facts)?;
    network(&mut s, policy, facts)?;
    denies(&mut s, policy, facts)?;
    Ok(s)
}

fn processes(s: &mut String) {
    s.push_str(
        "; Processes: any program may run; other processes are neither inspected\n\
         ; nor signalled unless they are in this sandbox.\n\
         (allow process-fork)\n\
         (allow process-exec)\n\
         (allow process-info* (target same-sandbox))\n\
         (allow signal (target same-sandbox))\n\
         ; JIT compilers (node, java) map writable-then-executable memory.\n\
         (allow dynamic-code-generation)\n\
         ; host_processor_info: os.cpus() of node/libuv, thread-pool sizing.\n\
         (allow mach-host*)\n\n",
    );
}

fn system(s: &mut String, net: &NetPolicy) {
    s.push_str(
        "; System information read at start-up by runtimes and build tools.\n(allow sysctl-read\n",
    );
    for n in SYSCTL_NAMES {
        let _ = writeln!(s, "  (sysctl-name \"{n}\")");
    }
    for p in SYSCTL_PREFIXES {
        let _ = writeln!(s, "  (sysctl-name-prefix \"{p}\")");
    }
    s.push_str(")\n\n; Mach services (each with the reason it is needed).\n");
    let open = !matches!(
        net,
        NetPolicy::DenyAll | NetPolicy::AllowLoopback | NetPolicy::AllowHosts(_)
    );
    for m in MACH_SERVICES.iter().filter(|m| open || !m.network_only) {
        let _ = writeln!(
            s,
            "; {}\n(allow mach-lookup (global-name \"{}\"))",
            m.why, m.name
        );
    }
    s.push_str(
        "\n; IPC: POSIX semaphores (Python multiprocessing); the notification\n\
         ; centre's shared page; preference reads (never writes).\n\
         (allow ipc-posix-sem)\n\
         (allow ipc-posix-shm-read* (ipc-posix-name \"apple.shm.notification_center\"))\n\
         (allow user-preference-read)\n\n",
    );
}

fn files(s: &mut String, policy: &Policy, facts: &MacFacts) -> Result<(), ProfileError> {
    s.push_str(
        "; Files: reads are broad (secrets are denied below); executable mappings\n\
         ; of readable files (the dynamic loader).\n\
         (allow file-read* file-test-existence file-map-executable)\n\n\
         ; Writes: the workspace, the per-run temporary directory, --write grants.\n\
         (allow file-write* file-link file-clone\n",
    );
    for r in writable_roots(policy, facts) {
        for n in facts.names(&r) {
            let f = sbpl::subpath(&n).map_err(bad(format!("writable path {}", r.display())))?;
            let _ = writeln!(s, "  {f}");
        }
    }
    s.push_str(
        ")\n\n\
         ; Devices: the usual character devices; the terminals the command was\n\
         ; given (its own session has no controlling terminal); new pseudo-terminals.\n\
         (allow file-write-data file-ioctl\n  \
         (literal \"/dev/null\")\n  (literal \"/dev/zero\")\n  (literal \"/dev/tty\")\n  \
         (literal \"/dev/dtracehelper\")\n  (literal \"/dev/stdout\")\n  (literal \"/dev/stderr\")\n  \
         (regex \"^/dev/fd/[0-9]+$\")\n  (regex \"^/dev/ttys[0-9]+$\"))\n\
         (allow pseudo-tty)\n\
         (allow file-write-data file-ioctl (literal \"/dev/ptmx\"))\n\
         ; Set-user/group-id bits are never set.\n\
         (deny file-write-setugid)\n\n",
    );
    Ok(())
}

fn network(s: &mut String, policy: &Policy, facts: &MacFacts) -> Result<(), ProfileError> {
    // Unix-domain sockets under the writable roots, whatever the policy
    // (the same as pathname sockets inside the workspace on Linux).
    s.push_str("; Network: unix-domain sockets under the writable roots.\n(allow network*\n");
    for r in writable_roots(policy, facts) {
        for n in facts.names(&r) {
            let f = sbpl::subpath(&n).map_err(bad(format!("writable path {}", r.display())))?;
            let _ = writeln!(s, "  {f}");
        }
    }
    s.push_str(")\n");
    let dns = "(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))\n";
    match &policy.net {
        NetPolicy::DenyAll => s.push_str("; --net deny: no IP traffic at all.\n"),
        NetPolicy::AllowLoopback => s.push_str(
            "; --net loopback: IP only to and from localhost (which the host shares).\n\
             (allow network-bind network-inbound (local ip \"localhost:*\"))\n\
             (allow network-outbound (remote ip \"localhost:*\"))\n",
        ),
        NetPolicy::AllowOutbound => {
            s.push_str(
                "; --net outbound: connections to any host; no listening socket.\n\
                 (allow network-outbound (remote ip \"*:*\"))\n\
                 (allow system-socket)\n",
            );
            s.push_str(dns);
        }
        NetPolicy::AllowAll => {
            s.push_str(
                "; --net all: any IP traffic.\n\
                 (allow network-outbound (remote ip \"*:*\"))\n\
                 (allow network-bind network-inbound (local ip \"*:*\"))\n\
                 (allow system-socket)\n",
            );
            s.push_str(dns);
        }
        NetPolicy::AllowHosts(_) => match facts.proxy_ports {
            Some((http, socks)) => {
                let _ = write!(
                    s,
                    "; --net allow:...: only the egress proxy on loopback (HTTP {http}, SOCKS5 {socks}).\n\
                     (allow network-outbound (remote ip \"localhost:{http}\") (remote ip \"localhost:{socks}\"))\n"
                );
            }
            None => s.push_str("; --net allow:... without a proxy: no IP traffic at all.\n"),
        },
    }
    s.push('\n');
    Ok(())
}

/// Ancestors of `p` inside `root` (root included, `p` excluded).
fn ancestors_within(p: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for a in p.ancestors().skip(1) {
        if roots.iter().any(|r| a.starts_with(r)) {
            v.push(a.to_path_buf());
        }
    }
    v
}

fn denies(s: &mut String, policy: &Policy, facts: &MacFacts) -> Result<(), ProfileError> {
    let roots = writable_roots(policy, facts);
    let protected = protected_paths(policy, facts);
    let mut secrets = secret_paths(policy, facts.home.as_deref());
    secrets.extend(facts.secret_link_targets.iter().cloned());
    let secrets = dedup(secrets);

    // Renaming or deleting a writable root or an ancestor of a protected
    // path would let a later run find it elsewhere (or find a replacement).
    let mut pinned: Vec<PathBuf> = roots.clone();
    for p in protected.iter().chain(&secrets) {
        pinned.extend(ancestors_within(p, &roots));
    }
    let pinned = dedup(pinned);
    s.push_str("; Writable roots and ancestors of protected paths: never renamed or deleted.\n(deny file-write-unlink\n");
    for p in &pinned {
        for n in facts.names(p) {
            let f = sbpl::literal(&n).map_err(bad(format!("path {}", p.display())))?;
            let _ = writeln!(s, "  {f}");
        }
    }
    s.push_str(")\n\n");

    if !protected.is_empty() {
        s.push_str(
            "; Persistence paths of the workspace (run later by host tools): read-only,\n\
             ; not creatable, not hard-linked.\n\
             (deny file-write* file-link\n",
        );
        for p in &protected {
            filters(s, p, facts, "persistence path")?;
        }
        s.push_str(")\n\n");
    }
    s.push_str(
        "; Secrets: never read, written, hard-linked or cloned, under any name.\n\
         (deny file-read* file-write* file-link file-clone file-map-executable\n",
    );
    for p in &secrets {
        filters(s, p, facts, "secret path")?;
    }
    s.push_str(")\n");
    Ok(())
}

/// The exact names of `p` as `subpath` filters and its deny regex.
fn filters(s: &mut String, p: &Path, facts: &MacFacts, what: &str) -> Result<(), ProfileError> {
    let what = format!("{what} {}", p.display());
    for n in facts.names(p) {
        let f = sbpl::subpath(&n).map_err(bad(what.clone()))?;
        let _ = writeln!(s, "  {f}");
    }
    let re = sbpl::deny_regex(p).map_err(bad(what.clone()))?;
    let f = sbpl::regex(&re).map_err(bad(what))?;
    let _ = writeln!(s, "  {f}");
    Ok(())
}
