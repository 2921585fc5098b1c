//! Secret paths under the Windows profile: the paths the plan looks at,
//! and deny-all ACEs where a grant would reach a secret.

use super::super::acl_plan::{AceType, AclBuilder, Rights};
use super::super::host_facts::WindowsHostFacts;
use super::super::winpath;
use super::roots::{Root, s};
use crate::policy::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS, Policy};
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};
use crate::report::GrantReport;

/// Credential stores under the Windows profile, beyond [`HOME_SECRET_PATHS`]
/// (which are also looked for under the profile).
pub const WINDOWS_HOME_SECRET_PATHS: &[&str] = &[
    "AppData\\Roaming\\gcloud",
    "AppData\\Roaming\\GitHub CLI",
    "AppData\\Roaming\\npm\\etc\\npmrc",
    "AppData\\Roaming\\Microsoft\\Credentials",
    "AppData\\Local\\Microsoft\\Credentials",
    "AppData\\Roaming\\Microsoft\\Protect",
    "AppData\\Roaming\\Microsoft\\Crypto",
    "AppData\\Roaming\\Microsoft\\SystemCertificates",
    "AppData\\Local\\Google\\Chrome\\User Data",
    "AppData\\Local\\Microsoft\\Edge\\User Data",
    "AppData\\Roaming\\Mozilla\\Firefox\\Profiles",
    "AppData\\Roaming\\rclone",
    "AppData\\Roaming\\Code\\User\\globalStorage",
    "AppData\\Local\\skarn",
];

/// Secret paths for a profile directory (Unix-style names converted).
pub fn secret_paths(home: &str) -> Vec<String> {
    HOME_SECRET_PATHS
        .iter()
        .chain(WINDOWS_HOME_SECRET_PATHS)
        .map(|r| winpath::join(home, r))
        .collect()
}

/// Paths whose existence the plan depends on ([`WindowsHostFacts::probe`]
/// stats exactly these).
pub fn candidates(policy: &Policy, home: Option<&str>) -> Vec<String> {
    let ws = s(&policy.workspace);
    let mut v: Vec<String> = ENTRIES
        .iter()
        .chain(GIT_DIR_ENTRIES)
        .map(|e| winpath::join(&ws, e.path))
        .collect();
    for e in ENTRIES {
        if let Reserve::IfAny(fam) = e.reserve {
            v.extend(fam.iter().map(|f| winpath::join(&ws, f)));
        }
    }
    v.push(winpath::join(&ws, ".git"));
    if let Some(h) = home {
        v.extend(secret_paths(h));
        v.extend(HOME_PERSISTENCE_PATHS.iter().map(|r| winpath::join(h, r)));
    }
    v.extend(policy.deny_read.iter().map(|g| s(&g.path)));
    v.sort();
    v.dedup();
    v
}

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
