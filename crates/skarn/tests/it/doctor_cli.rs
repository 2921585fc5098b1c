//! `skarn doctor`: findings and the real escape self-test.

use std::process::Command;

use crate::common::*;

#[test]
fn doctor_reports_mechanisms_as_text_and_json() {
    let o = Command::new(exe())
        .env("XDG_STATE_HOME", crate::common::state_home())
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = out(&o);
    for needle in [
        "backend: linux",
        "landlock: ",
        "seccomp-bpf: ",
        "user namespaces: ",
        "net namespace",
        "loopback: ",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    // A fully enforced default policy lists nothing as degraded: its notes
    // (how a protection is carried out) are notes.
    if s.contains("status of the default policy: FullyEnforced") {
        let degraded: Vec<&str> = s.lines().filter(|l| l.starts_with("degraded: ")).collect();
        assert_eq!(degraded, ["degraded: nothing"], "{s}");
    }
    let o = Command::new(exe())
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "linux");
    assert!(v["landlock_abi"].as_u64().is_some());
    assert_eq!(v["net_policies"].as_array().unwrap().len(), 5);
}

#[test]
fn self_test_blocks_every_escape() {
    let o = Command::new(exe())
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--self-test", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", err(&o)));
    let results = v["self_test"].as_array().unwrap();
    assert!(results.len() >= 15);
    for r in results {
        assert_eq!(r["escaped"], false, "{r}");
    }
    assert_eq!(code(&o), 0);
    let o = Command::new(exe())
        .env("XDG_STATE_HOME", crate::common::state_home())
        .args(["doctor", "--self-test"])
        .output()
        .unwrap();
    assert!(out(&o).contains("0 escaped"), "{}", out(&o));
    assert!(out(&o).contains(", 0 broken"), "{}", out(&o));
    assert!(!out(&o).contains("ESCAPED "), "{}", out(&o));
    // A usability check says whether the thing works, never "blocked".
    let proxy = out(&o)
        .lines()
        .find(|l| l.contains("allowed host reachable through the proxy"))
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(proxy.trim_start().starts_with("works "), "{}", out(&o));
}
