//! A toolchain variable of the caller (`VIRTUAL_ENV`, `RUSTUP_HOME`,
//! `GOROOT`, ...) that names a directory which is not what the variable
//! claims grants nothing (attack atk24o F4: a wrapped MCP server's `env`
//! set `VIRTUAL_ENV` to the home and the "confined" server read it). Judged
//! from outside: the file in that directory is not readable inside.

use crate::common::*;
use skarn_test_support::TempDir;

/// (variable, preset) pairs; every one names the same plain directory.
const VARS: &[(&str, &str)] = &[
    ("VIRTUAL_ENV", "python"),
    ("PYENV_ROOT", "python"),
    ("RUSTUP_HOME", "rust"),
    ("CARGO_TARGET_DIR", "rust"),
    ("NVM_DIR", "node"),
    ("GOROOT", "go"),
    ("GOBIN", "go"),
    ("GOMODCACHE", "go"),
    ("GOCACHE", "go"),
];

#[test]
fn a_toolchain_variable_naming_a_plain_directory_grants_nothing() {
    let t = TempDir::new("tc-env");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    t.file("private/notes.txt", "TOPSECRET-F4\n");
    t.file("home/diary.txt", "TOPSECRET-F4\n");
    let private = t.path().join("private");
    let probe = format!(
        "cat {}/notes.txt {}/diary.txt 2>&1",
        private.display(),
        home.display()
    );
    for (var, preset) in VARS {
        for value in [private.clone(), home.clone()] {
            let o = run_command(&ws, &home, &["--preset", preset], &["sh", "-c", &probe])
                .env(var, &value)
                .output()
                .unwrap();
            assert!(
                !out(&o).contains("TOPSECRET-F4"),
                "{var}={} granted a plain directory: {}{}",
                value.display(),
                out(&o),
                err(&o)
            );
        }
    }
}

#[test]
fn a_real_virtual_environment_named_by_the_variable_still_works() {
    let t = TempDir::new("tc-env-venv");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    t.file("venv/pyvenv.cfg", "home = /usr/bin\n");
    t.file("venv/lib/marker.txt", "IN-THE-VENV\n");
    let venv = t.path().join("venv");
    let o = run_command(
        &ws,
        &home,
        &["--preset", "python"],
        &[
            "sh",
            "-c",
            &format!("cat {}/lib/marker.txt", venv.display()),
        ],
    )
    .env("VIRTUAL_ENV", &venv)
    .output()
    .unwrap();
    assert!(out(&o).contains("IN-THE-VENV"), "{}{}", out(&o), err(&o));
}
