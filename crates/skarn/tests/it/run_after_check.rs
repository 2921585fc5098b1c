//! The check after a run finds every plant, wherever the run put it and
//! however many decoys it made (attack atk24c F1, F6, F7): each attempt is
//! judged from outside (the host program did not run the planted code).

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn repositories_made_inside_build_and_dependency_trees_are_set_aside() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("after-late");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let marker = t.path().join("marker");
    let dirs = ["target", "venv", ".venv", "__pycache__", "node_modules"];
    let script = dirs
        .iter()
        .map(|d| {
            format!(
                "git init -q {d} && git -C {d} config core.fsmonitor 'echo {d} >> {}; false'",
                marker.display()
            )
        })
        .collect::<Vec<_>>()
        .join(" && ");
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for d in dirs {
        let _ = git(&ws.join(d), &["status", "--short"]);
    }
    assert!(
        !marker.exists(),
        "host git ran a plant: {:?}\n{}",
        std::fs::read_to_string(&marker),
        err(&o)
    );
}

#[test]
fn an_upward_directory_made_as_a_link_is_set_aside() {
    let t = TempDir::new("after-link");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let marker = t.path().join("marker");
    let script = format!(
        "mkdir -p sub/crate/src cfgdir && ln -s ../cfgdir sub/.cargo && \
         printf '[build]\\nrustc-wrapper = \"{ws}/cfgdir/w.sh\"\\n' > cfgdir/config.toml && \
         printf '#!/bin/sh\\necho ran >> {m}\\nexec \"$@\"\\n' > cfgdir/w.sh && chmod +x cfgdir/w.sh && \
         printf '[package]\\nname=\"c\"\\nversion=\"0.1.0\"\\nedition=\"2021\"\\n' > sub/crate/Cargo.toml && \
         echo 'fn main(){{}}' > sub/crate/src/main.rs",
        ws = ws.display(),
        m = marker.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        std::fs::symlink_metadata(ws.join("sub/.cargo")).is_err(),
        "the link was kept: {}",
        err(&o)
    );
    assert!(
        ws.join("cfgdir/config.toml").is_file(),
        "the target is left"
    );
    if host_has("cargo", "--version") {
        let _ = std::process::Command::new("cargo")
            .args(["metadata", "--format-version", "1"])
            .current_dir(ws.join("sub/crate"))
            .output();
        assert!(!marker.exists(), "host cargo ran the planted wrapper");
    }
}

#[test]
fn a_plant_behind_thousands_of_decoys_is_still_set_aside() {
    let t = TempDir::new("after-decoys");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let script = "for i in $(seq 1 4200); do mkdir a$i && : > a$i/rust-toolchain.toml; done; \
                  mkdir -p z/y/.claude && echo '{}' > z/y/.claude/settings.json && \
                  printf '[toolchain]\\npath = \"/x\"\\n' > z/y/rust-toolchain.toml";
    let o = run_in(&ws, &home, &[], &["bash", "-c", script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for p in ["z/y/rust-toolchain.toml", "z/y/.claude"] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} was kept behind the decoys"
        );
    }
    assert!(!Path::new(&ws.join("a4200/rust-toolchain.toml")).exists());
}

/// Attack atk24d F7: a standard `python3 -m venv .venv` (its `lib64 ->
/// lib` link) with `.pth` files does not make every run fail at set-up,
/// and a `.pth` a run writes is still set aside.
#[test]
fn a_standard_venv_with_pth_files_still_runs_and_new_pth_files_are_set_aside() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let t = TempDir::new("after-venv");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let o = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(ws.join(".venv"))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let lib = std::fs::read_dir(ws.join(".venv/lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("site-packages");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("user.pth"), "").unwrap();
    if !ws.join(".venv/lib64").exists() {
        std::os::unix::fs::symlink("lib", ws.join(".venv/lib64")).unwrap();
    }
    let plant = format!("echo 'import os' > {}/new.pth; echo ran", lib.display());
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).trim(), "ran");
    assert!(!lib.join("new.pth").exists(), "kept: {}", err(&o));
}
