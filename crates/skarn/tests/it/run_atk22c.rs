//! Attack pass atk22c on issue 22: a chain of sourced home files deeper
//! than the reader follows (F7), and `.pdbrc` (F6). Each attack is tried
//! for real and judged from outside (the workspace file was not written,
//! host bash and python ran nothing planted).

use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_chain_of_sourced_files_deeper_than_the_reader_follows_fails_closed() {
    let t = TempDir::new("atk22c-f7");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    // .bashrc -> a1 -> ... -> a9 -> ~/proj/env.sh
    t.file("home/.bashrc", ". ~/a1.sh\n");
    for i in 1..9 {
        t.file(format!("home/a{i}.sh"), format!(". ~/a{}.sh\n", i + 1));
    }
    t.file("home/a9.sh", ". ~/proj/env.sh\n");
    t.file("home/proj/env.sh", "true\n");
    let marker = t.path().join("marker");
    let plant = format!("echo 'echo pwned > {}' > env.sh; true", marker.display());
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("env.sh")).unwrap(),
        "true\n",
        "planted: {}",
        err(&o)
    );
    let _ = Command::new("bash")
        .args(["-i", "-c", "true"])
        .current_dir(&ws)
        .env("HOME", &home)
        .stdin(std::process::Stdio::null())
        .output();
    assert!(!marker.exists(), "host bash ran the plant");
}

#[test]
fn a_pdbrc_in_the_workspace_is_protected() {
    let t = TempDir::new("atk22c-f6");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'import os' > .pdbrc; echo 'import os' > sub/.pdbrc; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for p in [".pdbrc", "sub/.pdbrc"] {
        assert!(
            !std::fs::read_to_string(ws.join(p)).is_ok_and(|s| s.contains("import")),
            "{p} was planted: {}",
            err(&o)
        );
    }
}

/// F2: `~/.lesskey` naming a program in the workspace (`LESSOPEN`): the
/// workspace is read-only for the run, so the program cannot be planted.
#[test]
fn a_lesskey_naming_the_workspace_keeps_it_read_only() {
    let t = TempDir::new("atk22c-f2");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/.lesskey",
        format!("#env\nLESSOPEN=|{}/lessopen.sh %s\n", ws.display()),
    );
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo 'echo pwned' > lessopen.sh; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join("lessopen.sh").exists(), "planted: {}", err(&o));
    assert!(err(&o).contains(".lesskey"), "{}", err(&o));
}
