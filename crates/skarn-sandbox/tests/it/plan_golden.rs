//! The whole plan for several host shapes, against reviewed golden files
//! (`tests/golden/plan_<shape>.json`; re-bless with `SKARN_BLESS=1` after
//! reviewing the change). The plan is final before the helper runs, so
//! each file shows what a run on such a host does, including the plan it
//! falls back to when namespaces fail at run time.

use std::ffi::OsString;
use std::path::PathBuf;

use skarn_sandbox::{Grant, HostFacts, Policy, plan};

use super::hosts::nonroot;

/// Root, no user namespace needed.
fn root(cgroups: bool) -> HostFacts {
    HostFacts {
        uid: 0,
        gid: 0,
        home: Some(PathBuf::from("/root")),
        needs_userns: false,
        workspace_owner: Some(0),
        owner_only: vec!["/etc/ssl/private".into()],
        cgroup_pids: cgroups.then(|| PathBuf::from("/sys/fs/cgroup")),
        cgroup_memory: cgroups.then(|| PathBuf::from("/sys/fs/cgroup")),
        ..nonroot()
    }
}

fn policy(home: &str) -> Policy {
    let mut p = Policy::new(format!("{home}/proj"));
    p.read.push(Grant::new(home, "--read"));
    p.exec
        .push(Grant::new(format!("{home}/.cargo/bin"), "preset rust"));
    p.deny_read
        .push(Grant::new(format!("{home}/proj/.env"), "--deny-read"));
    p.limits.memory_mb = Some(512);
    p.limits.max_procs = Some(256);
    p.limits.timeout_secs = Some(60);
    p
}

fn argv() -> Vec<OsString> {
    vec!["make".into(), "test".into()]
}

/// Compare with the golden file; on a difference, name the first
/// differing line only (the files are long).
fn check(shape: &str, host: &HostFacts, home: &str) {
    let p = plan(&policy(home), host, &argv()).expect("plans");
    let got = serde_json::to_string_pretty(&p).expect("serialises");
    super::golden::assert_golden(
        &format!("plan_{shape}.json"),
        &got,
        &format!("plan for {shape}"),
    );
    // Pure: same inputs, same plan.
    assert_eq!(p, plan(&policy(home), host, &argv()).expect("plans"));
}

#[test]
fn nonroot_landlock_7() {
    check("nonroot_abi7", &nonroot(), "/home/u");
}

#[test]
fn nonroot_older_landlock_abis() {
    for abi in [3, 5, 6] {
        let h = HostFacts {
            landlock_abi: abi,
            ..nonroot()
        };
        check(&format!("nonroot_abi{abi}"), &h, "/home/u");
    }
}

#[test]
fn nonroot_without_user_namespaces() {
    let h = HostFacts {
        namespaces: false,
        ..nonroot()
    };
    check("nonroot_no_userns", &h, "/home/u");
}

#[test]
fn root_with_and_without_cgroups() {
    check("root_cgroups", &root(true), "/root");
    check("root_no_cgroups", &root(false), "/root");
}
