//! Planning part 3: what stays out of the command's reach inside its
//! grants. Secrets are masked; persistence paths (`.git/hooks`, `.envrc`,
//! the home's start-up files when the workspace holds the home) are kept
//! read-only or reserved; their ancestors inside a writable grant are
//! pinned; the reservation step and the checks after the run are planned.

use std::collections::HashSet;
use std::path::PathBuf;

use super::grants::Granted;
use super::{Access, AfterRun, FsOp, HomeQuarantine, Namespaces, Reservation};
use crate::linux::host::HostFacts;
use crate::policy::{HOME_PERSISTENCE_PATHS, Policy};
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};
use crate::report::{GrantReport, RestrictionReport};

/// The protecting steps, appended after the root steps (with a mount
/// namespace): pins, masks, then protected paths.
pub(super) fn steps(
    policy: &Policy,
    host: &HostFacts,
    g: &Granted,
    ns: Namespaces,
    report: &mut RestrictionReport,
) -> Vec<FsOp> {
    // Secrets under a grant are hidden; under a writable grant, reserved too.
    let masked: Vec<(PathBuf, bool)> = g
        .secrets
        .iter()
        .filter(|(s, _)| g.deciding(s).is_some())
        .map(|(s, _)| (s.clone(), g.writable(s).is_some()))
        .collect();
    // Protected paths (persistence) and masked secrets under writable
    // grants, for pinning their ancestors.
    let mut guarded: Vec<PathBuf> = Vec::new();
    if ns.mount {
        guarded.extend(masked.iter().filter(|(_, r)| *r).map(|(s, _)| s.clone()));
    }
    let mut protects = persistence(policy, host, g, ns, report);
    // The agent's pending edits (ADR 0244): held for every run.
    super::held::hold(&super::held::paths(host, g), ns, &mut protects, report);
    for op in &protects {
        if let FsOp::Protect { path, .. } = op
            && g.writable(path).is_some()
        {
            guarded.push(path.clone());
        }
    }
    let mut fs: Vec<FsOp> = pins(g, &guarded)
        .into_iter()
        .map(|path| FsOp::Pin { path })
        .collect();
    if ns.mount {
        fs.extend(masked.into_iter().map(|(path, reserve)| FsOp::Mask {
            path,
            reserve,
            pin: None,
        }));
    }
    fs.extend(protects);
    fs
}

/// Ancestors of guarded paths inside their writable grant, shallow first:
/// pinned so that no rename can carry a protected path away from where the
/// next run looks for it.
fn pins(g: &Granted, guarded: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for p in guarded {
        let Some(w) = g.writable(p) else { continue };
        let mut a = p.parent();
        while let Some(d) = a {
            if d == w || !d.starts_with(&w) {
                break;
            }
            if !pins.iter().any(|q| q == d) {
                pins.push(d.to_path_buf());
            }
            a = d.parent();
        }
    }
    pins.sort_by_key(|p| p.components().count());
    pins
}

