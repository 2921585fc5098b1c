//! Host shapes shared by the plan tests.

use std::path::PathBuf;

use skarn_sandbox::HostFacts;

/// An unprivileged caller (uid 1000, home /home/u) with user namespaces,
/// Landlock ABI 7, seccomp, no writable cgroup, owning the workspace.
pub fn nonroot() -> HostFacts {
    HostFacts {
        uid: 1000,
        gid: 1000,
        home: Some(PathBuf::from("/home/u")),
        landlock_abi: 7,
        namespaces: true,
        needs_userns: true,
        seccomp: true,
        cgroup_pids: None,
        cgroup_memory: None,
        arch: "x86_64".into(),
        secret_aliases: vec![],
        owner_only: vec![],
        owner_only_truncated: false,
        idmap_dirs: vec![],
        idmap_unavailable: None,
        workspace_owner: Some(1000),
        home_entries: vec![],
        trusted: vec![],
        trusted_unfinished: vec![],
        empty_when_missing: vec![],
        trusted_unresolved: vec![],
        config_notes: vec![],
        home_like_workspace: None,
        home_mentions: Default::default(),
        configured_programs: Vec::new(),
        startup_relative: Vec::new(),
        workspace_dot_entries: vec![],
        pending_edits: vec![],
        home_real: None,
        passwd_home: None,
    }
}
