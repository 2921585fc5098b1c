//! `plan()` is a pure function of (Policy, HostFacts, argv): checked on its
//! whole output for a fixed host, and on how it degrades on weaker hosts.

use std::ffi::OsString;
use std::path::PathBuf;

use skarn_sandbox::linux::plan::{FsOp, LandlockAccess, PlanError};
use skarn_sandbox::{Grant, HostFacts, NetPolicy, Policy, Status, plan};

fn host() -> HostFacts {
    HostFacts {
        workspace_owner: None,
        ..super::hosts::nonroot()
    }
}

fn policy() -> Policy {
    let mut p = Policy::new("/home/u/proj");
    p.read.push(Grant::new("/home/u", "--read"));
    p.write.push(Grant::new("/home/u/proj/sub", "--write"));
    p.exec
        .push(Grant::new("/home/u/.cargo/bin", "preset rust (detected)"));
    p.deny_read
        .push(Grant::new("/home/u/proj/.env", "--deny-read"));
    p
}

fn argv() -> Vec<OsString> {
    vec!["cargo".into(), "test".into()]
}

#[test]
fn whole_plan_matches_the_reviewed_golden_file() {
    let p = plan(&policy(), &host(), &argv()).unwrap();
    let got = serde_json::to_string_pretty(&p).unwrap();
    super::golden::assert_golden("plan_default.json", &got, "plan");
    // Same inputs, same output.
    assert_eq!(p, plan(&policy(), &host(), &argv()).unwrap());
}

#[test]
fn plan_invariants() {
    let p = plan(&policy(), &host(), &argv()).unwrap();
    assert!(p.ns.user && p.ns.mount && p.ns.pid && p.ns.net && p.ns.ipc && p.ns.uts);
    assert_eq!(p.report.status, Status::FullyEnforced);
    // Secrets under the granted home are masked; the deny-read file too.
    for (s, reserve) in [
        ("/home/u/.ssh", false),
        ("/home/u/.aws", false),
        ("/home/u/.cargo/credentials.toml", false),
        // Under the writable workspace: reserved when missing.
        ("/home/u/proj/.env", true),
    ] {
        assert!(
            p.fs.contains(&FsOp::Mask {
                path: s.into(),
                reserve,
                pin: None,
            }),
            "{s} not masked"
        );
    }
    // Binds are ordered shallow-first so nested grants land on top.
    let binds: Vec<&PathBuf> =
        p.fs.iter()
            .filter_map(|o| match o {
                FsOp::Bind { path, .. } => Some(path),
                _ => None,
            })
            .collect();
    let pos = |x: &str| {
        binds
            .iter()
            .position(|b| b.as_path() == std::path::Path::new(x))
            .unwrap()
    };
    assert!(pos("/home/u") < pos("/home/u/proj") && pos("/home/u/proj") < pos("/home/u/proj/sub"));
    // /proc, /dev and /tmp come before the binds (a workspace under /tmp stays visible).
    let first_bind =
        p.fs.iter()
            .position(|o| matches!(o, FsOp::Bind { .. }))
            .unwrap();
    assert!(p.fs[..first_bind].contains(&FsOp::Tmp));
    // Persistence paths are protected.
    assert!(p.fs.contains(&FsOp::Protect {
        path: "/home/u/proj/.git/hooks".into(),
        reserve: true,
        reserve_if: vec![]
    }));
    assert!(p.fs.contains(&FsOp::Protect {
        path: "/home/u/proj/.bashrc".into(),
        reserve: false,
        reserve_if: vec![]
    }));
    // A tool's configuration is reserved only when the project uses it.
    assert!(p.fs.iter().any(
        |o| matches!(o, FsOp::Protect { path, reserve: false, reserve_if }
        if path.ends_with("lefthook-local.yml")
            && reserve_if.iter().any(|r| r.ends_with("lefthook.yml")))
    ));
    let mut home_ws = policy();
    home_ws.workspace = "/home/u".into();
    assert_eq!(
        plan(&home_ws, &host(), &argv()).unwrap_err(),
        PlanError::HomeWorkspace("/home/u".into())
    );
    home_ws.allow_home_workspace = true;
    let p2 = plan(&home_ws, &host(), &argv()).unwrap();
    assert!(p2.fs.contains(&FsOp::Protect {
        path: "/home/u/.bashrc".into(),
        reserve: true,
        reserve_if: vec![]
    }));
    let ll = p.landlock.as_ref().unwrap();
    assert!(ll.scope_signal && ll.scope_abstract_unix);
    assert!(
        !ll.deny_tcp_bind && !ll.deny_tcp_connect,
        "netns does the job"
    );
    assert!(
        ll.rules
            .iter()
            .any(|r| r.path == std::path::Path::new("/home/u/proj")
                && r.access == LandlockAccess::ReadWrite)
    );
}

