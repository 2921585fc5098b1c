//! The macOS Seatbelt profile generator: golden files for several
//! policies (re-bless with SKARN_BLESS=1 after reviewing the diff) and
//! properties every profile must have. Pure: runs on every OS.

use std::path::{Path, PathBuf};

use skarn_sandbox::macos::{MacFacts, ProfileError, profile, report};
use skarn_sandbox::{Grant, HostList, NetPolicy, Policy, Status};

const HOME: &str = "/Users/alice";
const WS: &str = "/Users/alice/src/proj";
const TEMP: &str = "/private/var/folders/ab/xyz123/T/skarn-run-1";

fn facts() -> MacFacts {
    MacFacts::fixed(Some(Path::new(HOME)), Path::new(TEMP))
}

fn golden(name: &str, policy: &Policy, facts: &MacFacts) -> String {
    let got = profile(policy, facts).unwrap();
    super::golden::assert_golden(
        &format!("macos_{name}.sb"),
        &got,
        &format!("profile {name}"),
    );
    // Same inputs, same output.
    assert_eq!(got, profile(policy, facts).unwrap());
    got
}

#[test]
fn golden_default_deny() {
    let p = Policy::new(WS);
    let s = golden("default", &p, &facts());
    assert!(s.starts_with("(version 1)\n"));
    assert!(s.contains("(deny default)"));
    assert!(!s.contains("(remote ip"), "no IP rule with --net deny");
    assert!(!s.contains("trustd"), "no network daemons with --net deny");
}

#[test]
fn golden_loopback_with_grants() {
    let mut p = Policy::new(WS);
    p.net = NetPolicy::AllowLoopback;
    p.write
        .push(Grant::new("/Users/alice/.cache/proj-build", "--write"));
    p.read.push(Grant::new("/Users/alice/docs", "--read"));
    p.deny_read
        .push(Grant::new(format!("{WS}/.env"), "--deny-read"));
    let s = golden("loopback_grants", &p, &facts());
    assert!(s.contains("(remote ip \"localhost:*\")"));
    assert!(!s.contains("(remote ip \"*:*\")"));
    assert!(s.contains("(subpath \"/Users/alice/.cache/proj-build\")"));
}

#[test]
fn golden_outbound_with_git_layout() {
    let mut p = Policy::new(WS);
    p.net = NetPolicy::AllowOutbound;
    let mut f = facts();
    f.present.insert("lefthook.yml".into());
    f.present.insert(".git/commondir".into());
    f.git_guards.push(PathBuf::from(format!("{WS}/.githooks")));
    f.secret_link_targets
        .push(PathBuf::from("/Users/alice/dotfiles/id_rsa"));
    f.home_alias = Some(PathBuf::from("/Volumes/Home/alice"));
    let s = golden("outbound_git", &p, &f);
    assert!(s.contains("(remote ip \"*:*\")"));
    assert!(!s.contains("network-bind network-inbound (local ip \"*:*\")"));
    assert!(s.contains("com.apple.trustd.agent"));
    // A lefthook file, present, reserves its whole family.
    assert!(s.contains("/Users/alice/src/proj/.lefthook-local.yaml\""));
    assert!(s.contains("/Users/alice/src/proj/.githooks\""));
    assert!(s.contains("/Users/alice/dotfiles/id_rsa\""));
    assert!(s.contains("(subpath \"/Volumes/Home/alice/.ssh\")"));
}

#[test]
fn golden_allow_hosts_through_the_proxy() {
    let mut p = Policy::new(WS);
    p.net = NetPolicy::AllowHosts(HostList {
        allow: vec!["example.com".into()],
        ..Default::default()
    });
    let mut f = facts();
    f.proxy_ports = Some((40001, 40002));
    let s = golden("allow_hosts", &p, &f);
    assert!(s.contains(
        "(allow network-outbound (remote ip \"localhost:40001\") (remote ip \"localhost:40002\"))"
    ));
    assert!(!s.contains("(remote ip \"*:*\")"));
    assert!(!s.contains("localhost:*"));
    // Without a proxy: nothing, and the report says so.
    f.proxy_ports = None;
    let s = profile(&p, &f).unwrap();
    assert!(!s.contains("(remote ip"));
    let r = report(&p, &f);
    assert!(r.notes.iter().any(|n| n.contains("treated as deny")));
}

#[test]
fn golden_all_in_home_workspace() {
    let mut p = Policy::new(HOME);
    p.net = NetPolicy::AllowAll;
    assert_eq!(
        profile(&p, &facts()),
        Err(ProfileError::HomeWorkspace(PathBuf::from(HOME)))
    );
    p.allow_home_workspace = true;
    let s = golden("all_home", &p, &facts());
    // Shell start-up files and the home's persistence paths are protected.
    for want in [
        "/Users/alice/.zshrc\"",
        "/Users/alice/.gitconfig\"",
        "/Users/alice/.config\"",
    ] {
        assert!(s.contains(want), "{want}");
    }
}

