//! Planning part 3b: the reservation step (what of the persistence paths
//! init binds or reserves before the run) and the checks after the run,
//! with the grant helpers both use.

use std::path::PathBuf;

use super::grants::Granted;
use super::{Access, AfterRun, HomeQuarantine, Reservation};
use crate::linux::host::HostFacts;
use crate::policy::{HOME_PERSISTENCE_PATHS, Policy};
use crate::protect::persistence::{ENTRIES, Reserve};

/// The reservation step (with a mount namespace).
pub(super) fn reservation(policy: &Policy, host: &HostFacts, g: &Granted) -> Reservation {
    Reservation {
        workspace: policy.workspace.clone(),
        git: policy.workspace.join(".git"),
        nested_roots: writable_roots(g),
        git_home: host.home.clone(),
        aliases: alias_places(policy, host),
        walk_max_dirs: policy.walk_max_dirs,
        empty_files: host
            .empty_when_missing
            .iter()
            .filter(|p| g.writable(p).is_some())
            .cloned()
            .collect(),
    }
}

/// The places whose other names (same device and inode) inside writable
/// grants are protected too: the home's persistence and secret paths,
/// skarn's own configuration, and every trusted place found by following
/// links and configurations ([`HostFacts::trusted`]).
fn alias_places(policy: &Policy, host: &HostFacts) -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = host
        .trusted
        .iter()
        .map(|t| (t.target.clone(), t.secret))
        .collect();
    // `--deny-read` paths and the secrets' own `file` sources (added to
    // them): a hard link inside a writable grant is hidden too (attack
    // atk27d F4).
    out.extend(policy.deny_read.iter().map(|g| (g.path.clone(), true)));
    // Other names of the default secret paths, and secret files named by
    // the caller's variables or git outside every grant (atk22i F5).
    out.extend(host.secret_aliases.iter().map(|p| (p.clone(), true)));
    if let Some(home) = &host.home {
        let rc = ENTRIES
            .iter()
            .filter(|e| e.reserve == Reserve::IfHome)
            .map(|e| e.path);
        for rel in HOME_PERSISTENCE_PATHS.iter().copied().chain(rc) {
            out.push((home.join(rel), false));
        }
        for rel in crate::policy::HOME_SECRET_PATHS {
            out.push((home.join(rel), true));
        }
        out.push((home.join(".config/skarn/config.toml"), true));
    }
    out.sort();
    out.dedup();
    // Secrets first: the files below them are looked at within a budget.
    out.sort_by_key(|(_, secret)| !*secret);
    out
}