#[test]
fn granting_a_secret_directly_is_dropped() {
    let mut pol = policy();
    pol.read.push(Grant::new("/home/u/.ssh", "--read"));
    let p = plan(&pol, &host(), &argv()).unwrap();
    assert!(!p.fs.contains(&FsOp::Bind {
        path: "/home/u/.ssh".into(),
        access: skarn_sandbox::linux::plan::Access::Read
    }));
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| n.contains("/home/u/.ssh") && n.contains("secret"))
    );
}

#[test]
fn net_policies_map_to_mechanisms() {
    for (net, netns, bind, connect, lo, listen) in [
        (NetPolicy::DenyAll, true, false, false, false, false),
        (NetPolicy::AllowLoopback, true, false, false, true, false),
        (NetPolicy::AllowOutbound, false, true, false, false, true),
        (NetPolicy::AllowAll, false, false, false, false, false),
        (
            NetPolicy::parse("allow:example.com").unwrap(),
            true,
            false,
            false,
            true,
            false,
        ),
    ] {
        let mut pol = policy();
        pol.net = net.clone();
        let p = plan(&pol, &host(), &argv()).unwrap();
        assert_eq!(p.ns.net, netns, "{net:?}");
        assert_eq!(p.loopback_up, lo, "{net:?}");
        let ll = p.landlock.unwrap();
        assert_eq!(
            (ll.deny_tcp_bind, ll.deny_tcp_connect),
            (bind, connect),
            "{net:?}"
        );
        assert_eq!(p.seccomp.unwrap().deny_listen, listen, "{net:?}");
        assert!(ll.scope_abstract_unix);
    }
}

#[test]
fn weaker_hosts_degrade_with_one_note_per_gap() {
    let mut h = host();
    h.namespaces = false;
    let p = plan(&policy(), &h, &argv()).unwrap();
    assert_eq!(p.report.status, Status::PartiallyEnforced);
    assert!(p.fs.is_empty() && !p.ns.net && p.host_tmp.is_some());
    let ll = p.landlock.as_ref().unwrap();
    assert!(ll.deny_tcp_bind && ll.deny_tcp_connect);
    assert!(ll.secrets.contains(&PathBuf::from("/home/u/.ssh")));
    assert!(p.seccomp.unwrap().deny_inet_sockets);
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| n.contains("namespaces unavailable"))
    );
    assert!(p.report.notes.iter().any(|n| n.contains("persistence")));

    let mut h = host();
    h.landlock_abi = 5;
    let p = plan(&policy(), &h, &argv()).unwrap();
    assert_eq!(p.report.status, Status::PartiallyEnforced);
    assert!(p.report.notes.iter().any(|n| n.contains("ABI 5 < 6")));

    let mut h = host();
    h.namespaces = false;
    h.landlock_abi = 0;
    assert!(matches!(
        plan(&policy(), &h, &argv()),
        Err(PlanError::CannotEnforce(_))
    ));
    let mut pol = policy();
    pol.fail_closed = false;
    assert_eq!(
        plan(&pol, &h, &argv()).unwrap().report.status,
        Status::NotEnforced
    );

    // Root without a pids cgroup cannot bound processes: said so.
    let mut h = host();
    h.uid = 0;
    h.needs_userns = false;
    let p = plan(&policy(), &h, &argv()).unwrap();
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| n.contains("max_procs not enforced"))
    );
}

#[test]
fn bad_policies_are_rejected() {
    let mut pol = policy();
    pol.read.push(Grant::new("relative/path", "--read"));
    assert!(matches!(
        plan(&pol, &host(), &argv()),
        Err(PlanError::RelativePath(_))
    ));
    assert!(matches!(
        plan(&policy(), &host(), &[]),
        Err(PlanError::NoCommand)
    ));
}

