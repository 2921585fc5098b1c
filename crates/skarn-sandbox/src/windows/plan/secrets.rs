//! Secret paths under the Windows profile: the paths the plan looks at,
//! and deny-all ACEs where a grant would reach a secret.

use super::super::acl_plan::{AceType, AclBuilder, Rights};
use super::super::host_facts::WindowsHostFacts;
use super::super::secret_places::secret_paths;
use super::super::winpath;
use super::roots::{Root, s};
use crate::policy::Policy;
use crate::report::GrantReport;

/// Every secret path with its source: the profile's defaults, then the
/// policy's `deny_read`.
pub(super) fn with_sources(policy: &Policy, facts: &WindowsHostFacts) -> Vec<(String, String)> {
    facts
        .home
        .as_deref()
        .map(secret_paths)
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p, "default (secret)".to_string()))
        .chain(
            policy
                .deny_read
                .iter()
                .map(|g| (s(&g.path), g.source.clone())),
        )
        .collect()
}

/// Drop each grant that lies inside a secret (the secret wins).
pub(super) fn drop_grants_inside(
    rs: &mut Vec<Root>,
    secrets: &[(String, String)],
    notes: &mut Vec<String>,
) {
    rs.retain(|r| {
        let inside = secrets.iter().find(|(p, _)| winpath::is_under(&r.path, p));
        if let Some((p, _)) = inside {
            notes.push(format!(
                "grant {} ({}) lies inside secret path {p}: not granted",
                r.path, r.source
            ));
        }
        inside.is_none()
    });
}

/// Deny-all ACEs on the secrets a grant would reach; elsewhere they stay
/// unreadable because no ACE names the container.
pub(super) fn deny_where_granted(
    secrets: &[(String, String)],
    facts: &WindowsHostFacts,
    rs: &[Root],
    b: &mut AclBuilder,
    grants: &mut Vec<GrantReport>,
    notes: &mut Vec<String>,
) {
    let granted = |p: &str| rs.iter().any(|r| winpath::is_under(p, &r.path));
    let writable = |p: &str| {
        rs.iter()
            .any(|r| r.writable && winpath::is_under(p, &r.path))
    };
    let mut outside = 0usize;
    for (p, source) in secrets {
        match facts.kind(p) {
            Some(k) if granted(p) => {
                b.add(p, AceType::Deny, Rights::All, k.whole(), source);
                grants.push(GrantReport {
                    path: p.clone(),
                    access: "deny".into(),
                    source: source.clone(),
                });
            }
            None if writable(p) && source != "default (secret)" => {
                notes.push(format!(
                    "deny-read {p} ({source}) does not exist and lies in a writable grant: \
                     the command may create it"
                ));
            }
            _ => outside += 1,
        }
    }
    if outside > 0 {
        notes.push(format!(
            "{outside} secret path(s) lie outside every grant or do not exist: no ACE is added; \
             they are unreadable as long as their ACLs name neither the container nor ALL \
             APPLICATION PACKAGES (profile folders grant only the user, SYSTEM and \
             Administrators by default)"
        ));
    }
}
