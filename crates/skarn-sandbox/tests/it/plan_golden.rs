//! The whole plan for several host shapes, against reviewed golden files
//! (`tests/golden/plan_<shape>.json`; re-bless with `SKARN_BLESS=1` after
//! reviewing the change). The plan is final before the helper runs, so
//! each file shows what a run on such a host does, including the plan it
//! falls back to when namespaces fail at run time.

use std::ffi::OsString;
use std::path::PathBuf;

use skarn_sandbox::{Grant, HostFacts, Policy, plan};

/// An unprivileged caller with user namespaces, Landlock ABI 7, seccomp,
/// no writable cgroup.
fn nonroot() -> HostFacts {
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
        home_real: None,
        passwd_home: None,
    }
}

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
    let path = format!(
        "{}/tests/golden/plan_{shape}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var_os("SKARN_BLESS").is_some() {
        std::fs::write(&path, &got).expect("bless");
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
        let at = g
            .iter()
            .zip(&w)
            .position(|(a, b)| a != b)
            .unwrap_or(g.len().min(w.len()));
        panic!(
            "plan for {shape} changed at line {} (got {} lines, golden {}): got {:?}, golden {:?}; \
             review and re-bless with SKARN_BLESS=1",
            at + 1,
            g.len(),
            w.len(),
            g.get(at),
            w.get(at)
        );
    }
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