#[test]
fn workspace_holding_home_is_fully_protected() {
    let mut pol = Policy::new("/home");
    assert!(matches!(
        plan(&pol, &host(), &argv()),
        Err(PlanError::HomeWorkspace(_))
    ));
    pol.allow_home_workspace = true;
    let p = plan(&pol, &host(), &argv()).unwrap();
    // Secrets that may not exist are reserved; persistence paths too.
    for s in ["/home/u/.ssh", "/home/u/.config/skarn", "/home/u/.npmrc"] {
        assert!(
            p.fs.contains(&FsOp::Mask {
                path: s.into(),
                reserve: true,
                pin: None,
            }),
            "{s}"
        );
    }
    for s in [
        "/home/u/.gitconfig",
        "/home/u/.bashrc",
        "/home/u/.local/bin",
    ] {
        assert!(
            p.fs.contains(&FsOp::Protect {
                path: s.into(),
                reserve: true,
                reserve_if: vec![],
            }),
            "{s}"
        );
    }
    // Their ancestors inside the workspace cannot be renamed.
    for d in ["/home/u", "/home/u/.config", "/home/u/.local"] {
        assert!(p.fs.contains(&FsOp::Pin { path: d.into() }), "{d}");
    }
    assert!(!p.fs.iter().any(|o| matches!(o, FsOp::Home { .. })));
}

#[test]
fn private_home_and_cache_layers() {
    let mut pol = Policy::new("/home/u/proj");
    pol.overlay
        .push(Grant::new("/home/u/.cargo/registry", "preset rust"));
    pol.exec.push(Grant::new("/home/u/.rustup", "preset rust"));
    let mut g = Grant::new("/data/tools", "--read");
    g.alias = Some("/home/u/tools".into());
    pol.read.push(g);
    pol.home_files
        .push(("/home/u/.gitconfig".into(), "[user]\n".into()));
    let p = plan(&pol, &host(), &argv()).unwrap();
    let home =
        p.fs.iter()
            .position(|o| {
                *o == FsOp::Home {
                    path: "/home/u".into(),
                }
            })
            .expect("private home");
    let first_bind =
        p.fs.iter()
            .position(|o| matches!(o, FsOp::Bind { .. }))
            .unwrap();
    assert!(home < first_bind, "home tmpfs before the grants under it");
    assert!(p.fs.contains(&FsOp::Bind {
        path: "/home/u/.cargo/registry".into(),
        access: skarn_sandbox::linux::plan::Access::Private
    }));
    assert!(p.fs.contains(&FsOp::Symlink {
        path: "/home/u/tools".into(),
        target: "/data/tools".into()
    }));
    assert!(p.fs.contains(&FsOp::File {
        path: "/home/u/.gitconfig".into(),
        contents: "[user]\n".into()
    }));
    // No cache is writable on the host: only the workspace is read-write.
    let rw: Vec<_> = p
        .report
        .grants
        .iter()
        .filter(|g| g.access == "read-write")
        .map(|g| g.path.as_str())
        .collect();
    assert_eq!(rw, ["/home/u/proj"]);
    // Without namespaces the cache layer degrades to read-only, never write.
    let mut weak = host();
    weak.namespaces = false;
    let p = plan(&pol, &weak, &argv()).unwrap();
    assert!(
        p.report
            .grants
            .iter()
            .any(|g| g.path == "/home/u/.cargo/registry" && g.access == "read")
    );
}

#[test]
fn owner_only_files_are_hidden_and_duplicates_merged() {
    let mut h = host();
    h.uid = 0;
    h.owner_only = vec!["/etc/wireguard".into(), "/etc/ssl/private".into()];
    let mut pol = Policy::new("/srv/ws");
    pol.read.push(Grant::new("/srv/ws", "--read"));
    let p = plan(&pol, &h, &argv()).unwrap();
    assert!(p.fs.contains(&FsOp::Mask {
        path: "/etc/wireguard".into(),
        reserve: false,
        pin: None,
    }));
    let ws: Vec<_> = p
        .report
        .grants
        .iter()
        .filter(|g| g.path == "/srv/ws")
        .collect();
    assert_eq!(ws.len(), 1, "one line per path");
    assert_eq!(ws[0].access, "read-write");
}

