//! The workspace's store (issue 23 item 1, ADR 0175): what a run fetches
//! into a toolchain's cache is there for the next run of the same
//! workspace, offline; another workspace's runs do not see it; host tools
//! never read it; `skarn cache clear` removes it. Real tools against a
//! registry served on loopback by the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use crate::common::*;
use crate::static_http::Server;
use skarn_test_support::TempDir;

fn cache(home: &Path, args: &[&str]) -> Output {
    Command::new(exe())
        .arg("cache")
        .args(args)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn timed(c: &mut Command) -> (Output, f64) {
    let t = Instant::now();
    let o = c.output().unwrap();
    (o, t.elapsed().as_secs_f64())
}

/// A package packed by the host's npm and its registry document, served
/// from `served` (the document at `/NAME`, the tarball under `/t/`).
fn npm_registry(t: &TempDir, port: u16) -> &'static str {
    const NAME: &str = "skarn-store-fixture";
    let pkg = t.dir("pkg");
    t.file(
        "pkg/package.json",
        format!("{{\"name\":\"{NAME}\",\"version\":\"1.0.0\",\"main\":\"index.js\"}}\n"),
    );
    t.file("pkg/index.js", "module.exports = 'from-the-store';\n");
    let served = t.dir("served/t");
    let o = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(&served)
        .current_dir(&pkg)
        .env("HOME", t.dir("packhome"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "npm pack: {}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (file, shasum, integrity) = (
        v[0]["filename"].as_str().unwrap().to_string(),
        v[0]["shasum"].as_str().unwrap().to_string(),
        v[0]["integrity"].as_str().unwrap().to_string(),
    );
    let doc = serde_json::json!({
        "name": NAME,
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {
            "name": NAME, "version": "1.0.0", "main": "index.js",
            "dist": {
                "tarball": format!("http://127.0.0.1:{port}/t/{file}"),
                "shasum": shasum, "integrity": integrity
            }
        }}
    });
    t.file(format!("served/{NAME}/index.html"), doc.to_string());
    NAME
}

fn project(t: &TempDir, name: &str, dep: &str) -> PathBuf {
    let ws = t.dir(name);
    t.file(
        format!("{name}/package.json"),
        format!("{{\"name\":\"{name}\",\"version\":\"1.0.0\",\"dependencies\":{{\"{dep}\":\"1.0.0\"}}}}\n"),
    );
    ws
}

#[test]
fn npm_fetches_once_then_installs_offline_from_this_workspaces_store_only() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not usable by this user");
    }
    let t = TempDir::new("store-npm");
    let home = t.dir("home");
    let _stores = Stores(home.clone());
    // (Started before the tree it serves is complete: it reads per request.)
    let srv = Server::start(Some(t.dir("served")));
    let dep = npm_registry(&t, srv.port);
    let (ws1, ws2) = (project(&t, "ws1", dep), project(&t, "ws2", dep));
    let install = format!(
        "NO_PROXY= no_proxy= npm install --no-audit --no-fund --registry http://127.0.0.1:{}/",
        srv.port
    );
    // Files made just before a run count as the run's (a 50 ms margin).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let net = format!("allow:127.0.0.1:{}", srv.port);

    // Run 1 fetches.
    let (o, first) = timed(&mut run_command(
        &ws1,
        &home,
        &["--net", &net, "--report"],
        &["sh", "-c", &install],
    ));
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        ws1.join("node_modules")
            .join(dep)
            .join("index.js")
            .is_file()
    );
    assert!(
        err(&o).contains("store: "),
        "the report names the store: {}",
        err(&o)
    );
    let fetched = srv.hits();
    assert!(fetched >= 2, "document and tarball fetched: {fetched}");
    // Kept in skarn's state directory, owner-only; not in the host's cache.
    let stores = home.join(".local/state/skarn/store");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&stores).unwrap().permissions());
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    assert!(
        !home.join(".npm").exists(),
        "the host's npm cache was written"
    );

    // Run 2, without network, installs from the store.
    std::fs::remove_dir_all(ws1.join("node_modules")).unwrap();
    std::fs::remove_file(ws1.join("package-lock.json")).unwrap();
    let (o, second) = timed(&mut run_command(
        &ws1,
        &home,
        &["--net", "deny"],
        &["sh", "-c", &install],
    ));
    assert_eq!(code(&o), 0, "offline install from the store: {}", err(&o));
    assert!(
        ws1.join("node_modules")
            .join(dep)
            .join("index.js")
            .is_file()
    );
    assert_eq!(srv.hits(), fetched, "nothing fetched by the second run");
    eprintln!(
        "npm install: first run {first:.2} s (fetch), second run {second:.2} s (--net deny, from the store)"
    );

    // Another workspace's run does not see it.
    let o = run_in(&ws2, &home, &["--net", "deny"], &["sh", "-c", &install]);
    assert_ne!(code(&o), 0, "ws2 installed from ws1's store: {}", out(&o));
    assert!(!ws2.join("node_modules").join(dep).exists());

    // The host's npm (same HOME) never reads it.
    let h = Command::new("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--registry",
        ])
        .arg(format!("http://127.0.0.1:{}/", srv.port))
        .current_dir(&ws2)
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&h), 0, "the host's npm installed from the store");
    assert!(!ws2.join("node_modules").join(dep).exists());

    // `skarn cache` lists and clears it; the next offline run has nothing.
    let l = cache(&home, &["list", "--workspace", ws1.to_str().unwrap()]);
    assert_eq!(code(&l), 0, "{}", err(&l));
    assert!(
        out(&l).contains(ws1.to_str().unwrap()) && out(&l).contains(".npm/_cacache"),
        "{}",
        out(&l)
    );
    let c = cache(&home, &["clear", "--workspace", ws1.to_str().unwrap()]);
    assert_eq!(code(&c), 0, "{}", err(&c));
    let l = cache(&home, &["list", "--workspace", ws1.to_str().unwrap()]);
    assert_eq!(out(&l), "", "ws1's store is gone");
    std::fs::remove_dir_all(ws1.join("node_modules")).unwrap();
    std::fs::remove_file(ws1.join("package-lock.json")).unwrap();
    let o = run_in(&ws1, &home, &["--net", "deny"], &["sh", "-c", &install]);
    assert_ne!(code(&o), 0, "installed after the store was cleared");
    let _ = srv;
}

