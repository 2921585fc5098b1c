//! [`WindowsHostFacts`]: what the Windows plan needs to know about the
//! host (home, where the container's folder lies, which candidate paths
//! exist and their kind), gathered once before planning so that
//! [`super::plan::plan`] stays a pure function.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::acl_plan::PathKind;
use super::winpath;
use crate::policy::Policy;

/// Facts about the host for the Windows plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowsHostFacts {
    /// The user's profile directory (`%USERPROFILE%`).
    pub home: Option<String>,
    /// `%LOCALAPPDATA%` (the container's folder lies in `Packages` under it).
    pub local_app_data: Option<String>,
    /// The system drive (`%SystemDrive%`, e.g. `C:`).
    pub system_drive: Option<String>,
    /// Candidate paths that exist, keyed by [`winpath::identity`].
    pub present: BTreeMap<String, PathKind>,
}

impl WindowsHostFacts {
    /// Kind of `p` if it exists.
    pub fn kind(&self, p: &str) -> Option<PathKind> {
        self.present.get(&winpath::identity(p)).copied()
    }

    /// Record that `p` exists (tests and [`Self::probe`]).
    pub fn insert(&mut self, p: &str, kind: PathKind) {
        self.present.insert(winpath::identity(p), kind);
    }

    /// Read the facts from this process's environment and file system.
    pub fn probe(policy: &Policy) -> WindowsHostFacts {
        let var = |n: &str| {
            std::env::var(n)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| winpath::normalize(&v))
        };
        let mut f = WindowsHostFacts {
            home: var("USERPROFILE"),
            local_app_data: var("LOCALAPPDATA"),
            system_drive: var("SystemDrive"),
            present: BTreeMap::new(),
        };
        for c in super::secret_places::candidates(policy, f.home.as_deref()) {
            if let Ok(m) = std::fs::symlink_metadata(&c) {
                let k = if m.is_dir() {
                    PathKind::Dir
                } else {
                    PathKind::File
                };
                f.insert(&c, k);
            }
        }
        f
    }
}
