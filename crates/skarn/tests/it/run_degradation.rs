//! `skarn run`: the report and `--json` describe the run; a layer that
//! cannot be enforced is reported, `--fail-closed` refuses, and
//! `--no-sandbox` is loud.

use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn report_and_json_describe_the_run() {
    let t = TempDir::new("report");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(
        ws.join("skarn.toml"),
        "[run]\nread = [\"/srv\"]\ntimeout = 77\n",
    )
    .unwrap();
    let o = Command::new(exe())
        .args(["run", "--json", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let line = err(&o).lines().last().unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["backend"], "linux");
    assert_eq!(v["status"], "FullyEnforced");
    let limits = v["limits"].as_array().unwrap();
    let timeout = limits.iter().find(|l| l["name"] == "timeout").unwrap();
    assert_eq!(timeout["value"], "77 s");
    assert!(
        timeout["source"]
            .as_str()
            .unwrap()
            .ends_with("skarn.toml:3:11"),
        "{timeout}"
    );
    let o = Command::new(exe())
        .args(["run", "--report", "--timeout", "5", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    let e = err(&o);
    assert!(
        e.contains("status=FullyEnforced") && e.contains("(from --timeout)"),
        "{e}"
    );
    // A config error names file:line:column and exits 2.
    std::fs::write(ws.join("skarn.toml"), "[run]\nnet = \"sometimes\"\n").unwrap();
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("skarn.toml:2:7"), "{}", err(&o));
}

#[test]
fn degradation_is_reported_and_fail_closed_refuses() {
    let t = TempDir::new("degrade");
    let (ws, home, outside) = (t.dir("ws"), t.dir("home"), t.dir("outside"));
    let run = |missing: &str, flags: &[&str], cmd: &[&str]| {
        Command::new(exe())
            .args(["run", "--no-config", "--json", "--workspace"])
            .arg(&ws)
            .args(flags)
            .arg("--")
            .args(cmd)
            .env("HOME", &home)
            .env("SKARN_SANDBOX_SIMULATE_MISSING", missing)
            .output()
            .unwrap()
    };
    // Nothing left: refuse.
    let o = run("namespaces,landlock", &[], &["true"]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("refusing"), "{}", err(&o));
    // ... unless fail-open, which says NotEnforced.
    let o = run("namespaces,landlock", &["--fail-open"], &["true"]);
    assert!(err(&o).contains("NotEnforced"), "{}", err(&o));
    // Landlock only (no namespaces): still no write outside, no secret read.
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "DEGRADED-SECRET").unwrap();
    std::fs::write(home.join("notes"), "fine").unwrap();
    let target = outside.join("x");
    let h = home.to_str().unwrap();
    let o = run(
        "namespaces",
        &["--read", h],
        &[
            "sh",
            "-c",
            &format!(
                "echo x > {}; cat {h}/.ssh/id_rsa; cat {h}/notes",
                target.display()
            ),
        ],
    );
    assert!(!target.exists());
    assert!(!out(&o).contains("DEGRADED-SECRET"));
    assert!(out(&o).contains("fine"), "{}", err(&o));
    assert!(err(&o).contains("PartiallyEnforced"), "{}", err(&o));
    // Missing Landlock scopes are a note; missing seccomp refuses (attack
    // atk24i F4) unless failing open, where it is a note too.
    let o = run("landlock-scope", &[], &["true"]);
    assert!(
        err(&o).contains("PartiallyEnforced") && err(&o).contains("ABI 5"),
        "{}",
        err(&o)
    );
    let o = run("seccomp", &[], &["true"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("refusing") && err(&o).contains("seccomp"),
        "{}",
        err(&o)
    );
    let o = run("seccomp,landlock-scope", &["--fail-open"], &["true"]);
    let e = err(&o);
    assert!(
        e.contains("PartiallyEnforced") && e.contains("seccomp unavailable") && e.contains("ABI 5"),
        "{e}"
    );
}

#[test]
fn no_sandbox_is_loud() {
    let t = TempDir::new("nosb");
    let o = Command::new(exe())
        .args(["run", "--no-config", "--no-sandbox", "--workspace"])
        .arg(t.path())
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 3);
    assert!(err(&o).contains("UNCONFINED"));
}