/// The checks after the run (with a mount namespace and persistence
/// protection).
pub(super) fn after_run(policy: &Policy, host: &HostFacts, g: &Granted) -> AfterRun {
    let quarantine_home = match &host.home {
        Some(h) if policy.allow_home_workspace && h.starts_with(&policy.workspace) => {
            Some(HomeQuarantine {
                home: h.clone(),
                existing: host.home_entries.clone(),
            })
        }
        _ if host.home_like_workspace.is_some() => Some(HomeQuarantine {
            home: policy.workspace.clone(),
            existing: host.workspace_dot_entries.clone(),
        }),
        _ => None,
    };
    let mut link_guards: Vec<(PathBuf, PathBuf)> = Vec::new();
    for t in &host.trusted {
        for (hop, text) in t.hops.iter().zip(&t.hop_texts) {
            if g.writable(hop).is_some()
                && !text.as_os_str().is_empty()
                && !link_guards.iter().any(|(p, _)| p == hop)
            {
                link_guards.push((hop.clone(), text.clone()));
            }
        }
    }
    let cwd = policy.cwd.as_ref().unwrap_or(&policy.workspace);
    let dirs = crate::protect::host_programs::path_dirs(cwd, host.home.as_deref());
    // Each where the kernel will find it (through the host's links, a
    // dangling link, a `..` after a missing name: atk22j F4).
    let mut missing_path_dirs: Vec<(PathBuf, Vec<PathBuf>)> = dirs
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            let later = &dirs[i + 1..];
            missing_places(d, g)
                .into_iter()
                .map(move |p| (p, later.to_vec()))
        })
        .take(64)
        .collect();
    // The `PATH` directories the workspace's `.envrc` adds in front of
    // the caller's (not reserved: see `persistence`).
    if policy.protect_persistence {
        for d in crate::protect::envrc::path_dirs(&policy.workspace.join(".envrc"))
            .into_iter()
            .flat_map(|d| missing_places(&d, g))
            .take(64)
        {
            missing_path_dirs.push((d, dirs.clone()));
        }
        // And those its mise configuration adds (`[env] _.path`).
        for d in crate::protect::mise_env::named(&policy.workspace, host.home.as_deref())
            .path_dirs
            .into_iter()
            .flat_map(|d| missing_places(&d, g))
            .take(64)
        {
            missing_path_dirs.push((d, dirs.clone()));
        }
    }
    // Relative `PATH` entries of the home's shell start-up files (atk22d
    // F9): a host shell in a writable root (the project) searches them
    // there. Not reserved either (npm makes `node_modules/.bin`).
    let mut changed_path_dirs: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    let roots = writable_roots(g);
    for rel in &host.home_mentions.relative_path {
        for w in roots.iter().take(16) {
            let d = crate::policy::config::normalize(&w.join(rel));
            let places = missing_places(&w.join(rel), g);
            if !places.is_empty() {
                missing_path_dirs.extend(places.into_iter().map(|p| (p, dirs.clone())));
            } else if g.writable(&d).is_some() && d.is_dir() {
                changed_path_dirs.push((d, dirs.clone()));
            }
        }
    }
    // A writable grant that is itself a `PATH` directory (`$PNPM_HOME`,
    // `~/tools/bin`, granted for global installs; attack atk24k F11): the
    // user let the run install programs there, not shadow the ones the
    // host finds later on `PATH`.
    for (i, d) in dirs.iter().enumerate().take(1000) {
        let Some(real) = crate::policy::canonical::canonical_lossy(d) else {
            continue;
        };
        if g.writable(&real).is_some_and(|w| w == real)
            && real.is_dir()
            && !changed_path_dirs.iter().any(|(p, _)| *p == real)
        {
            changed_path_dirs.push((real, dirs[i + 1..].to_vec()));
        }
    }
    // The same entries below the top (and the caller's own relative
    // entries): looked for by a walk after the run.
    let mut relative_path = host.home_mentions.relative_path.clone();
    if let Some(p) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&p).take(1000) {
            let s = d.to_string_lossy();
            if !d.is_absolute() && !s.starts_with('~') {
                let e = if s.is_empty() {
                    ".".to_string()
                } else {
                    s.into_owned()
                };
                if !relative_path.contains(&e) && relative_path.len() < 64 {
                    relative_path.push(e);
                }
            }
        }
    }
    let path_later = if relative_path.is_empty() {
        Vec::new()
    } else {
        dirs.iter()
            .filter(|d| g.writable(d).is_none())
            .cloned()
            .collect()
    };
    let other_tops = if policy.protect_persistence {
        roots
            .iter()
            .filter(|r| **r != policy.workspace && g.writable(r).is_some_and(|w| w == **r))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    AfterRun {
        other_tops,
        vet_roots: roots,
        quarantine_home,
        link_guards,
        missing_path_dirs,
        changed_path_dirs,
        relative_path,
        path_later,
        path_configured: host.configured_programs.clone(),
        hooks_rel: crate::protect::git::git_vet::global_relative_hooks(host.home.as_deref()),
        own_files: Vec::new(),
    }
}

/// A `PATH` directory missing before the run, inside a writable grant.
pub(super) fn missing_in_grant(d: &std::path::Path, g: &Granted) -> bool {
    !missing_places(d, g).is_empty()
}

/// Where the kernel will find the missing `PATH` directory `d`, the
/// places inside a writable grant
/// ([`crate::protect::path_forms::missing_forms`]).
fn missing_places(d: &std::path::Path, g: &Granted) -> Vec<PathBuf> {
    crate::protect::path_forms::missing_forms(d)
        .into_iter()
        .filter(|p| g.writable(p).is_some())
        .collect()
}

fn writable_roots(g: &Granted) -> Vec<PathBuf> {
    g.binds
        .iter()
        .filter(|(_, a, src)| *a == Access::ReadWrite || src.ends_with(super::trusted::DEMOTED))
        .map(|(p, _, _)| p.clone())
        .collect()
}
