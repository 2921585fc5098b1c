//! `skarn run --net deny` (the default) tells package tools they are
//! offline (their own settings), so they fail at once with their own
//! message instead of retrying for a minute; with any network (loopback
//! included: a registry the command serves itself) they are not told.

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn tools_are_told_only_when_nothing_outside_is_reachable() {
    let t = TempDir::new("offline_env");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let show = "echo \"npm=$npm_config_offline cargo=$CARGO_NET_OFFLINE pip=$PIP_NO_INDEX uv=$UV_OFFLINE go=$GOPROXY\"";
    for flags in [&[][..], &["--net", "deny"][..]] {
        let o = run_in(&ws, &home, flags, &["sh", "-c", show]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert_eq!(
            out(&o).trim(),
            "npm=true cargo=true pip=1 uv=1 go=off",
            "{flags:?}"
        );
    }
    // With outside network nothing is forced, and the caller's own value
    // passes through.
    let o = run_command(&ws, &home, &["--net", "outbound"], &["sh", "-c", show])
        .env("CARGO_NET_OFFLINE", "mine")
        .env_remove("npm_config_offline")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        out(&o).trim(),
        "npm= cargo=mine pip= uv= go=",
        "--net outbound"
    );
    // The report says why.
    let o = run_in(&ws, &home, &["--report"], &["true"]);
    assert!(err(&o).contains("told they are offline"), "{}", err(&o));
}

#[test]
fn npm_fails_at_once_with_its_own_offline_message() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed on this host");
    }
    let t = TempDir::new("offline_npm");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        &["--net", "deny"],
        &[
            "npm",
            "view",
            "skarn-offline-probe-not-a-package",
            "version",
        ],
    );
    assert_ne!(code(&o), 0);
    // Offline, npm answers from its cache only: ENOTCACHED, not a retried
    // name lookup (EAI_AGAIN) after a minute.
    assert!(err(&o).contains("ENOTCACHED"), "{}", err(&o));
}

#[test]
fn cargo_resolves_offline_and_says_so() {
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!("cargo is not installed on this host");
    }
    let t = TempDir::new("offline_cargo");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nskarn-offline-probe-not-a-crate = \"1\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--net", "deny"],
        &["cargo", "generate-lockfile"],
    );
    assert_ne!(code(&o), 0);
    assert!(err(&o).contains("offline"), "{}", err(&o));
}
