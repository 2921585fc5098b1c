//! Persistence paths of the Windows plan: deny-write ACEs on those that
//! exist (and deny-delete on the directories between the workspace and
//! them), placeholders for missing ones reserved as on Linux, and git files
//! removed after the run if created.

use super::acl_plan::{AceType, AclBuilder, Inheritance, PathKind, Placeholder, Rights};
use super::grant_root::Root;
use super::host_facts::WindowsHostFacts;
use super::winpath;
use crate::policy::HOME_PERSISTENCE_PATHS;
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};
use crate::report::GrantReport;

/// Protect one existing path (deny write, and deny delete on the
/// directories between its writable root and it) or reserve a missing one.
#[allow(clippy::too_many_arguments)]
pub(super) fn persistence(
    facts: &WindowsHostFacts,
    ws: &str,
    rs: &[Root],
    b: &mut AclBuilder,
    grants: &mut Vec<GrantReport>,
    notes: &mut Vec<String>,
    gaps: &mut Vec<String>,
) {
    let is_home = facts.home.as_deref().is_some_and(|h| winpath::same(h, ws));
    let present = |rel: &str| facts.kind(&winpath::join(ws, rel)).is_some();
    let mut protect = |path: &str, root: &str, reserve: bool, why: &str, b: &mut AclBuilder| {
        match facts.kind(path) {
            Some(k) => {
                b.add(path, AceType::Deny, Rights::Write, k.whole(), why);
                grants.push(GrantReport {
                    path: path.into(),
                    access: "read-only (persistence)".into(),
                    source: why.into(),
                });
            }
            None if reserve => {
                b.placeholders.push(Placeholder {
                    path: path.into(),
                    why: why.into(),
                });
                b.add(
                    path,
                    AceType::Deny,
                    Rights::All,
                    Inheritance::ThisAndChildren,
                    why,
                );
                grants.push(GrantReport {
                    path: path.into(),
                    access: "reserved (persistence)".into(),
                    source: why.into(),
                });
            }
            None => return,
        }
        for d in winpath::between(root, path) {
            b.add(
                &d,
                AceType::Deny,
                Rights::Delete,
                Inheritance::ThisOnly,
                "holds a persistence path",
            );
        }
    };
    for e in ENTRIES {
        let reserve = match e.reserve {
            Reserve::Always => true,
            Reserve::IfHome => is_home,
            Reserve::IfAny(fam) => fam.iter().any(|f| present(f)),
            Reserve::Never => false,
        };
        protect(&winpath::join(ws, e.path), ws, reserve, e.reason, b);
    }
    let git = winpath::join(ws, ".git");
    match facts.kind(&git) {
        Some(PathKind::Dir) => {
            for e in GIT_DIR_ENTRIES {
                let path = winpath::join(ws, e.path);
                let reserve = matches!(e.reserve, Reserve::Always);
                if !reserve && facts.kind(&path).is_none() {
                    b.remove_after.push(Placeholder {
                        path: path.clone(),
                        why: e.reason.into(),
                    });
                }
                protect(&path, ws, reserve, e.reason, b);
            }
            b.add(
                &git,
                AceType::Deny,
                Rights::Delete,
                Inheritance::ThisOnly,
                "the git directory",
            );
            gaps.push(
                "git's effective configuration is not read on Windows: a core.hooksPath that \
                 already points into the workspace outside .git leaves those hooks writable"
                    .into(),
            );
        }
        Some(PathKind::File) => {
            protect(&git, ws, false, "names the git directory", b);
            notes.push(
                ".git is a file: the git directory it names is writable only if a grant covers it"
                    .into(),
            );
        }
        None => {
            protect(
                &git,
                ws,
                true,
                "a new .git would be trusted by git on the host",
                b,
            );
            notes.push("no .git: `git init` at the workspace root fails inside the sandbox".into());
        }
    }
    // The profile's own persistence paths, when a writable grant reaches them.
    if let Some(h) = &facts.home {
        for rel in HOME_PERSISTENCE_PATHS {
            let p = winpath::join(h, rel);
            if let Some(root) = rs
                .iter()
                .find(|r| r.writable && winpath::is_under(&p, &r.path))
            {
                protect(
                    &p,
                    &root.path.clone(),
                    false,
                    "runs or is trusted by host programs",
                    b,
                );
            }
        }
    }
}
