//! `skarn run`, issue 22 (item C): a cargo home or a Go module cache that
//! the caller keeps inside the workspace (`export CARGO_HOME=$PWD/...`, a
//! `GOPATH` in the checkout). A run cannot plant what the host's next
//! build runs there; checked from outside by running the host's cargo and
//! go afterwards with the same variables.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The run's script: a wrapper program, cargo's configuration naming it,
/// a changed and a new `build.rs` in the registry sources.
fn cargo_plant(marker: &Path) -> String {
    format!(
        "printf '#!/bin/sh\\ntouch {m}\\nexec \"$@\"\\n' > w.sh; chmod +x w.sh; \
         printf '[build]\\nrustc-wrapper = \"%s/w.sh\"\\n' \"$PWD\" > .cargo-home/config.toml; \
         echo 'fn main() {{ std::fs::write(\"{m}\", \"\").ok(); }}' \
           >> .cargo-home/registry/src/idx/foo-1.0.0/build.rs; \
         mkdir -p .cargo-home/registry/src/idx/bar-1.0.0 && \
           echo 'fn main() {{}}' > .cargo-home/registry/src/idx/bar-1.0.0/build.rs; \
         echo ok > src.txt; true",
        m = marker.display()
    )
}

#[test]
fn a_cargo_home_inside_the_workspace_gets_nothing_the_host_runs() {
    let t = TempDir::new("th22-cargo");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let cargo_home = ws.join(".cargo-home");
    let build_rs = t.file(
        "ws/.cargo-home/registry/src/idx/foo-1.0.0/build.rs",
        "fn main() {}\n",
    );
    let marker = t.join("PLANTED-RAN");
    // No Cargo.toml and no cargo in the command: no rust preset.
    let o = run_command(&ws, &home, &[], &["sh", "-c", &cargo_plant(&marker)])
        .env("CARGO_HOME", &cargo_home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(std::fs::read_to_string(ws.join("src.txt")).unwrap(), "ok\n");
    assert_eq!(
        std::fs::read_to_string(&build_rs).unwrap(),
        "fn main() {}\n",
        "the registry's build.rs was changed: {}",
        err(&o)
    );
    assert!(
        !cargo_home.join("registry/src/idx/bar-1.0.0").exists(),
        "a new registry source was planted: {}",
        err(&o)
    );
    let cfg = std::fs::read_to_string(cargo_home.join("config.toml")).unwrap_or_default();
    assert!(
        !cfg.contains("rustc-wrapper"),
        "cargo's home configuration was planted: {}",
        err(&o)
    );
    // The host's next cargo command with that home (cargo asks rustc for
    // its version through the wrapper).
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!("no cargo on the host: the host build was not tried");
    }
    t.file(
        "app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    t.file("app/src/main.rs", "fn main() {}\n");
    let h = Command::new("cargo")
        .args(["metadata", "--offline", "--format-version", "1"])
        .current_dir(t.join("app"))
        .env("CARGO_HOME", &cargo_home)
        .output()
        .unwrap();
    assert!(h.status.success(), "host cargo: {}", err(&h));
    assert!(
        !marker.exists(),
        "the host's cargo ran what the run planted: {}",
        err(&o)
    );
}

/// A Go module cache whose module `example.com/m` the host builds.
fn module_cache(t: &TempDir, cache: &str) {
    let dl = format!("{cache}/cache/download/example.com/m/@v");
    let gomod = "module example.com/m\n\ngo 1.18\n";
    t.file(format!("{dl}/v1.0.0.mod"), gomod);
    t.file(
        format!("{dl}/v1.0.0.ziphash"),
        "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
    );
    t.file(format!("{dl}/v1.0.0.info"), "{\"Version\":\"v1.0.0\"}\n");
    t.file(format!("{cache}/example.com/m@v1.0.0/go.mod"), gomod);
    t.file(
        format!("{cache}/example.com/m@v1.0.0/m.go"),
        "package m\n\nfunc X() int { return 1 }\n",
    );
}

#[test]
fn a_go_module_cache_inside_the_workspace_gets_nothing_the_host_builds() {
    let t = TempDir::new("th22-go");
    let home = t.dir("home");
    let ws = t.dir("ws");
    // Named by GOPATH (the cache is its pkg/mod) and, apart, by GOMODCACHE.
    for (var, val, cache) in [
        ("GOPATH", "ws/gop", "ws/gop/pkg/mod"),
        ("GOMODCACHE", "ws/gmc", "ws/gmc"),
    ] {
        module_cache(&t, cache);
        let marker = t.join(format!("PLANTED-RAN-{var}"));
        let src = format!("{}/example.com/m@v1.0.0/m.go", t.s(cache));
        let plant = format!(
            "chmod -R u+w {c} 2>/dev/null; \
             printf 'package m\\n\\nimport \"os\"\\n\\nfunc init() {{ os.WriteFile(\"{m}\", nil, 0o644) }}\\n\\nfunc X() int {{ return 1 }}\\n' > {src}; true",
            c = t.s(cache),
            m = marker.display()
        );
        let o = run_command(&ws, &home, &[], &["sh", "-c", &plant])
            .env(var, t.join(val))
            .env_remove(if var == "GOPATH" {
                "GOMODCACHE"
            } else {
                "GOPATH"
            })
            .env_remove("GOENV")
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(
            !std::fs::read_to_string(&src).unwrap().contains("WriteFile"),
            "{var}: the module cache was changed: {}",
            err(&o)
        );
        if !host_has("go", "version") {
            skarn_test_support::skip!("no go on the host: the host build was not tried");
        }
        t.file(
            "app/go.mod",
            "module app\n\ngo 1.18\n\nrequire example.com/m v1.0.0\n",
        );
        t.file(
            "app/main.go",
            "package main\n\nimport \"example.com/m\"\n\nfunc main() { println(m.X()) }\n",
        );
        let h = Command::new("go")
            .args(["run", "."])
            .current_dir(t.join("app"))
            .env(var, t.join(val))
            .env_remove(if var == "GOPATH" {
                "GOMODCACHE"
            } else {
                "GOPATH"
            })
            .env("GOPROXY", "off")
            .env("GOSUMDB", "off")
            .env("GOFLAGS", "-mod=mod")
            .env("GOTOOLCHAIN", "local")
            .env("GOCACHE", t.join("gocache"))
            .output()
            .unwrap();
        assert!(h.status.success(), "host go: {}", err(&h));
        assert!(
            !marker.exists(),
            "{var}: the host's go build ran what the run planted: {}",
            err(&o)
        );
    }
}

/// The protection above must not stop the command's own cargo: with a
/// cargo home in the workspace that has no configuration yet, a build
/// inside works (its configuration files are reserved empty, cargo's
/// lock files are not protected), and nothing is left behind.
#[test]
fn the_commands_own_cargo_works_with_its_home_in_the_workspace() {
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!("no cargo on the host");
    }
    let t = TempDir::new("th22-cargo-use");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let cargo_home = t.dir("ws/.cargo-home");
    t.file(
        "ws/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    t.file("ws/src/main.rs", "fn main() { println!(\"built\"); }\n");
    let which = |p: &str| {
        let o = Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .unwrap();
        std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
    };
    let cargo_dir = std::fs::canonicalize(which("cargo")).unwrap();
    let mut flags: Vec<String> = vec![
        "--exec".into(),
        cargo_dir.parent().unwrap().display().to_string(),
    ];
    for d in [
        std::env::var("RUSTUP_HOME").ok(),
        std::env::var("HOME").ok().map(|h| format!("{h}/.rustup")),
    ]
    .into_iter()
    .flatten()
    {
        if Path::new(&d).is_dir() {
            flags.extend(["--exec".into(), d]);
        }
    }
    let f: Vec<&str> = flags.iter().map(String::as_str).collect();
    let o = run_command(&ws, &home, &f, &["cargo", "run", "--offline", "-q"])
        .env("CARGO_HOME", &cargo_home)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("built"), "{}{}", out(&o), err(&o));
    for n in ["config.toml", "config", ".global-cache", "registry"] {
        let p = cargo_home.join(n);
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{} left behind",
            p.display()
        );
    }
}
