//! Planning part 3: what stays out of the command's reach inside its
//! grants. Secrets are masked; persistence paths (`.git/hooks`, `.envrc`,
//! the home's start-up files when the workspace holds the home) are kept
//! read-only or reserved; their ancestors inside a writable grant are
//! pinned; the reservation step and the checks after the run are planned.

use std::collections::HashSet;
use std::path::PathBuf;

use super::grants::Granted;
pub(super) use super::protect_checks::{after_run, missing_in_grant, reservation};
use super::{Access, FsOp, Namespaces, PlanError};
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
) -> Result<Vec<FsOp>, PlanError> {
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
    let mut protects = persistence(policy, host, g, ns, report)?;
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
    Ok(fs)
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
) -> Result<Vec<FsOp>, PlanError> {
    let ws = &policy.workspace;
    let mut protects: Vec<FsOp> = Vec::new();
    if !policy.protect_persistence {
        report.notes.push(
            "persistence paths of the workspace (.envrc, .vscode, ...) are writable and not \
             checked after the run (protect_persistence is off); the repository's hooks and \
             code-running configuration stay protected"
                .into(),
        );
        return Ok(protects);
    }
    if !ns.mount {
        report.degrade(
            "persistence paths (.git/hooks, .envrc, ...) are not write-protected: \
             this needs a mount namespace",
        );
        return Ok(protects);
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
    for op in super::trusted::protects(host, g, report)
        .into_iter()
        .chain(super::mentions::protects(host, g, report))
    {
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
        // More links than are followed: the run is refused, not given a
        // list cut short (attack atk24s F6).
        let targets = crate::protect::linked_targets::of(w).map_err(PlanError::CannotEnforce)?;
        for (t, _) in targets {
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
    Ok(protects)
}