/// A crate packed by the host's cargo, served as a sparse registry:
/// `index/config.json`, the index entry, and the `.crate` under `/dl/`.
fn cargo_registry(t: &TempDir, port: u16) {
    t.file(
        "krate/Cargo.toml",
        "[package]\nname = \"skfix\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         description = \"d\"\nlicense = \"MIT\"\n",
    );
    t.file(
        "krate/src/lib.rs",
        "pub fn word() -> &'static str { \"from-the-store\" }\n",
    );
    let o = Command::new("cargo")
        .args(["package", "--no-verify", "--allow-dirty", "--quiet"])
        .current_dir(t.join("krate"))
        .env("CARGO_HOME", t.dir("packhome"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "cargo package: {}", err(&o));
    let krate = t.join("krate/target/package/skfix-0.1.0.crate");
    let dl = t.dir("served/dl");
    std::fs::copy(&krate, dl.join("skfix-0.1.0.crate")).unwrap();
    let sum = Command::new("sha256sum").arg(&krate).output().unwrap();
    let cksum = out(&sum).split_whitespace().next().unwrap().to_string();
    t.file(
        "served/index/config.json",
        format!("{{\"dl\":\"http://127.0.0.1:{port}/dl/{{crate}}-{{version}}.crate\"}}"),
    );
    t.file(
        "served/index/sk/fi/skfix",
        format!(
            "{{\"name\":\"skfix\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{cksum}\",\
             \"features\":{{}},\"yanked\":false}}\n"
        ),
    );
}

fn cargo_project(t: &TempDir, name: &str, port: u16) -> PathBuf {
    let ws = t.dir(name);
    t.file(
        format!("{name}/Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [dependencies]\nskfix = \"0.1\"\n"
        ),
    );
    t.file(
        format!("{name}/src/main.rs"),
        "fn main() { println!(\"{}\", skfix::word()); }\n",
    );
    t.file(
        format!("{name}/.cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"fix\"\n\
             [source.fix]\nregistry = \"sparse+http://127.0.0.1:{port}/index/\"\n"
        ),
    );
    ws
}

#[test]
fn cargo_builds_offline_from_what_the_first_run_fetched() {
    let cargo = Command::new("sh")
        .args(["-c", "command -v cargo"])
        .output()
        .map(|o| out(&o).trim().to_string())
        .unwrap_or_default();
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
    if cargo.is_empty()
        || !host_has("cargo", "--version")
        || !rustup.as_ref().is_some_and(|r| r.is_dir())
    {
        skarn_test_support::skip!("cargo (and its rustup home) is not usable by this user");
    }
    let cargo_bin = Path::new(&cargo)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let rustup = rustup.unwrap();
    let t = TempDir::new("store-cargo");
    let home = t.dir("home");
    let _stores = Stores(home.clone());
    let srv = Server::start(Some(t.dir("served")));
    cargo_registry(&t, srv.port);
    let (ws1, ws2) = (
        cargo_project(&t, "ws1", srv.port),
        cargo_project(&t, "ws2", srv.port),
    );
    // The after-run check counts a file made just before a run (a 50 ms
    // margin) as the run's: its `.cargo/config.toml` would be set aside
    // as a plant on a loaded machine.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let net = format!("allow:127.0.0.1:{}", srv.port);
    // The test's home holds no cargo home: the first run fetches into a
    // cache the host never had.
    let run = |ws: &Path, net: &str| {
        let mut c = run_command(
            ws,
            &home,
            &["--net", net, "--exec", &cargo_bin, "--report"],
            &["sh", "-c", "NO_PROXY= no_proxy= cargo run -q"],
        );
        c.env("CARGO_HOME", home.join(".cargo"))
            .env("RUSTUP_HOME", &rustup)
            .env_remove("CARGO_TARGET_DIR");
        timed(&mut c)
    };
    let (o, first) = run(&ws1, &net);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "from-the-store\n");
    let fetched = srv.hits();
    assert!(fetched >= 2, "{fetched}");
    assert!(
        !home.join(".cargo/registry").exists(),
        "the host's cargo home was written"
    );

    // Run 2: no network, a clean build from the store's registry cache.
    std::fs::remove_dir_all(ws1.join("target")).unwrap();
    let (o, second) = run(&ws1, "deny");
    assert_eq!(code(&o), 0, "offline build from the store: {}", err(&o));
    assert_eq!(out(&o), "from-the-store\n");
    assert_eq!(srv.hits(), fetched, "nothing fetched by the second run");
    eprintln!(
        "cargo run: first run {first:.2} s (fetch), second run {second:.2} s (--net deny, from the store)"
    );

    // Another workspace: nothing to build from.
    let (o, _) = run(&ws2, "deny");
    assert_ne!(code(&o), 0, "ws2 built from ws1's store");

    // The host's cargo (same HOME and CARGO_HOME) never reads it.
    let h = Command::new("cargo")
        .args(["build", "--offline", "-q"])
        .current_dir(&ws2)
        .env("CARGO_HOME", home.join(".cargo"))
        .env("RUSTUP_HOME", &rustup)
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&h), 0, "the host's cargo built from the store");

    let c = cache(&home, &["clear", "--workspace", ws1.to_str().unwrap()]);
    assert_eq!(code(&c), 0, "{}", err(&c));
    std::fs::remove_dir_all(ws1.join("target")).unwrap();
    let (o, _) = run(&ws1, "deny");
    assert_ne!(code(&o), 0, "built after the store was cleared");
}

