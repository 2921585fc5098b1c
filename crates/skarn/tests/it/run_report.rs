//! `skarn run --report` / `--json`: where each setting came from (flag,
//! workspace `skarn.toml`, user config, default) and what each
//! confinement layer achieved, as the sandbox reported it at run time.

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use skarn_test_support::TempDir;

/// A workspace whose `skarn.toml` sets `net`, `timeout` and `allow_env`,
/// and a home whose user config sets `memory`.
fn setup() -> TempDir {
    let t = TempDir::new("report");
    t.file(
        "ws/skarn.toml",
        "[run]\nnet = \"loopback\"\ntimeout = 40\nallow_env = [\"MY_TOKEN\"]\n",
    );
    t.file("home/.config/skarn/config.toml", "[run]\nmemory = 512\n");
    t.dir("data");
    crate::common::trust(&t.join("ws/skarn.toml"), &t.join("home"));
    t
}

/// `skarn run <flags> -- <cmd>` from inside the workspace, HOME = home.
fn run(t: &TempDir, flags: &[&str], cmd: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skarn"))
        .arg("run")
        .args(flags)
        .arg("--")
        .args(cmd)
        .current_dir(t.join("ws"))
        .env("HOME", t.join("home"))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `--json` report: the last line on stderr.
fn report(o: &Output) -> Value {
    let e = stderr(o);
    let line = e.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {e}"))
}

/// The layer entry named `name`.
fn layer<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == name)
        .unwrap_or_else(|| panic!("no {name} layer in {}", v["layers"]))
}

fn data_flags(t: &TempDir) -> [String; 4] {
    [
        "--read".into(),
        t.s("data"),
        "--max-procs".into(),
        "100".into(),
    ]
}

/// The `--json` report of `true` run with [`data_flags`].
fn json_with_data_flags(t: &TempDir) -> Value {
    let flags = data_flags(t);
    let mut args = vec!["--json"];
    args.extend(flags.iter().map(String::as_str));
    let o = run(t, &args, &["true"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    report(&o)
}

#[test]
fn json_names_the_layer_that_set_each_value() {
    let t = setup();
    let v = json_with_data_flags(&t);
    let p = &v["provenance"];
    let entry = |k: &str| (p[k]["origin"].clone(), p[k]["source"].clone());
    assert_eq!(p["net"]["origin"], "workspace_config", "{p}");
    assert_eq!(p["net"]["value"], "loopback");
    let net_src = p["net"]["source"].as_str().unwrap();
    let ws_file = t.join("ws").canonicalize().unwrap().join("skarn.toml");
    assert_eq!(net_src, format!("{}:2:7", ws_file.display()));
    assert_eq!(p["timeout"]["origin"], "workspace_config");
    assert_eq!(p["timeout"]["value"], "40 s");
    assert_eq!(p["memory"]["origin"], "user_config", "{p}");
    assert_eq!(p["memory"]["value"], "512 MiB");
    assert_eq!(entry("max_procs"), ("flag".into(), "--max-procs".into()));
    assert_eq!(p["allow_env.MY_TOKEN"]["origin"], "workspace_config");
    for k in [
        "fail_closed",
        "private_home",
        "protect_persistence",
        "max_file_size",
    ] {
        assert_eq!(entry(k), ("default".into(), "default".into()), "{k}");
    }
    let data = t.join("data").canonicalize().unwrap();
    assert_eq!(
        entry(&format!("read.{}", data.display())),
        ("flag".into(), "--read".into())
    );
    // The fields that were there before keep their form.
    assert!(v["net"].as_str().unwrap().starts_with("loopback ("));
}

#[test]
fn json_lists_each_layer_as_the_sandbox_applied_it() {
    let t = setup();
    let v = json_with_data_flags(&t);
    // The target applies these before exec on every Linux host.
    for name in ["rlimits", "no_new_privs", "descriptors", "parent_death"] {
        assert_eq!(layer(&v, name)["status"], "FullyEnforced", "{name}");
    }
    let rl = layer(&v, "rlimits")["detail"].as_str().unwrap();
    assert!(rl.contains("fsize 4096 MiB"), "{rl}");
    for name in [
        "namespaces",
        "mounts",
        "network",
        "capabilities",
        "landlock",
        "seccomp",
    ] {
        let s = layer(&v, name)["status"].as_str().unwrap();
        assert!(
            ["FullyEnforced", "PartiallyEnforced", "NotEnforced"].contains(&s),
            "{name}: {s}"
        );
    }
    if layer(&v, "namespaces")["detail"]
        .as_str()
        .unwrap()
        .contains("net")
    {
        assert_eq!(
            layer(&v, "network")["detail"],
            "private network namespace, only lo up"
        );
    }
    // A fully enforced report has no layer out of force.
    if v["status"] == "FullyEnforced" {
        for l in v["layers"].as_array().unwrap() {
            assert_ne!(l["status"], "NotEnforced", "{l}");
        }
    }
}

#[test]
fn a_mechanism_the_host_lacks_is_reported_out_of_force() {
    let t = setup();
    let o = run(
        &t,
        &["--json", "--no-config", "--fail-open"],
        &["true"],
        &[("SKARN_SANDBOX_SIMULATE_MISSING", "seccomp,landlock")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = report(&o);
    for name in ["seccomp", "landlock"] {
        let l = layer(&v, name);
        assert_eq!(l["status"], "NotEnforced", "{name}");
        assert_eq!(l["detail"], "unavailable on this host", "{name}");
    }
    assert_ne!(v["status"], "FullyEnforced");
    // --no-config: every setting is a default or a flag.
    assert_eq!(v["provenance"]["net"]["origin"], "default");
    assert_eq!(v["provenance"]["fail_closed"]["origin"], "flag");
}

#[test]
fn the_text_report_says_from_where_in_short() {
    let t = setup();
    let flags = data_flags(&t);
    let mut args = vec!["--report", "--no-private-home"];
    args.extend(flags.iter().map(String::as_str));
    let o = run(&t, &args, &["true"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    let line = |needle: &str| -> String {
        e.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{e}"))
            .to_string()
    };
    assert_eq!(line("  net:"), "  net: loopback (from ./skarn.toml:2:7)");
    let data = t.join("data").canonicalize().unwrap();
    assert!(
        line(&format!(" {}", data.display())).ends_with("(from --read)"),
        "{e}"
    );
    assert!(
        line("limit timeout").ends_with("(from ./skarn.toml:3:11)"),
        "{e}"
    );
    assert!(
        line("limit memory").ends_with("(from ~/.config/skarn/config.toml:2:10)"),
        "{e}"
    );
    assert!(
        line("limit max_procs").ends_with("(from --max-procs)"),
        "{e}"
    );
    assert_eq!(
        line("private_home"),
        "  set   private_home=false  (from --no-private-home)"
    );
    assert_eq!(
        line("allow_env"),
        "  set   allow_env MY_TOKEN  (from ./skarn.toml)"
    );
    assert!(line("layer no_new_privs").contains(" enforced "), "{e}");
    // Nothing a default set says "from".
    assert!(!line("limit max_file_size").contains("from"), "{e}");
}
