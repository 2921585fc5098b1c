//! The paths never readable on macOS for a policy: the default secrets
//! (Linux and macOS lists) and the policy's `deny_read` grants. Used by the
//! host facts (which look up every name of each) and the profile.

use std::path::{Path, PathBuf};

use super::services::{MAC_HOME_SECRET_PATHS, MAC_SYSTEM_SECRET_PATHS};
use crate::policy::{Policy, default_secret_paths};

/// Every path never readable for `policy`: the default secrets (Linux and
/// macOS lists) and the policy's `deny_read` grants under both names.
pub fn secret_paths(policy: &Policy, home: Option<&Path>) -> Vec<PathBuf> {
    let mut v = default_secret_paths(home);
    v.extend(MAC_SYSTEM_SECRET_PATHS.iter().map(PathBuf::from));
    if let Some(h) = home {
        v.extend(MAC_HOME_SECRET_PATHS.iter().map(|p| h.join(p)));
    }
    for g in &policy.deny_read {
        v.push(g.path.clone());
        v.extend(g.alias.clone());
    }
    dedup(v)
}

fn dedup(mut v: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|p| seen.insert(p.clone()));
    v
}
