//! Discovery never runs, imports or reads what a sandboxed command could
//! have written: each test plants something in the workspace and checks
//! from outside (a marker file, the patterns found) that it was not used.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::discover_in;
use super::probe::{Probe, output};
use skarn_test_support::TempDir;

fn env(pairs: &[(&str, &Path)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), v.as_os_str().to_owned()))
        .collect()
}

fn system_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into())
}

/// An executable script `dir/name` that writes `marker` when run.
fn plant(dir: &Path, name: &str, marker: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn cargo_skips_workspace_config_but_reads_cargo_home() {
    let t = TempDir::new("reg-cargo");
    let (ws, home) = (t.dir("ws"), t.dir("cargo-home"));
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::write(
        ws.join(".cargo/config.toml"),
        "[source.crates-io]\nreplace-with = \"m\"\n[source.m]\nregistry = \"sparse+https://planted.invalid/index/\"\n",
    )
    .unwrap();
    std::fs::write(
        home.join("config.toml"),
        "[registries.corp]\nindex = \"sparse+https://idx.mirror.test:7777/index/\"\n",
    )
    .unwrap();
    let f = discover_in(&ws, &[], &["rust"], env(&[("CARGO_HOME", &home)]));
    assert_eq!(f.patterns, ["idx.mirror.test:7777"], "{f:?}");
    let skipped = format!("skipped {}", ws.join(".cargo/config.toml").display());
    assert!(f.notes.iter().any(|n| n.contains(&skipped)), "{f:?}");
}

#[test]
fn cargo_home_inside_a_write_grant_is_not_read() {
    let t = TempDir::new("reg-cargo-grant");
    let (ws, home) = (t.dir("ws"), t.dir("cargo-home"));
    std::fs::write(
        home.join("config.toml"),
        "[registries.x]\nindex = \"https://planted.invalid/\"\n",
    )
    .unwrap();
    let f = discover_in(
        &ws,
        std::slice::from_ref(&home),
        &["rust"],
        env(&[("CARGO_HOME", &home)]),
    );
    assert!(f.patterns.is_empty(), "{f:?}");
}

#[test]
fn programs_in_writable_roots_are_never_run() {
    let t = TempDir::new("reg-path");
    let (ws, grant, outside) = (t.dir("ws"), t.dir("grant"), t.dir("outside"));
    let marker = t.path().join("ran");
    // On PATH inside the workspace, inside a write grant, and outside but
    // a link to a program inside.
    plant(&ws.join("bin"), "python3", &marker);
    plant(&ws.join("bin"), "npm", &marker);
    plant(&grant, "python", &marker);
    plant(&ws.join("real"), "node", &marker);
    std::os::unix::fs::symlink(ws.join("real/node"), outside.join("node")).unwrap();
    let link = t.path().join("linkdir");
    std::os::unix::fs::symlink(ws.join("bin"), &link).unwrap();
    let path = std::env::join_paths([
        ws.join("bin"),
        link,
        grant.clone(),
        outside.clone(),
        PathBuf::from("."),
        PathBuf::from(""),
    ])
    .unwrap();
    let mut path = path;
    path.push(":");
    path.push(system_path());
    let e = vec![(OsString::from("PATH"), path)];
    let f = discover_in(&ws, &[grant], &["python", "node"], e);
    assert!(!marker.exists(), "a planted program ran: {f:?}");
    for bad in [ws.join("bin"), t.path().join("linkdir")] {
        let n = format!("PATH entry {} is writable", bad.display());
        assert!(f.notes.iter().any(|x| x.contains(&n)), "{n}: {f:?}");
    }
}

#[test]
fn probes_start_in_the_neutral_directory_without_workspace_variables() {
    let t = TempDir::new("reg-env");
    let ws = t.dir("ws");
    let mut notes = Vec::new();
    let mut e = env(&[
        ("PIP_CONFIG_FILE", &ws.join("pip.conf")),
        ("npm_config_userconfig", &ws.join(".npmrc")),
        ("HOME", &ws),
        ("PWD", &ws),
    ]);
    e.push((
        "VIRTUAL_ENV".into(),
        format!("x:{}/.venv", ws.display()).into(),
    ));
    e.push(("PATH".into(), system_path()));
    e.push(("PIP_FIND_LINKS".into(), "/usr/share".into()));
    // Preloads never reach the probes, and a workspace path is caught in
    // any spelling.
    e.push(("NODE_OPTIONS".into(), "--max-old-space-size=100".into()));
    e.push((
        "npm_config_cache".into(),
        format!("\"{}/c\"", ws.display()).into(),
    ));
    e.push((
        "PIP_CERT".into(),
        format!("/nonexistent/..{}/cert", ws.display()).into(),
    ));
    let p = Probe::new(std::slice::from_ref(&ws), e, &mut notes);
    for k in [
        "PIP_CONFIG_FILE",
        "npm_config_userconfig",
        "VIRTUAL_ENV",
        "PWD",
    ] {
        assert_eq!(p.var(k), None, "{k}");
    }
    assert_ne!(p.var("HOME"), Some(ws.as_os_str()));
    assert_eq!(p.var("PIP_FIND_LINKS"), Some("/usr/share".as_ref()));
    for k in ["NODE_OPTIONS", "npm_config_cache", "PIP_CERT"] {
        assert_eq!(p.var(k), None, "{k}");
    }
    assert!(
        notes.iter().any(|n| n.starts_with("PIP_CONFIG_FILE")),
        "{notes:?}"
    );
    let mut sh = p.command("sh", &[]).unwrap();
    let out = output(sh.args(["-c", "pwd; echo \"$PIP_CONFIG_FILE\""])).unwrap();
    assert_eq!(out, "/\n\n");
}

#[test]
fn go_reports_its_proxies_and_a_workspace_settings_file_is_not_read() {
    let Ok(go) = which_go() else {
        skarn_test_support::skip!("go is not installed (.ci/install.d installs it)");
    };
    let t = TempDir::new("reg-go");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let path = go.parent().unwrap().to_path_buf();
    // The user's settings file (what `go env -w` writes) names a mirror.
    std::fs::create_dir_all(home.join(".config/go")).unwrap();
    std::fs::write(
        home.join(".config/go/env"),
        "GOPROXY=https://gomirror.test/mod,direct\nGOSUMDB=sums.test+abc https://sums.test:8443/\n",
    )
    .unwrap();
    let f = discover_in(&ws, &[], &["go"], env(&[("HOME", &home), ("PATH", &path)]));
    assert_eq!(f.patterns, ["gomirror.test", "sums.test:8443"], "{f:?}");
    assert!(f.notes.iter().any(|n| n.contains("direct")), "{f:?}");
    // The same file inside a writable root is never read: go's own
    // defaults only.
    let f = discover_in(
        &ws,
        std::slice::from_ref(&home),
        &["go"],
        env(&[("HOME", &home), ("PATH", &path)]),
    );
    assert!(
        !f.patterns
            .iter()
            .any(|p| p.ends_with(".test") || p.contains(":8443")),
        "{f:?}"
    );
    // A variable wins over the file, as in go.
    let f = discover_in(
        &ws,
        &[],
        &["go"],
        vec![
            ("HOME".into(), home.clone().into_os_string()),
            ("PATH".into(), path.clone().into_os_string()),
            ("GOPROXY".into(), "https://fromenv.test".into()),
            ("GOSUMDB".into(), "off".into()),
        ],
    );
    assert_eq!(f.patterns, ["fromenv.test"], "{f:?}");
}

fn which_go() -> Result<PathBuf, ()> {
    std::env::split_paths(&system_path())
        .map(|d| d.join("go"))
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(p).unwrap())
        .ok_or(())
}
