//! The Windows plan is a pure function of (Policy, WindowsHostFacts, argv,
//! env): checked on its whole output for several policies (golden files,
//! re-bless with SKARN_BLESS=1 after review) and on its invariants. Runs on
//! every OS.

use std::ffi::OsString;

use skarn_sandbox::report::ReportFormat;
use skarn_sandbox::windows::acl_plan::{AceType, Inheritance, PathKind, Rights};
use skarn_sandbox::windows::{WindowsHostFacts, WindowsPlan, WindowsPlanError, plan};
use skarn_sandbox::{Grant, HostList, NetPolicy, Policy, Status};

const WS: &str = "C:\\Users\\u\\proj";

fn host() -> WindowsHostFacts {
    let mut f = WindowsHostFacts {
        home: Some("C:\\Users\\u".into()),
        local_app_data: Some("C:\\Users\\u\\AppData\\Local".into()),
        system_drive: Some("C:".into()),
        ..Default::default()
    };
    for (p, k) in [
        ("C:\\Users\\u\\proj\\.git", PathKind::Dir),
        ("C:\\Users\\u\\proj\\.git\\hooks", PathKind::Dir),
        ("C:\\Users\\u\\proj\\.git\\config", PathKind::File),
        ("C:\\Users\\u\\proj\\.vscode", PathKind::Dir),
        ("C:\\Users\\u\\proj\\.envrc", PathKind::File),
        ("C:\\Users\\u\\proj\\mise.toml", PathKind::File),
        ("C:\\Users\\u\\.ssh", PathKind::Dir),
        ("C:\\Users\\u\\.aws", PathKind::Dir),
        ("C:\\Users\\u\\.gitconfig", PathKind::File),
        ("C:\\Users\\u\\AppData\\Roaming\\gcloud", PathKind::Dir),
        ("C:\\Users\\u\\proj\\.env", PathKind::File),
    ] {
        f.insert(p, k);
    }
    f
}