/// The persistence paths to keep read-only (or reserve).
fn persistence(
    policy: &Policy,
    host: &HostFacts,
    g: &Granted,
    ns: Namespaces,
    report: &mut RestrictionReport,
) -> Vec<FsOp> {
    let ws = &policy.workspace;
    let mut protects: Vec<FsOp> = Vec::new();
    if !policy.protect_persistence {
        report.notes.push(
            "persistence paths of the workspace (.envrc, .vscode, ...) are writable and not \
             checked after the run (protect_persistence is off); the repository's hooks and \
             code-running configuration stay protected"
                .into(),
        );
        return protects;
    }
    if !ns.mount {
        report.degrade(
            "persistence paths (.git/hooks, .envrc, ...) are not write-protected: \
             this needs a mount namespace",
        );
        return protects;
    }
    let ws_is_home = g.homes.contains(ws) || host.home_like_workspace.is_some();
    // A workspace made read-only (plan/trusted.rs `demote`) needs no
    // protected paths, and could hold no placeholder.
    let ws_entries = if g.writable(ws).is_some() {
        GIT_DIR_ENTRIES.iter().chain(ENTRIES).collect()
    } else {
        Vec::new()
    };
    for en in ws_entries {
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
    // What the workspace's `.envrc` makes direnv read unchecked
    // (`source_env_if_exists .envrc.local`, `dotenv`, ...): read-only,
    // reserved when missing (inside the workspace only).
    let envrc_path = crate::protect::envrc::path_dirs(&ws.join(".envrc"));
    for p in crate::protect::envrc::sourced(&ws.join(".envrc")) {
        if envrc_path.contains(&p) && missing_in_grant(&p, g) {
            // A missing `PATH_add` directory: made by the tools
            // (`node_modules/.bin`), checked after the run.
            report.notes.push(format!(
                "{} (a PATH directory the workspace's .envrc adds) is missing: the run may \
                 create it; new programs in it named like programs later on PATH are set \
                 aside after the run",
                p.display()
            ));
            continue;
        }
        if p == *ws {
            // More names than the reader keeps: the whole workspace.
            report.notes.push(format!(
                "{}/.envrc names too many files: the workspace is read-only for this run",
                ws.display()
            ));
        }
        if p.starts_with(ws)
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
    // What the workspace's mise configuration makes mise run or load on
    // `cd` (`[env] _.source`, `_.file`, `_.path`, `[hooks]`): the same
    // (attack pass h22b F).
    let mise = crate::protect::mise_env::named(ws, host.home.as_deref());
    for p in mise.files.iter().chain(&mise.path_dirs) {
        if mise.path_dirs.contains(p) && missing_in_grant(p, g) {
            report.notes.push(format!(
                "{} (a PATH directory the workspace's mise configuration adds) is missing: \
                 the run may create it; new programs in it named like programs later on PATH \
                 are set aside after the run",
                p.display()
            ));
            continue;
        }
        if p == ws {
            report.notes.push(format!(
                "{}: the mise configuration names a file skarn cannot place (a template): \
                 the workspace is read-only for this run",
                ws.display()
            ));
        }
        if g.writable(p).is_some()
            && !protects
                .iter()
                .any(|o| matches!(o, FsOp::Protect { path, .. } if path == p))
        {
            protects.push(FsOp::Protect {
                path: p.clone(),
                reserve: true,
                reserve_if: Vec::new(),
            });
        }
    }
    // The files the workspace's protected configuration names (a project
    // hook's script, a server's command, `core.fsmonitor`, a pre-commit
    // `repo: local` entry, ...): run outside any sandbox by the agent's
    // client or a host tool, so the same (attack atk24j F3).
    for (p, _) in crate::protect::config_named::named(ws) {
        if g.writable(&p).is_some()
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
    // Other writable directories: their existing persistence paths, and
    // what their own protected configuration names, as for the workspace
    // (attack atk24l F11: the user's other project granted with --write).
    for (w, a, _) in &g.binds {
        if *a == Access::ReadWrite && w != ws {
            for en in GIT_DIR_ENTRIES.iter().chain(ENTRIES) {
                protects.push(FsOp::Protect {
                    path: w.join(en.path),
                    reserve: false,
                    reserve_if: Vec::new(),
                });
            }
            for p in super::grant_named::named(w, host.home.as_deref(), g) {
                if !protects
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
    }
    // The home's own persistence paths, wherever a grant makes them
    // writable (the workspace holds the home).
    let shell_rc = ENTRIES
        .iter()
        .filter(|en| en.reserve == Reserve::IfHome)
        .map(|en| en.path);
    let home_paths: Vec<&str> = HOME_PERSISTENCE_PATHS
        .iter()
        .copied()
        .chain(shell_rc)
        .collect();
    let mut listed: HashSet<PathBuf> = protects
        .iter()
        .filter_map(|o| match o {
            FsOp::Protect { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    let mut protect_in_home = |p: PathBuf, reserve: bool| {
        if g.writable(&p).is_some() && listed.insert(p.clone()) {
            protects.push(FsOp::Protect {
                path: p,
                reserve,
                reserve_if: Vec::new(),
            });
        }
    };
    for h in &g.homes {
        // Nothing under this home is writable unless a writable grant
        // holds the home or lies inside it.
        let touches_home = g
            .binds
            .iter()
            .any(|(w, a, _)| *a == Access::ReadWrite && (h.starts_with(w) || w.starts_with(h)));
        if !touches_home {
            continue;
        }
        // Every existing top-level dot entry of the home, too: host
        // programs read them (toolchains, caches, configurations).
        for rel in &host.home_entries {
            protect_in_home(h.join(rel), false);
        }
        for rel in &home_paths {
            protect_in_home(h.join(rel), true);
        }
    }
    // A workspace that is not a project (allowed by the user): its
    // existing dot entries stay read-only, as a home's do.
    for rel in &host.workspace_dot_entries {
        protect_in_home(ws.join(rel), false);
    }
    for op in super::trusted::protects(host, g, report) {
        if let FsOp::Protect { path, .. } = &op
            && listed.insert(path.clone())
        {
            protects.push(op);
        }
    }
    // What a protected name of a writable grant leads to through a link
    // (`.git/hooks/pre-commit -> ../../scripts/pre-commit`, `.claude ->
    // cfgdir`, `.npmrc -> config/npmrc`; attack atk24l F5): host programs
    // read it by that name. Reserved when missing (a dangling link).
    for (w, a, _) in &g.binds {
        if *a != Access::ReadWrite {
            continue;
        }
        for (t, _) in crate::protect::linked_targets::of(w) {
            if g.writable(&t).is_some() && listed.insert(t.clone()) {
                let missing = std::fs::symlink_metadata(&t).is_err();
                protects.push(FsOp::Protect {
                    path: t,
                    reserve: missing,
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
    protects
}

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
