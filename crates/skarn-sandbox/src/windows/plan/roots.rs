//! The container's grants: the workspace and the policy's grants as ACL
//! roots, refused when relative, a drive or share root, or a writable
//! system directory, then turned into allow ACEs.

use super::super::acl_plan::{AceType, AclBuilder, Inheritance, Rights};
use super::super::host_facts::WindowsHostFacts;
use super::super::winpath;
use super::WindowsPlanError;
use crate::policy::Policy;
use crate::report::GrantReport;

/// Directories under the system drive that every later program trusts;
/// never made writable.
pub const SYSTEM_DIRS: &[&str] = &[
    "Windows",
    "Program Files",
    "Program Files (x86)",
    "ProgramData",
];

pub(super) fn s(p: &std::path::Path) -> String {
    winpath::normalize(&p.to_string_lossy())
}

pub(in crate::windows) use super::super::grant_root::Root;

pub(super) fn from_policy(policy: &Policy, notes: &mut Vec<String>) -> Vec<Root> {
    let mut out = vec![Root {
        path: s(&policy.workspace),
        access: "read-write",
        source: policy
            .sources
            .get("workspace")
            .cloned()
            .unwrap_or_else(|| "workspace".into()),
        writable: true,
    }];
    let mut push = |list: &[crate::policy::Grant], access, writable| {
        for g in list {
            out.push(Root {
                path: s(&g.path),
                access,
                source: g.source.clone(),
                writable,
            });
        }
    };
    push(&policy.write, "read-write", true);
    push(&policy.read, "read", false);
    push(&policy.exec, "read+exec", false);
    if !policy.overlay.is_empty() {
        notes.push(
            "private copy-on-write layers are Linux-only: toolchain caches are readable, \
             not writable, on Windows"
                .into(),
        );
    }
    push(&policy.overlay, "read", false);
    out
}

pub(super) fn check_paths(
    policy: &Policy,
    facts: &WindowsHostFacts,
    rs: &[Root],
) -> Result<(), WindowsPlanError> {
    for r in rs {
        if !winpath::is_absolute(&r.path) {
            return Err(WindowsPlanError::RelativePath(r.path.clone()));
        }
        if winpath::is_root(&r.path) {
            return Err(WindowsPlanError::RootGrant(r.path.clone()));
        }
        if r.writable
            && let Some(d) = &facts.system_drive
        {
            for sys in SYSTEM_DIRS {
                let sd = winpath::join(d, sys);
                if winpath::is_under(&r.path, &sd) || winpath::is_under(&sd, &r.path) {
                    return Err(WindowsPlanError::SystemWrite(r.path.clone()));
                }
            }
        }
    }
    let ws = &rs[0].path;
    if let Some(h) = &facts.home
        && winpath::is_under(h, ws)
        && !policy.allow_home_workspace
    {
        return Err(WindowsPlanError::HomeWorkspace(ws.clone()));
    }
    Ok(())
}

/// An allow ACE (and a line of the report) for each root.
pub(super) fn grant(rs: &[Root], b: &mut AclBuilder, grants: &mut Vec<GrantReport>) {
    for r in rs {
        if r.writable {
            b.writable_root(&r.path, &r.source);
        } else {
            let rights = if r.access == "read" {
                Rights::Read
            } else {
                Rights::ReadExecute
            };
            b.add(
                &r.path,
                AceType::Allow,
                rights,
                Inheritance::ThisAndChildren,
                &r.source,
            );
        }
        grants.push(GrantReport {
            path: r.path.clone(),
            access: r.access.into(),
            source: r.source.clone(),
        });
    }
}