fn env() -> Vec<(OsString, OsString)> {
    [
        ("PATH", "C:\\Windows\\system32;C:\\Program Files\\Git\\cmd"),
        ("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("TEMP", "C:\\Users\\u\\AppData\\Local\\Temp"),
        ("USERPROFILE", "C:\\Users\\u"),
    ]
    .map(|(k, v)| (k.into(), v.into()))
    .to_vec()
}

fn argv(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn run_plan(p: &Policy) -> WindowsPlan {
    plan(
        p,
        &host(),
        &argv(&["git", "status"]),
        &env(),
        ReportFormat::Text,
    )
    .unwrap()
}

fn golden(name: &str, p: &WindowsPlan) {
    let got = serde_json::to_string_pretty(p).unwrap();
    super::golden::assert_golden(&format!("{name}.json"), &got, name);
}

fn default_policy() -> Policy {
    Policy::new(WS)
}

#[test]
fn golden_default() {
    let p = run_plan(&default_policy());
    golden("windows_default", &p);
    assert_eq!(p, run_plan(&default_policy()), "same inputs, same plan");
}

#[test]
fn golden_grants_and_home_read() {
    let mut pol = default_policy();
    pol.read.push(Grant::new("C:\\Users\\u", "--read"));
    pol.write.push(Grant::new("D:\\scratch", "--write"));
    pol.exec.push(Grant::new(
        "C:\\Users\\u\\.cargo\\bin",
        "preset rust (detected)",
    ));
    pol.deny_read
        .push(Grant::new("C:\\Users\\u\\proj\\.env", "--deny-read"));
    pol.limits.max_file_size_mb = None;
    golden("windows_grants", &run_plan(&pol));
}

#[test]
fn golden_network_policies() {
    for (name, net) in [
        ("windows_net_outbound", NetPolicy::AllowOutbound),
        ("windows_net_loopback", NetPolicy::AllowLoopback),
        ("windows_net_all", NetPolicy::AllowAll),
        (
            "windows_net_hosts",
            NetPolicy::AllowHosts(HostList {
                allow: vec!["example.com".into()],
                ..Default::default()
            }),
        ),
    ] {
        let mut pol = default_policy();
        pol.net = net;
        pol.protect_persistence = false;
        golden(name, &run_plan(&pol));
    }
}

#[test]
fn workspace_is_writable_but_cannot_be_deleted_or_renamed() {
    let p = run_plan(&default_policy());
    let on_ws: Vec<_> = p.acl.iter().filter(|c| c.path == WS).collect();
    assert_eq!(on_ws.len(), 2);
    assert!(on_ws.iter().all(|c| c.ace == AceType::Allow));
    assert!(on_ws.iter().any(|c| c.rights == Rights::ReadWriteExecute
        && c.inheritance == Inheritance::ThisOnly));
    assert!(
        on_ws
            .iter()
            .any(|c| c.rights == Rights::Modify && c.inheritance == Inheritance::ChildrenOnly)
    );
}

#[test]
fn persistence_paths_are_denied_or_reserved() {
    let p = run_plan(&default_policy());
    let deny = |path: &str, r: Rights| {
        p.acl
            .iter()
            .any(|c| c.path == path && c.ace == AceType::Deny && c.rights == r)
    };
    for e in [
        ".git\\hooks",
        ".git\\config",
        ".vscode",
        ".envrc",
        "mise.toml",
    ] {
        assert!(deny(&format!("{WS}\\{e}"), Rights::Write), "{e}");
    }
    // .git cannot be renamed away and replaced.
    assert!(deny(&format!("{WS}\\.git"), Rights::Delete));
    // Missing, always-reserved names get a placeholder nobody inside can touch.
    for e in [".mcp.json", "skarn.toml", ".claude", ".git\\modules"] {
        let path = format!("{WS}\\{e}");
        assert!(p.placeholders.iter().any(|x| x.path == path), "{e}");
        assert!(deny(&path, Rights::All), "{e}");
    }
    // Reserved only with their family / never when missing.
    for e in ["lefthook.yml", ".git\\commondir", ".bashrc"] {
        assert!(!p.placeholders.iter().any(|x| x.path.ends_with(e)), "{e}");
    }
    // Git files an empty placeholder would break are removed after the run
    // if the command created them.
    let after: Vec<_> = p.remove_after.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        after,
        [
            format!("{WS}\\.git\\commondir"),
            format!("{WS}\\.git\\config.worktree")
        ]
    );
    // mise.toml exists, so its family members are reserved.
    assert!(
        p.placeholders
            .iter()
            .any(|x| x.path.ends_with(".tool-versions"))
    );
    // Everything changed is reverted.
    for c in &p.acl {
        assert!(p.revert.contains(&c.path), "{}", c.path);
    }
}

#[test]
fn secrets_denied_only_where_a_grant_reaches() {
    let p = run_plan(&default_policy());
    assert!(!p.acl.iter().any(|c| c.path.contains(".ssh")));
    let mut pol = default_policy();
    pol.read.push(Grant::new("C:\\Users\\u", "--read"));
    let p = run_plan(&pol);
    for s in [
        "C:\\Users\\u\\.ssh",
        "C:\\Users\\u\\.aws",
        "C:\\Users\\u\\AppData\\Roaming\\gcloud",
    ] {
        assert!(
            p.acl.iter().any(|c| c.path == s
                && c.ace == AceType::Deny
                && c.rights == Rights::All
                && c.inheritance == Inheritance::ThisAndChildren),
            "{s}"
        );
    }
    // Missing secrets get nothing (nothing to read).
    assert!(!p.acl.iter().any(|c| c.path.ends_with(".kube")));
}

#[test]
fn network_capabilities() {
    let caps = |n: NetPolicy| {
        let mut pol = default_policy();
        pol.net = n;
        run_plan(&pol)
            .capabilities
            .into_iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
    };
    assert!(caps(NetPolicy::DenyAll).is_empty());
    assert!(caps(NetPolicy::AllowLoopback).is_empty());
    assert!(caps(NetPolicy::AllowHosts(HostList::default())).is_empty());
    assert_eq!(caps(NetPolicy::AllowOutbound), ["internetClient"]);
    let mut pol = default_policy();
    pol.net = NetPolicy::AllowLoopback;
    assert!(
        run_plan(&pol)
            .report
            .notes
            .iter()
            .any(|n| n.contains("treated as deny-all"))
    );
}

#[test]
fn job_env_and_report() {
    let p = run_plan(&default_policy());
    assert!(p.job.kill_on_job_close && !p.job.breakaway_allowed);
    assert_eq!(p.job.process_memory_mb, Some(8192));
    assert_eq!(p.job.active_processes, Some(1024));
    assert!(p.process.suspended_until_in_job);
    assert_eq!(p.report.removed_env, ["GITHUB_TOKEN"]);
    assert!(!p.process.env.iter().any(|(k, _)| k == "GITHUB_TOKEN"));
    let temp =
        "C:\\Users\\u\\AppData\\Local\\Packages\\".to_string() + &p.profile.name + "\\AC\\Temp";
    assert!(p.process.env.contains(&("TEMP".into(), temp)));
    assert_eq!(p.report.status, Status::PartiallyEnforced);
    assert!(p.report.render_text().contains("backend=appcontainer"));
}

#[test]
fn refusals_are_clear_errors() {
    let err = |pol: &Policy, a: &[&str]| {
        plan(pol, &host(), &argv(a), &env(), ReportFormat::None).unwrap_err()
    };
    let mut pol = default_policy();
    pol.read.push(Grant::new("C:\\", "--read"));
    assert!(matches!(err(&pol, &["x"]), WindowsPlanError::RootGrant(_)));
    let mut pol = default_policy();
    pol.write
        .push(Grant::new("C:\\Program Files\\x", "--write"));
    assert!(matches!(
        err(&pol, &["x"]),
        WindowsPlanError::SystemWrite(_)
    ));
    let pol = Policy::new("C:\\Users\\u");
    assert!(matches!(
        err(&pol, &["x"]),
        WindowsPlanError::HomeWorkspace(_)
    ));
    let mut pol = default_policy();
    pol.workspace = "proj".into();
    assert!(matches!(
        err(&pol, &["x"]),
        WindowsPlanError::RelativePath(_)
    ));
    assert!(matches!(
        err(&default_policy(), &["npm.cmd"]),
        WindowsPlanError::BatchFile(_)
    ));
    assert!(matches!(
        err(&default_policy(), &[]),
        WindowsPlanError::EmptyCommand
    ));
    let mut pol = default_policy();
    pol.cwd = Some("C:\\elsewhere".into());
    assert!(matches!(err(&pol, &["x"]), WindowsPlanError::CwdOutside(_)));
}
