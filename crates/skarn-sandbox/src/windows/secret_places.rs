//! The Windows profile's secret places and the paths whose existence the
//! plan depends on (a leaf: the host facts stat them, the plan uses them).

use super::winpath;
use crate::policy::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS, Policy};
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};

fn s(p: &std::path::Path) -> String {
    winpath::normalize(&p.to_string_lossy())
}

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

/// Paths whose existence the plan depends on ([`super::host_facts::WindowsHostFacts::probe`]
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