#[test]
fn writes_to_the_private_home_outside_the_store_are_named_when_the_run_ends() {
    let t = TempDir::new("store-home");
    let home = t.dir("home");
    let _stores = Stores(home.clone());
    let ws = t.dir("ws");
    t.file(
        "ws/package.json",
        "{\"name\":\"w\",\"version\":\"1.0.0\"}\n",
    );
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p ~/.local/lib/python3/site-packages ~/.npm/_cacache && echo x > \
             ~/.tool-state && echo y > ~/.npm/_cacache/kept",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let line = err(&o)
        .lines()
        .find(|l| l.contains("private home and discarded"))
        .unwrap_or_else(|| panic!("no line: {}", err(&o)))
        .to_string();
    assert!(
        line.contains("~/.local") && line.contains("~/.tool-state"),
        "{line}"
    );
    assert!(
        !line.contains("_cacache"),
        "the store's cache is kept: {line}"
    );
    // Nothing written: no line.
    let o = run_in(&ws, &home, &[], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("private home"), "{}", err(&o));
    // What went to the store's cache is there for the next run.
    let o = run_in(
        &ws,
        &home,
        &[],
        &["cat", home.join(".npm/_cacache/kept").to_str().unwrap()],
    );
    assert_eq!(out(&o), "y\n", "{}", err(&o));
}