/// A root host whose system directories can be bound idmapped.
fn root_host() -> HostFacts {
    let mut h = host();
    h.uid = 0;
    h.gid = 0;
    h.home = Some(PathBuf::from("/root"));
    h.needs_userns = false;
    h.cgroup_pids = Some(PathBuf::from("/sys/fs/cgroup/pids"));
    h.idmap_dirs = vec!["/etc".into(), "/opt".into(), "/srv".into()];
    h
}

#[test]
fn root_plan_with_idmapped_system_dirs_matches_the_reviewed_golden_file() {
    let mut pol = Policy::new("/work/proj");
    pol.read.push(Grant::new("/srv/site", "--read"));
    pol.write.push(Grant::new("/opt/app/cache", "--write"));
    let p = plan(&pol, &root_host(), &argv()).unwrap();
    let got = serde_json::to_string_pretty(&p).unwrap();
    super::golden::assert_golden("plan_root_idmap.json", &got, "plan");
    // The system directories holding root's files and the read grant in
    // one are idmapped; the write grant in /opt and /usr are plain binds.
    let idmapped: Vec<&PathBuf> =
        p.fs.iter()
            .filter_map(|o| match o {
                FsOp::IdmapBind { path, .. } => Some(path),
                _ => None,
            })
            .collect();
    assert_eq!(
        idmapped,
        [
            &PathBuf::from("/etc"),
            &PathBuf::from("/opt"),
            &PathBuf::from("/srv/site")
        ]
    );
    assert!(
        p.fs.iter().any(
            |o| matches!(o, FsOp::Bind { path, .. } if path == &PathBuf::from("/opt/app/cache"))
        )
    );
    assert!(p.report.notes.iter().any(|n| n.contains("id mapping")));
    assert!(!p.report.notes.iter().any(|n| n.contains("walk")));
}

#[test]
fn root_without_idmapped_binds_says_the_walk_is_used() {
    let mut h = root_host();
    h.idmap_dirs = vec!["/etc".into()];
    h.idmap_unavailable = Some("idmapped bind of /opt: Invalid argument".into());
    h.owner_only = vec!["/opt/x/key".into()];
    let p = plan(&Policy::new("/work/proj"), &h, &argv()).unwrap();
    assert!(p.fs.contains(&FsOp::Mask {
        path: "/opt/x/key".into(),
        reserve: false,
        pin: None,
    }));
    let note = p.report.notes.iter().find(|n| n.contains("walk")).unwrap();
    assert!(
        note.contains("/opt, /srv") && note.contains("Invalid argument"),
        "{note}"
    );
    // Without a mount namespace an idmapped bind cannot apply: said so.
    let mut h = root_host();
    h.namespaces = false;
    let p = plan(&Policy::new("/work/proj"), &h, &argv()).unwrap();
    assert!(p.report.notes.iter().any(|n| n.contains("are not hidden")));
    assert!(!p.fs.iter().any(|o| matches!(o, FsOp::IdmapBind { .. })));
}

#[test]
fn root_namespace_fallback_hides_the_unwalked_idmapped_dirs_whole() {
    use skarn_sandbox::linux::plan::NsFallback;
    let mut h = root_host();
    h.owner_only = vec![];
    let p = plan(&Policy::new("/work/proj"), &h, &argv()).unwrap();
    let Some(NsFallback::Plan { plan: f }) = &p.ns_fallback else {
        panic!(
            "root plan without a namespace fallback plan: {:?}",
            p.ns_fallback
        );
    };
    assert!(!f.fs.iter().any(|o| matches!(o, FsOp::IdmapBind { .. })));
    // /etc, /opt and /srv were never walked: denied whole, and said so.
    for d in ["/etc", "/opt", "/srv"] {
        assert!(
            f.report
                .grants
                .iter()
                .any(|g| g.path == d && g.access == "deny"),
            "{d} not denied in the fallback"
        );
    }
    assert!(
        f.report
            .notes
            .iter()
            .any(|n| n.contains("not walked, hidden whole")),
        "{:?}",
        f.report.notes
    );
}

