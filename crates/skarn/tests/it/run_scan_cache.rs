//! A second `skarn run` in an unchanged home lists the toolchains again
//! and opens the `PATH` programs again only where something changed
//! (issue 30, ADR 0290: the record of earlier scans in skarn's state).
//! Counted from outside: `getdents64` and `openat` of whole runs under
//! `strace -f -c`. Not timed.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_second_run_in_an_unchanged_home_lists_and_opens_far_less() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the system calls cannot be counted");
    }
    let t = TempDir::new("scan-cache");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    let home = t.dir("home");
    // 3 Python versions of 40 directories each, and a link in each.
    for v in 0..3 {
        let sp = home.join(format!(
            ".pyenv/versions/3.{v}.0/lib/python3.{v}/site-packages"
        ));
        for p in 0..40 {
            std::fs::create_dir_all(sp.join(format!("pkg{p}"))).unwrap();
        }
        std::os::unix::fs::symlink("/usr/lib", sp.join("linked")).unwrap();
    }
    // A PATH directory of 150 programs.
    let bin = t.dir("bin");
    for i in 0..150 {
        let p = bin.join(format!("prog{i}"));
        std::fs::write(&p, b"\x7fELF\x02\x01\x01\0\0\0\0\0").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [("PATH", OsStr::new(&path))];
    // (What changed within 2 s of a scan is not recorded.)
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let mut runs = Vec::new();
    for tag in ["first", "second"] {
        match crate::support_strace::run_calls(&t, &ws, &home, &env, tag) {
            Ok(c) => runs.push(c),
            Err(why) => skarn_test_support::skip!("{why}"),
        }
    }
    let n = |i: usize, k: &str| runs[i].get(k).copied().unwrap_or(0);
    eprintln!(
        "getdents64 {} -> {}, openat {} -> {}, statx {} -> {}",
        n(0, "getdents64"),
        n(1, "getdents64"),
        n(0, "openat"),
        n(1, "openat"),
        n(0, "statx"),
        n(1, "statx")
    );
    // 123 directories listed (two getdents64 each) and 150 programs
    // opened by the first run are not by the second.
    assert!(
        n(0, "getdents64") >= n(1, "getdents64") + 200,
        "the second run listed the toolchains again: {runs:?}"
    );
    assert!(
        n(0, "openat") >= n(1, "openat") + 250,
        "the second run opened the PATH programs again: {runs:?}"
    );
    assert!(n(1, "statx") <= n(0, "statx") + 20, "{runs:?}");
    // What a run is allowed to do is the same both times.
    let o = run_in(&ws, &home, &[], &["sh", "-c", "echo ok > f.txt"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}
