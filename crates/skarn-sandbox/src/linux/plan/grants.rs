//! Planning part 1: the grants. Checks the policy's paths, merges the
//! grants into one access per path, gathers the secrets and drops any
//! grant that is one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{Access, PlanError};
use crate::linux::host::HostFacts;
use crate::policy::{Grant, Policy, SYSTEM_EXEC_DIRS, default_secret_paths};
use crate::report::{GrantReport, RestrictionReport};

/// The merged grants and secrets of a policy on one host.
pub(super) struct Granted {
    /// One entry per path (path, access, source), shallow paths first.
    pub binds: Vec<(PathBuf, Access, String)>,
    /// Paths never readable (path, source).
    pub secrets: Vec<(PathBuf, String)>,
    /// Every name of the home directory (`$HOME`, its canonical path, the
    /// password database's).
    pub homes: Vec<PathBuf>,
    /// The canonical home directory.
    pub home_real: Option<PathBuf>,
    /// Each grant's place in `binds`, so that the grant deciding a path is
    /// found by walking the path's ancestors (the planner asks for a few
    /// hundred paths; comparing each with every grant was quadratic).
    index: HashMap<PathBuf, usize>,
}

impl Granted {
    /// The grant that decides access to `p`: the deepest one containing it.
    pub fn deciding(&self, p: &Path) -> Option<(PathBuf, Access)> {
        // The first ancestor (nearest first, `p` itself included) that is
        // a grant is the deepest grant containing `p`.
        p.ancestors()
            .find_map(|a| self.index.get(a))
            .map(|&i| (self.binds[i].0.clone(), self.binds[i].1))
    }

    /// The writable grant deciding access to `p`, if any.
    pub fn writable(&self, p: &Path) -> Option<PathBuf> {
        self.deciding(p)
            .and_then(|(g, a)| (a == Access::ReadWrite).then_some(g))
    }

    /// Whether `p` is one of the system directories' own grants.
    pub fn is_system(p: &Path) -> bool {
        SYSTEM_EXEC_DIRS.iter().any(|d| Path::new(d) == p)
    }
}

/// Every path of the policy must be absolute.
pub(super) fn check_absolute(policy: &Policy) -> Result<(), PlanError> {
    let all = std::iter::once(&policy.workspace)
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
    Ok(())
}

/// Merge the grants (system, policy, workspace), gather the secrets, drop
/// secret grants, and list both in the report.
pub(super) fn collect(
    policy: &Policy,
    host: &HostFacts,
    report: &mut RestrictionReport,
) -> Result<Granted, PlanError> {
    // The canonical home and, when $HOME is a symlink, the name it has.
    let home_real = host.home_real.clone().or_else(|| host.home.clone());
    let homes: Vec<PathBuf> = host
        .home
        .iter()
        .chain(host.home_real.iter())
        .chain(host.passwd_home.iter())
        .cloned()
        .collect();
    check_writable_places(policy, &homes)?;
    let mut binds = merged_binds(policy, host.namespaces);
    let secrets = secrets(policy, host, &homes, report);
    // A grant that is itself a secret (or inside one) is dropped.
    let secret_set: HashSet<&Path> = secrets.iter().map(|(s, _)| s.as_path()).collect();
    binds.retain(|(p, _, src)| {
        let hit = p.ancestors().any(|a| secret_set.contains(a));
        if hit {
            report.notes.push(format!(
                "grant of {} ({src}) dropped: it is a secret path",
                p.display()
            ));
        }
        !hit
    });
    super::trusted::demote(policy, host, &mut binds, report);
    // Shallow paths first so a nested grant is mounted on top of its parent.
    binds.sort_by_key(|(p, _, _)| p.components().count());
    for (p, a, src) in &binds {
        report.grants.push(GrantReport {
            path: p.display().to_string(),
            access: a.label().to_string(),
            source: src.clone(),
        });
    }
    for (s, src) in &secrets {
        report.grants.push(GrantReport {
            path: s.display().to_string(),
            access: "deny".into(),
            source: src.clone(),
        });
    }
    let index = binds
        .iter()
        .enumerate()
        .map(|(i, (p, _, _))| (p.clone(), i))
        .collect();
    let g = Granted {
        binds,
        secrets,
        homes,
        home_real,
        index,
    };
    notes(policy, host, &g, report);
    Ok(g)
}

/// The workspace and every write grant: never the home or above it
/// (unless allowed), never a system directory or above one.
fn check_writable_places(policy: &Policy, homes: &[PathBuf]) -> Result<(), PlanError> {
    for w in std::iter::once(&policy.workspace).chain(policy.write.iter().map(|g| &g.path)) {
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
    Ok(())
}

/// Grants in order (system, policy, workspace), one entry per path: the
/// widest access wins, the first source stays.
fn merged_binds(policy: &Policy, nsok: bool) -> Vec<(PathBuf, Access, String)> {
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
        policy.workspace.clone(),
        Access::ReadWrite,
        match policy.sources.get("workspace") {
            Some(why) => format!("workspace: {why}"),
            None => "workspace".into(),
        },
    ));
    let mut merged: Vec<(PathBuf, Access, String)> = Vec::new();
    let mut at: HashMap<PathBuf, usize> = HashMap::new();
    for (p, a, src) in binds {
        match at.get(&p).map(|&i| &mut merged[i]) {
            Some(m) => {
                if a.rank() > m.1.rank() {
                    m.1 = a;
                    m.2 = src;
                }
            }
            None => {
                at.insert(p.clone(), merged.len());
                merged.push((p, a, src));
            }
        }
    }
    merged
}