#[test]
fn memory_limit_counts_every_mapping() {
    use skarn_sandbox::linux::plan::Rlimit;
    let mut pol = policy();
    pol.limits.memory_mb = Some(64);
    let mib = 1024 * 1024;
    // No memory cgroup (unprivileged): RLIMIT_AS with a margin, plus
    // RLIMIT_DATA, and the report says it is per process.
    let p = plan(&pol, &host(), &argv()).unwrap();
    assert!(p.memory_cgroup.is_none());
    assert!(p.rlimits.contains(&(Rlimit::Data, 64 * mib)));
    assert!(p.rlimits.contains(&(Rlimit::As, (64 + 256) * mib)));
    let m = p.report.limits.iter().find(|l| l.name == "memory").unwrap();
    assert!(
        m.mechanism.starts_with("RLIMIT_AS 320 MiB"),
        "{}",
        m.mechanism
    );
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| n.contains("not across the process tree"))
    );

    // A writable memory cgroup (root): the cgroup, no RLIMIT_AS.
    let mut h = host();
    h.uid = 0;
    h.needs_userns = false;
    h.cgroup_memory = Some(PathBuf::from("/sys/fs/cgroup/memory/x"));
    let p = plan(&pol, &h, &argv()).unwrap();
    let mc = p.memory_cgroup.as_ref().expect("memory cgroup planned");
    assert_eq!(mc.parent, PathBuf::from("/sys/fs/cgroup/memory/x"));
    assert_eq!(mc.bytes, 64 * mib);
    // Its fallback, should the cgroup not be made at run time, is planned.
    assert_eq!(mc.fallback_as, (64 + 256) * mib);
    assert!(!p.rlimits.iter().any(|(r, _)| *r == Rlimit::As));
    assert!(p.rlimits.contains(&(Rlimit::Data, 64 * mib)));
    let m = p.report.limits.iter().find(|l| l.name == "memory").unwrap();
    assert!(m.mechanism.starts_with("memory cgroup"), "{}", m.mechanism);

    // No limit: neither.
    pol.limits.memory_mb = None;
    let p = plan(&pol, &h, &argv()).unwrap();
    assert!(p.memory_cgroup.is_none());
    assert!(
        !p.rlimits
            .iter()
            .any(|(r, _)| matches!(r, Rlimit::As | Rlimit::Data))
    );
}

#[test]
fn write_grants_never_hold_home_or_system_directories() {
    for w in ["/home", "/home/u", "/", "/etc", "/usr/local/bin"] {
        let mut pol = Policy::new("/home/u/proj");
        pol.write.push(Grant::new(w, "--write"));
        let e = plan(&pol, &host(), &argv()).unwrap_err();
        assert!(
            matches!(e, PlanError::HomeWorkspace(_) | PlanError::SystemWrite(_)),
            "{w}: {e}"
        );
    }
    let mut pol = Policy::new("/home/u/proj");
    pol.write.push(Grant::new("/opt/app", "--write"));
    assert!(plan(&pol, &host(), &argv()).is_ok());
    // The password database's home counts as the home too.
    let mut h = host();
    h.passwd_home = Some("/var/lib/u".into());
    assert!(matches!(
        plan(&Policy::new("/var/lib"), &h, &argv()),
        Err(PlanError::HomeWorkspace(_))
    ));
}

#[test]
fn allow_hosts_plans_the_proxy_and_its_variables() {
    let mut pol = policy();
    pol.net = NetPolicy::parse("allow:example.com,*.example.org:8443").unwrap();
    let p = plan(&pol, &host(), &argv()).unwrap();
    let e = p.egress.expect("proxy planned");
    assert_eq!(e.allow, ["example.com", "*.example.org:8443"]);
    let env = |k: &str| {
        p.set_env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(env("HTTPS_PROXY").as_deref(), Some("http://127.0.0.1:3128"));
    assert_eq!(
        env("all_proxy").as_deref(),
        Some("socks5h://127.0.0.1:1080")
    );
    assert!(env("NO_PROXY").unwrap().contains("127.0.0.1"));
    // Without namespaces: no proxy, no network (never the host's).
    let mut h = host();
    h.namespaces = false;
    if let Ok(p) = plan(&pol, &h, &argv()) {
        assert!(p.egress.is_none());
        assert!(p.seccomp.is_some_and(|s| s.deny_inet_sockets));
    }
}
