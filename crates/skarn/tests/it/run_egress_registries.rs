//! `--net allow:registries` runs discovery on the host before any
//! confinement: nothing a sandboxed command could have written (a `pip`
//! package, a `.npmrc`, a `.cargo/config.toml`, a program on PATH in the
//! workspace) is run, imported or read. Each test plants such a thing and
//! checks from outside: a marker file the planted code would write, and
//! the hosts skarn says it will connect to.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use skarn_test_support::TempDir;

/// A host always allowed, so the run starts whatever discovery finds.
const CONTROL: &str = "allow:control.invalid";

fn registries_run(ws: &Path, home: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut c = run_command(
        ws,
        home,
        &["--net", "allow:registries", "--net", CONTROL, "--json"],
        &["true"],
    );
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The hosts the proxy will connect to, from the `--json` report's notes.
fn allowed_hosts(o: &Output) -> String {
    let e = err(o);
    let json = e.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|_| panic!("{e}"));
    let notes = v["notes"].as_array().unwrap();
    let line = notes
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("connects only to:"))
        .unwrap_or_else(|| panic!("no allow list in the report: {e}"));
    assert!(line.contains("control.invalid"), "{line}");
    line.to_string()
}

/// An executable `dir/name` that writes `marker` when run.
fn plant(dir: &Path, name: &str, marker: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_pip_package_written_by_a_sandboxed_command_never_runs_on_the_host() {
    let t = TempDir::new("reg-pip");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.path().join("hostexec");
    // The earlier, sandboxed command plants a `pip` package in the workspace.
    let plant = format!(
        "echo requests > requirements.txt && mkdir -p pip && \
         echo 'open(\"{}\", \"w\").write(\"ran\")' > pip/__init__.py && \
         echo 'print(\"global.index-url=https://planted.invalid/simple\")' > pip/__main__.py",
        marker.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("pip/__main__.py").is_file());
    let o = registries_run(&ws, &home, &[]);
    assert!(
        !marker.exists(),
        "the planted pip ran on the host: {}",
        err(&o)
    );
    assert!(!err(&o).contains("planted.invalid"), "{}", err(&o));
    assert!(!allowed_hosts(&o).contains("planted.invalid"));
}

#[test]
fn a_workspace_npmrc_is_not_read_but_the_users_is() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed on this host");
    }
    let t = TempDir::new("reg-npm");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("package.json"), "{}").unwrap();
    std::fs::write(ws.join(".npmrc"), "registry=https://planted.example/\n").unwrap();
    std::fs::write(
        home.join(".npmrc"),
        "@corp:registry=https://npm.mirror.invalid/\n",
    )
    .unwrap();
    let o = registries_run(&ws, &home, &[]);
    let hosts = allowed_hosts(&o);
    assert!(!hosts.contains("planted.example"), "{hosts}");
    assert!(hosts.contains("npm.mirror.invalid"), "{}", err(&o));
}

#[test]
fn a_workspace_cargo_config_is_not_read_but_cargo_home_is() {
    let t = TempDir::new("reg-cargo");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let cargo_home = t.dir("cargo-home");
    std::fs::write(ws.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::write(
        ws.join(".cargo/config.toml"),
        "[source.crates-io]\nreplace-with = \"p\"\n\
         [source.p]\nregistry = \"sparse+https://planted.invalid/index/\"\n",
    )
    .unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        "[registries.corp]\nindex = \"sparse+https://cargo.mirror.invalid/index/\"\n",
    )
    .unwrap();
    let o = registries_run(&ws, &home, &[("CARGO_HOME", cargo_home.as_os_str())]);
    let hosts = allowed_hosts(&o);
    assert!(!hosts.contains("planted.invalid"), "{hosts}");
    assert!(hosts.contains("cargo.mirror.invalid"), "{}", err(&o));
    let skipped = format!("skipped {}", ws.join(".cargo/config.toml").display());
    assert!(err(&o).contains(&skipped), "{}", err(&o));
}

#[test]
fn programs_on_a_path_entry_in_the_workspace_never_run() {
    let t = TempDir::new("reg-path");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.path().join("hostexec");
    std::fs::write(ws.join("requirements.txt"), "").unwrap();
    std::fs::write(ws.join("package.json"), "{}").unwrap();
    for name in ["python3", "python", "npm", "node"] {
        plant(&ws.join(".venv/bin"), name, &marker);
    }
    // An activated environment (a prefix on PATH inside the workspace
    // that is not one is no workspace at all: run_b22i).
    std::fs::write(ws.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let mut path = ws.join(".venv/bin").into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let o = registries_run(&ws, &home, &[("PATH", &path)]);
    assert!(
        !marker.exists(),
        "a workspace program ran on the host: {}",
        err(&o)
    );
    let note = format!("PATH entry {} is writable", ws.join(".venv/bin").display());
    assert!(err(&o).contains(&note), "{}", err(&o));
    allowed_hosts(&o);
}

/// A preload in the user's `NODE_OPTIONS` naming a workspace file (quoted,
/// which node accepts) is not given to npm's node.
#[test]
fn node_options_never_load_workspace_code_into_the_probes() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed on this host");
    }
    let t = TempDir::new("reg-nodeopts");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.join("node-ran");
    std::fs::write(ws.join("package.json"), "{}").unwrap();
    std::fs::write(
        ws.join("evil.js"),
        format!(
            "require('fs').writeFileSync({:?}, 'ran')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let opts = format!("--require \"{}\"", ws.join("evil.js").display());
    let o = registries_run(&ws, &home, &[("NODE_OPTIONS", opts.as_ref())]);
    allowed_hosts(&o);
    assert!(
        !marker.exists(),
        "workspace code ran on the host: {}",
        err(&o)
    );
}

/// A pip configuration file of the user's that links into the workspace
/// (a dotfiles repository used as a workspace) could be rewritten by a
/// sandboxed command: pip's configuration is then not read.
#[test]
fn a_pip_config_linked_into_the_workspace_is_not_read() {
    let t = TempDir::new("reg-pipcfg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("requirements.txt"), "requests\n").unwrap();
    std::fs::write(
        ws.join("pip.conf"),
        "[global]\nindex-url = https://planted.invalid/simple\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".config/pip")).unwrap();
    std::os::unix::fs::symlink(ws.join("pip.conf"), home.join(".config/pip/pip.conf")).unwrap();
    let o = registries_run(&ws, &home, &[]);
    let hosts = allowed_hosts(&o);
    assert!(!hosts.contains("planted.invalid"), "{hosts}");
    assert!(
        err(&o).contains("pip.conf is writable from the sandbox"),
        "{}",
        err(&o)
    );
}
