use std::collections::BTreeMap;

use skarn_confine::{Enforcement, Layer};

use crate::policy::provenance::Provenance;
use crate::policy::{Grant, NetPolicy, Policy};
use crate::report::report_provenance::for_report;
use crate::report::{Backend, GrantReport, LimitReport, RestrictionReport, Status};

fn grant(path: &str, access: &str, source: &str) -> GrantReport {
    GrantReport {
        path: path.into(),
        access: access.into(),
        source: source.into(),
    }
}

fn limit(name: &str, value: &str, source: &str) -> LimitReport {
    LimitReport {
        name: name.into(),
        value: value.into(),
        mechanism: "RLIMIT_X".into(),
        source: source.into(),
    }
}

/// A report as `skarn run` makes it for a workspace `/ws` whose
/// `skarn.toml` sets `net` and `timeout`, with `--read /opt/x` and
/// `--no-private-home` on the command line.
fn sample() -> RestrictionReport {
    let mut policy = Policy::new("/ws");
    policy.net = NetPolicy::AllowLoopback;
    policy.private_home = false;
    policy.limits.timeout_secs = Some(30);
    policy.read.push(Grant::new("/opt/x", "--read"));
    policy.allow_env = vec!["A_TOKEN".into(), "B_TOKEN".into()];
    let mut prov = Provenance::default();
    prov.set("workspace", "the current directory");
    prov.set("net", "/ws/skarn.toml:2:7");
    prov.set("timeout", "/ws/skarn.toml:3:11");
    prov.set("private_home", "--no-private-home");
    prov.set(
        "allow_env.A_TOKEN",
        "/home/u/.config/skarn/config.toml:1:14",
    );
    prov.set(
        "allow_env.B_TOKEN",
        "/home/u/.config/skarn/config.toml:1:14",
    );
    RestrictionReport {
        backend: Backend::Linux,
        status: Status::FullyEnforced,
        notes: vec!["a note".into()],
        net: "loopback (/ws/skarn.toml:2:7)".into(),
        grants: vec![
            grant("/usr", "read+exec", "default (system)"),
            grant("/bin", "read+exec", "default (system)"),
            grant("/opt/x", "read", "--read"),
            grant("/ws", "read-write", "workspace: the current directory"),
            grant("/h/.ssh", "deny", "default (secret)"),
            grant("/h/.aws", "deny", "default (secret)"),
        ],
        limits: vec![
            limit("timeout", "30 s", "/ws/skarn.toml:3:11"),
            limit("memory", "8192 MiB", "default"),
        ],
        removed_env: vec!["GITHUB_TOKEN".into()],
        landlock_abi: 6,
        egress: None,
        provenance: for_report(&policy, &prov),
        layers: vec![
            Enforcement::full(Layer::Namespaces, "new user, pid, net, ipc, uts"),
            Enforcement::partial(Layer::Landlock, "ABI 5: not enforced: scopes (needs ABI 6)"),
            Enforcement::not_enforced(Layer::Seccomp, "unavailable on this host"),
        ],
        workspace_changes: None,
    }
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

#[test]
fn values_from_a_layer_say_where_they_came_from() {
    let t = sample().render_text();
    assert!(
        t.starts_with("skarn: sandbox report: backend=linux status=FullyEnforced landlock_abi=6\n")
    );
    assert_eq!(
        line_with(&t, "net:"),
        "  net: loopback (from ./skarn.toml:2:7)"
    );
    let read = line_with(&t, "/opt/x");
    assert!(read.ends_with("/opt/x  (from --read)"), "{read}");
    let timeout = line_with(&t, "limit timeout");
    assert!(timeout.ends_with("(from ./skarn.toml:3:11)"), "{timeout}");
    assert_eq!(
        line_with(&t, "private_home"),
        "  set   private_home=false  (from --no-private-home)"
    );
    assert_eq!(
        line_with(&t, "allow_env"),
        "  set   allow_env A_TOKEN B_TOKEN  (from ~/.config/skarn/config.toml:1:14)"
    );
}

#[test]
fn defaults_stay_short() {
    let t = sample().render_text();
    // Defaults carry no "from"; same access and source share one line.
    assert!(!t.contains("from default"), "{t}");
    let memory = line_with(&t, "limit memory");
    assert!(memory.ends_with("via RLIMIT_X"), "{memory}");
    let system = line_with(&t, "/usr");
    assert!(system.contains("/usr /bin  (default: system)"), "{system}");
    assert!(t.contains("deny  2 default secret paths (never readable): /h/.ssh /h/.aws"));
    // Settings nobody changed are not listed.
    assert!(!t.contains("set   fail_closed"), "{t}");
    assert!(!t.contains("set   memory"), "{t}");
    // The user's grants come before the defaults.
    let at = |needle: &str| t.find(needle).unwrap_or(usize::MAX);
    assert!(at("/opt/x") < at("/usr"), "{t}");
}

#[test]
fn each_layer_is_one_line_with_its_status() {
    let t = sample().render_text();
    let ns = line_with(&t, "layer namespaces");
    assert!(ns.contains("enforced") && ns.ends_with("new user, pid, net, ipc, uts"));
    assert!(line_with(&t, "layer landlock").contains(" partial "));
    assert!(line_with(&t, "layer seccomp").ends_with("NOT enforced unavailable on this host"));
    assert_eq!(t.lines().filter(|l| l.starts_with("  layer ")).count(), 3);
}

#[test]
fn a_report_without_provenance_keeps_its_net_text() {
    let mut r = sample();
    r.provenance = BTreeMap::new();
    let t = r.render_text();
    assert_eq!(
        line_with(&t, "net:"),
        "  net: loopback (/ws/skarn.toml:2:7)"
    );
    assert!(!t.contains("  set "), "{t}");
}

#[test]
fn json_carries_provenance_and_layers_under_stable_names() {
    let v = serde_json::to_value(sample()).expect("serialises");
    let p = &v["provenance"];
    assert_eq!(p["net"]["origin"], "workspace_config");
    assert_eq!(p["net"]["source"], "/ws/skarn.toml:2:7");
    assert_eq!(p["net"]["value"], "loopback");
    assert_eq!(p["timeout"]["origin"], "workspace_config");
    assert_eq!(p["private_home"]["origin"], "flag");
    assert_eq!(p["private_home"]["value"], "false");
    assert_eq!(p["memory"]["origin"], "default");
    assert_eq!(p["allow_env.A_TOKEN"]["origin"], "user_config");
    assert_eq!(p["read./opt/x"]["origin"], "flag");
    assert_eq!(p["workspace"]["origin"], "default");
    assert_eq!(v["layers"][0]["layer"], "namespaces");
    assert_eq!(v["layers"][0]["status"], "FullyEnforced");
    assert_eq!(v["layers"][1]["status"], "PartiallyEnforced");
    assert_eq!(v["layers"][2]["detail"], "unavailable on this host");
    // Round trip: the helper reads the report back from the plan.
    let back: RestrictionReport = serde_json::from_value(v).expect("parses");
    assert_eq!(back, sample());
}

#[test]
fn a_bare_plan_report_has_neither_field() {
    let mut r = sample();
    r.provenance.clear();
    r.layers.clear();
    let v = serde_json::to_value(r).expect("serialises");
    assert!(v.get("provenance").is_none());
    assert!(v.get("layers").is_none());
}