/// The part of the profile after `marker`, up to the closing parenthesis
/// of the rule it opens.
fn rule<'a>(s: &'a str, marker: &str) -> &'a str {
    let at = s.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let rest = &s[at..];
    &rest[..rest.find("\n)\n").unwrap_or(rest.len())]
}

#[test]
fn secrets_are_denied_under_every_name_after_the_read_allow() {
    let s = profile(&Policy::new(WS), &facts()).unwrap();
    let allow = s.find("(allow file-read*").unwrap();
    let deny = s.find("(deny file-read* file-write* file-link").unwrap();
    assert!(deny > allow, "the deny must come last to win");
    let secrets = rule(&s, "(deny file-read* file-write* file-link");
    for name in [
        "(subpath \"/Users/alice/.ssh\")",
        "(subpath \"/System/Volumes/Data/Users/alice/.ssh\")",
        "(subpath \"/Users/alice/.aws\")",
        "(subpath \"/Users/alice/Library/Keychains\")",
        "(subpath \"/etc/ssh\")",
        "(subpath \"/private/etc/ssh\")",
        "(subpath \"/System/Volumes/Data/private/etc/ssh\")",
        "[Ss][Ss][Hh](/.*)?$\")",
    ] {
        assert!(secrets.contains(name), "{name}");
    }
}

#[test]
fn persistence_paths_and_their_ancestors_are_pinned() {
    let s = profile(&Policy::new(WS), &facts()).unwrap();
    let writes = rule(&s, "(deny file-write* file-link\n");
    for p in [
        ".git/hooks",
        ".git/config",
        ".envrc",
        ".vscode",
        "skarn.toml",
    ] {
        assert!(writes.contains(&format!("(subpath \"{WS}/{p}\")")), "{p}");
    }
    // Missing lefthook files are not reserved when none exists.
    assert!(!writes.contains("lefthook.yml"));
    // Shell start-up files only when the workspace is the home.
    assert!(!writes.contains(".zshrc"));
    let unlink = rule(&s, "(deny file-write-unlink\n");
    for p in [WS.to_string(), format!("{WS}/.git"), TEMP.to_string()] {
        assert!(unlink.contains(&format!("(literal \"{p}\")")), "{p}");
    }
    assert!(unlink.contains("(literal \"/var/folders/ab/xyz123/T/skarn-run-1\")"));
    // Nothing outside the writable roots needs pinning (not writable).
    assert!(!unlink.contains("(literal \"/Users/alice\")"));
}

#[test]
fn writes_only_to_writable_roots() {
    let s = profile(&Policy::new(WS), &facts()).unwrap();
    let writes = rule(&s, "(allow file-write* file-link file-clone\n");
    let subpaths: Vec<&str> = writes
        .lines()
        .filter_map(|l| l.trim().strip_prefix("(subpath \""))
        .collect();
    for sp in &subpaths {
        let p = sp.trim_end_matches("\")");
        let ok = [WS, TEMP, "/var/folders/ab/xyz123/T/skarn-run-1"]
            .iter()
            .any(|r| p.ends_with(r));
        assert!(ok, "unexpected writable {p}");
    }
    assert!(!s.contains("(allow file-write*)"));
    assert!(!s.contains("(allow network*)"));
}

#[test]
fn unexpressible_paths_are_refused() {
    let mut p = Policy::new(WS);
    p.deny_read
        .push(Grant::new("/Users/alice/[secret]", "--deny-read"));
    assert!(matches!(
        profile(&p, &facts()),
        Err(ProfileError::Path { .. })
    ));
    let p = Policy::new("/Users/alice/pro\nj");
    assert!(matches!(
        profile(&p, &facts()),
        Err(ProfileError::Path { .. })
    ));
    // Quotes are escaped, not refused.
    let p = Policy::new("/Users/alice/my \"proj\"");
    let s = profile(&p, &facts()).unwrap();
    assert!(s.contains(r#"(subpath "/Users/alice/my \"proj\"")"#));
}

#[test]
fn system_directories_are_never_writable() {
    for w in [
        "/usr/local/bin",
        "/",
        "/Library/LaunchDaemons",
        "/private/etc",
    ] {
        let mut p = Policy::new(WS);
        p.write.push(Grant::new(w, "--write"));
        assert!(
            matches!(profile(&p, &facts()), Err(ProfileError::SystemWrite(_))),
            "{w}"
        );
    }
}

#[test]
fn report_says_reads_are_coarse() {
    let p = Policy::new(WS);
    let r = report(&p, &facts());
    assert_eq!(r.status, Status::PartiallyEnforced);
    assert!(r.notes.iter().any(|n| n.starts_with("reads: coarse")));
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("RLIMIT") || n.contains("memory"))
    );
    assert!(
        r.grants
            .iter()
            .any(|g| g.access == "deny" && g.path.ends_with(".ssh"))
    );
    assert!(r.render_text().contains("backend=seatbelt"));
    let mut p = Policy::new(WS);
    p.net = NetPolicy::AllowLoopback;
    let r = report(&p, &facts());
    assert!(r.notes.iter().any(|n| n.contains("host's")));
}
