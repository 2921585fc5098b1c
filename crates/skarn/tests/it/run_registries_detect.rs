//! `--net allow:registries` in new and nested projects (issue 23 item 2,
//! ADR 0176): the toolchains are detected from the working directory up to
//! the workspace and from the command, and cargo is asked for its default
//! registry when nothing configures or caches one.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use skarn_test_support::TempDir;

const MIRROR: &str = "npm.mirror.invalid";

fn registries(ws: &Path, cwd: &Path, home: &Path, cmd: &[&str]) -> Output {
    let mut c = run_command(ws, home, &["--net", "allow:registries", "--json"], cmd);
    c.current_dir(cwd);
    c.output().unwrap()
}

/// The report's line naming the hosts the proxy connects to.
fn allowed(o: &Output) -> String {
    let e = err(o);
    let v: serde_json::Value = serde_json::from_str(e.lines().last().unwrap_or_default())
        .unwrap_or_else(|_| panic!("{e}"));
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("connects only to:"))
        .unwrap_or_else(|| panic!("no allow list: {e}"))
        .to_string()
}

fn user_npmrc(home: &Path) {
    std::fs::write(home.join(".npmrc"), format!("registry=https://{MIRROR}/\n")).unwrap();
}

#[test]
fn npm_in_an_empty_repository_is_detected_from_the_command() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not usable by this user");
    }
    let t = TempDir::new("reg-cmd");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir(ws.join(".git")).unwrap();
    user_npmrc(&home);
    let o = registries(&ws, &ws, &home, &["sh", "-c", "npm --version >/dev/null"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(allowed(&o).contains(MIRROR), "{}", err(&o));
}

#[test]
fn a_package_json_in_a_subdirectory_is_detected_from_the_working_directory() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not usable by this user");
    }
    let t = TempDir::new("reg-sub");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir(ws.join(".git")).unwrap();
    let web = t.dir("ws/apps/web");
    t.file(
        "ws/apps/web/package.json",
        "{\"name\":\"web\",\"version\":\"1.0.0\"}\n",
    );
    user_npmrc(&home);
    let o = registries(&ws, &web, &home, &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(allowed(&o).contains(MIRROR), "{}", err(&o));
    // From the workspace's top, with a command naming no tool, nothing is
    // detected: the run is refused with one line, as before.
    let o = registries(&ws, &ws, &home, &["true"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("no host to allow"), "{}", err(&o));
}

#[test]
fn cargo_names_its_default_registry_when_its_home_never_fetched() {
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!("cargo is not usable by this user");
    }
    let t = TempDir::new("reg-cargo");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let cargo_home = t.dir("cargo-home");
    let mut c = run_command(
        &ws,
        &home,
        &["--net", "allow:registries", "--json"],
        &["cargo", "--version"],
    );
    c.env("CARGO_HOME", &cargo_home);
    if std::env::var_os("RUSTUP_HOME").is_none()
        && let Some(h) = std::env::var_os("HOME")
    {
        c.env("RUSTUP_HOME", Path::new(&h).join(".rustup"));
    }
    let o = c.output().unwrap();
    assert!(
        err(&o).contains("cargo's default registry, as cargo reports it"),
        "{}",
        err(&o)
    );
    let line = allowed(&o);
    assert!(!line.ends_with("connects only to: "), "{line}");
    // Asking wrote nothing to the cargo home.
    assert!(std::fs::read_dir(&cargo_home).unwrap().next().is_none());
}
