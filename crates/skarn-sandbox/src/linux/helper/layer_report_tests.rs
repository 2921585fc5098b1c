use std::path::PathBuf;

use super::*;
use crate::linux::host::HostFacts;
use crate::policy::{NetPolicy, Policy};

fn host(uid: u32, namespaces: bool, abi: u32, seccomp: bool, cgroups: bool) -> HostFacts {
    HostFacts {
        uid,
        gid: uid,
        home: Some(PathBuf::from("/home/u")),
        landlock_abi: abi,
        namespaces,
        needs_userns: uid != 0,
        seccomp,
        cgroup_pids: cgroups.then(|| PathBuf::from("/sys/fs/cgroup")),
        cgroup_memory: cgroups.then(|| PathBuf::from("/sys/fs/cgroup")),
        arch: "x86_64".into(),
        secret_aliases: vec![],
        owner_only: vec![],
        owner_only_truncated: false,
        idmap_dirs: vec![],
        idmap_unavailable: None,
        workspace_owner: Some(uid),
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

fn plan_for(h: &HostFacts, net: NetPolicy) -> Plan {
    let mut p = Policy::new("/home/u/proj");
    p.net = net;
    // A host with nothing to enforce, or without seccomp, is planned only
    // when failing open.
    p.fail_closed = (h.namespaces || h.landlock_abi > 0) && h.seccomp;
    crate::linux::plan::plan(&p, h, &["true".into()]).expect("plans")
}

fn layers(v: &[Enforcement]) -> Vec<Layer> {
    v.iter().map(|e| e.layer).collect()
}

#[test]
fn nothing_reported_is_never_in_force() {
    let p = plan_for(&host(1000, true, 6, true, false), NetPolicy::DenyAll);
    let all = complete(&p, Vec::new());
    assert!(!all.is_empty());
    assert!(
        all.iter().all(|e| e.status == Status::NotEnforced),
        "{all:?}"
    );
    assert!(
        all.iter().all(|e| e.detail == NOT_REPORTED),
        "planned layers nobody reported: {all:?}"
    );
    // Non-root without a writable cgroup: no cgroup entry at all.
    assert!(!layers(&all).contains(&Layer::Cgroup));
}

#[test]
fn reported_layers_are_kept_in_report_order_last_word_wins() {
    let p = plan_for(&host(0, true, 6, true, true), NetPolicy::DenyAll);
    let got = complete(
        &p,
        vec![
            Enforcement::full(Layer::Seccomp, "deny-list"),
            Enforcement::full(Layer::Namespaces, "new pid"),
            Enforcement::full(Layer::Cgroup, "pids.max 1024"),
            Enforcement::partial(Layer::Cgroup, "init could not join"),
        ],
    );
    assert_eq!(got[0].layer, Layer::Namespaces);
    assert_eq!(got[0].status, Status::FullyEnforced);
    let cg = got
        .iter()
        .find(|e| e.layer == Layer::Cgroup)
        .expect("cgroup");
    assert_eq!(cg.status, Status::PartiallyEnforced);
    let order = layers(&got);
    assert!(
        order.iter().position(|l| *l == Layer::Cgroup)
            < order.iter().position(|l| *l == Layer::Seccomp)
    );
    assert_eq!(order.len(), ORDER.len(), "one entry per layer: {got:?}");
}

#[test]
fn a_host_without_mechanisms_says_why_each_is_missing() {
    let p = plan_for(&host(1000, false, 0, false, false), NetPolicy::AllowAll);
    let got = complete(&p, Vec::new());
    let why = |l: Layer| {
        got.iter()
            .find(|e| e.layer == l)
            .map(|e| e.detail.clone())
            .unwrap_or_default()
    };
    assert!(why(Layer::Mounts).starts_with("no mount namespace"));
    assert_eq!(why(Layer::Landlock), "unavailable on this host");
    assert_eq!(why(Layer::Seccomp), "unavailable on this host");
}

#[test]
fn namespaces_name_what_was_made() {
    let p = plan_for(&host(1000, true, 6, true, false), NetPolicy::DenyAll);
    let e = namespaces(&p);
    assert_eq!(e.status, Status::FullyEnforced);
    assert_eq!(e.detail, "new user, pid, net, ipc, uts");
    let without = crate::linux::plan::idmap::without_namespaces(&host(1000, true, 6, true, false));
    let f = namespaces(&plan_for(&without, NetPolicy::DenyAll));
    assert_eq!(f.status, Status::NotEnforced);
}

#[test]
fn network_entries_follow_the_namespace_and_the_filters_in_force() {
    let h = host(1000, true, 6, true, false);
    let e = network_in_namespace(&plan_for(&h, NetPolicy::AllowLoopback));
    assert_eq!(e.detail, "private network namespace, only lo up");
    let e = network_in_namespace(&plan_for(&h, NetPolicy::DenyAll));
    assert!(e.detail.starts_with("empty network namespace"));

    let out = plan_for(&h, NetPolicy::AllowOutbound);
    let e = network_on_host(&out, Some(Status::FullyEnforced), true);
    assert_eq!(e.status, Status::PartiallyEnforced);
    assert!(
        e.detail
            .contains("listen(2) refused by seccomp, TCP binds by Landlock")
    );
    // Filters not installed: nothing is claimed for them.
    let e = network_on_host(&out, None, false);
    assert_eq!(e.status, Status::NotEnforced);

    let all = plan_for(&h, NetPolicy::AllowAll);
    assert_eq!(
        network_on_host(&all, None, true).status,
        Status::FullyEnforced
    );
    let bare = crate::linux::plan::idmap::without_namespaces(&h);
    let deny = plan_for(&bare, NetPolicy::DenyAll);
    let e = network_on_host(&deny, Some(Status::FullyEnforced), true);
    assert!(e.detail.contains("refused by seccomp"), "{e:?}");
}

#[test]
fn rlimits_name_each_value_and_each_refusal() {
    let set = [
        (Rlimit::Core, 0),
        (Rlimit::Fsize, 4 << 30),
        (Rlimit::Nproc, 64),
    ];
    let e = rlimits(&set, &[]);
    assert_eq!(e.status, Status::FullyEnforced);
    assert_eq!(e.detail, "core 0, fsize 4096 MiB, nproc 64");
    let e = rlimits(&set, &[Rlimit::Nproc]);
    assert_eq!(e.status, Status::PartiallyEnforced);
    assert!(e.detail.ends_with("NOT set: Nproc"), "{}", e.detail);
    let e = rlimits(&set[..1], &[Rlimit::Core]);
    assert_eq!(e.status, Status::NotEnforced);
}