/// The secrets: defaults under every name of the home, their other names,
/// `deny_read`, and entries of system directories closed to others.
fn secrets(
    policy: &Policy,
    host: &HostFacts,
    homes: &[PathBuf],
    report: &mut RestrictionReport,
) -> Vec<(PathBuf, String)> {
    let mut secrets: Vec<(PathBuf, String)> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for h in homes.iter().map(Some).chain([None]) {
        if h.is_none() && !secrets.is_empty() {
            continue;
        }
        for p in default_secret_paths(h.map(PathBuf::as_path)) {
            if seen.insert(p.clone()) {
                secrets.push((p, "default (secret)".to_string()));
            }
        }
    }
    for p in &host.secret_aliases {
        secrets.push((p.clone(), "default (secret, other name)".to_string()));
    }
    for t in host.trusted.iter().filter(|t| t.secret) {
        secrets.push((t.target.clone(), format!("default (secret: {})", t.via)));
    }
    for g in &policy.deny_read {
        secrets.push((g.path.clone(), g.source.clone()));
    }
    // One mask per place (a configured `file` source is both a trusted
    // secret and a `deny_read` entry).
    let mut once: HashSet<PathBuf> = HashSet::new();
    secrets.retain(|(s, _)| once.insert(s.clone()));
    let mut listed: HashSet<PathBuf> = secrets.iter().map(|(s, _)| s.clone()).collect();
    for p in &host.owner_only {
        if !p.ancestors().any(|a| listed.contains(a)) {
            listed.insert(p.clone());
            secrets.push((p.clone(), "default (closed to others)".to_string()));
        }
    }
    // A secret inside another is hidden with it (and a mask inside a
    // mask could not be reserved).
    let all: HashSet<PathBuf> = secrets.iter().map(|(s, _)| s.clone()).collect();
    secrets.retain(|(s, _)| !s.ancestors().skip(1).any(|a| all.contains(a)));
    crate::linux::plan::idmap::note(host, host.namespaces, report);
    if host.owner_only_truncated {
        report.notes.push(
            "too many entries under /etc, /opt and /srv: the directories not examined are \
             hidden whole"
                .into(),
        );
    }
    secrets
}

/// Whether the workspace is seen through the owner-swapping id mapping
/// ([`crate::linux::idmap_workspace`]): root, a workspace of another owner that
/// the run may write, and a new root to mount it in. The direct mode binds
/// it mapped; the copy-on-write layer stacks on mapped mounts of the
/// workspace and of its own directory (ADR 0226).
pub(super) fn workspace_idmap(policy: &Policy, host: &HostFacts, g: &Granted, mount: bool) -> bool {
    host.uid == 0
        && host.workspace_owner.is_some_and(|o| o != 0)
        && mount
        && g.writable(&policy.workspace).is_some()
}

/// Notes about the workspace and the grants.
fn notes(policy: &Policy, host: &HostFacts, g: &Granted, report: &mut RestrictionReport) {
    let ws = &policy.workspace;
    if policy.allow_home_workspace && g.homes.iter().any(|h| h.starts_with(ws)) {
        report.notes.push(format!(
            "workspace {} holds the home directory (--allow-home-workspace): every secret and \
             persistence path under it is protected, existing or not",
            ws.display()
        ));
    }
    if let (Some(owner), 0) = (host.workspace_owner, host.uid)
        && owner != 0
    {
        if workspace_idmap(policy, host, g, host.namespaces) {
            report.notes.push(format!(
                "running as root without capabilities in a workspace owned by uid {owner}: the \
                 workspace (under its copy-on-write layer too) is mounted through an id mapping \
                 that swaps uid {owner} and root (and the owner's group and root's), so the \
                 command writes it as root does bare; what it creates belongs to uid {owner} on \
                 disk"
            ));
        } else {
            report.degrade(format!(
                "running as root without capabilities in a workspace owned by uid {owner}: \
                 files and directories there that only their owner may write are read-only to \
                 the command"
            ));
        }
    }
    if g.binds
        .iter()
        .any(|(p, a, _)| *a != Access::ReadWrite && !Granted::is_system(p))
    {
        report.notes.push(
            "unix sockets a host server binds inside read-only grants after the run starts, or \
             binds from another network namespace, stay connectable (Landlock ABI <= 7 cannot \
             restrict connect(2) on pathname sockets; those /proc/net/unix lists at the start \
             are hidden)"
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
}
