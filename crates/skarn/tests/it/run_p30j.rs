//! Issue 30, goal 2 (p30j): the per-run scans' records are kept for
//! callers that alternate (an agent's `PATH` and the user's shell's): a
//! run with another `PATH` in between no longer replaces the record of
//! the `PATH` scripts and binaries, so the next run with the usual
//! `PATH` reads none of them again (counted from outside: `strace -f` of
//! the whole run opens them 0 times). And a directory a script's words
//! are only resolved THROUGH is kept by its identity: a busy directory
//! above the `PATH` (a new file in it) no longer makes the run read the
//! script again, while a real change below it (the named file's
//! directory replaced by one whose name leads into the workspace) is
//! still seen: the run cannot rewrite that workspace file, checked on
//! the host. As root and as uid 65534. Not timed.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::as_user;
use crate::support_traced::{opened, settle, traced_run};
use skarn_test_support::TempDir;

/// A run of `script` in `ws` with `PATH` = `bin` and the system's.
fn run(
    nobody: bool,
    home: &Path,
    bin: &Path,
    ws: &Path,
    script: &str,
    log: Option<&Path>,
) -> Output {
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let set = [("PATH", OsStr::new(&path))];
    traced_run(nobody, ws, home, &set, &[], script, log)
}

fn script(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// The run started and tried to rewrite `file`: the host's copy is
/// unchanged.
fn kept(o: &Output, file: &Path, what: &str) {
    assert!(
        out(o).contains("started"),
        "{what}: the run did not start: {}",
        err(o)
    );
    let now = std::fs::read_to_string(file).unwrap();
    assert_eq!(
        now,
        "echo real\n",
        "{what}: the run rewrote {} that a PATH script runs: {}{}",
        file.display(),
        out(o),
        err(o)
    );
}

/// Runs with `bin` until one (traced into `t/<tag>-N.txt`) opens none of
/// `files`; the opens of each traced run.
fn until_kept(
    nobody: bool,
    t: &TempDir,
    dirs: (&Path, &Path, &Path),
    files: &[&Path],
    tag: &str,
) -> Vec<Vec<usize>> {
    let (home, bin, ws) = dirs;
    let mut counts = Vec::new();
    for round in 0..3 {
        let o = run(nobody, home, bin, ws, "true", None);
        assert!(o.status.success(), "a run failed: {}", err(&o));
        let log = t.path().join(format!("{tag}-{round}.txt"));
        let o = run(nobody, home, bin, ws, "echo ok", Some(&log));
        assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
        counts.push(files.iter().map(|f| opened(&log, f)).collect::<Vec<_>>());
        if counts.last().is_some_and(|c| c.iter().all(|n| *n == 0)) {
            break;
        }
        settle();
    }
    counts
}

fn none_opened(counts: &[Vec<usize>], what: &str) {
    assert!(
        counts.last().is_some_and(|c| c.iter().all(|n| *n == 0)),
        "{what}: the run read the PATH's files again ({counts:?})"
    );
}

#[test]
fn a_run_with_another_path_keeps_the_records_of_the_usual_one() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the opened files cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30j-paths");
        let home = t.dir("home");
        let bin = t.dir("bin");
        let other = t.dir("other");
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        let tool = ws.join("tool.sh");
        std::fs::write(&tool, "echo real\n").unwrap();
        // A script (its words kept) and a binary (its "no script" kept).
        let a = bin.join("p30j-wrap");
        script(
            &a,
            "#!/bin/sh\nexec /usr/bin/env LC_ALL=C /usr/lib/p30j-none \"$@\"\n",
        );
        let b = bin.join("p30j-bin");
        std::fs::copy("/bin/true", &b).unwrap();
        script(
            &other.join("p30j-other"),
            "#!/bin/sh\nexec /usr/bin/env true\n",
        );
        if nobody {
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        settle();
        let dirs = (home.as_path(), bin.as_path(), ws.as_path());
        let counts = until_kept(nobody, &t, dirs, &[&a, &b], "warm");
        none_opened(&counts, "warming up");
        // A caller with another PATH, then the usual one again.
        let mut after = Vec::new();
        for round in 0..2 {
            let o = run(nobody, &home, &other, &ws, "true", None);
            assert!(
                o.status.success(),
                "the other PATH's run failed: {}",
                err(&o)
            );
            let log = t.path().join(format!("after-{round}.txt"));
            let o = run(nobody, &home, &bin, &ws, "echo ok", Some(&log));
            assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
            after.push(vec![opened(&log, &a), opened(&log, &b)]);
        }
        eprintln!("uid 65534: {nobody}: warming {counts:?}, after another PATH {after:?}");
        assert!(
            after.iter().all(|c| c == &[0, 0]),
            "a run with another PATH in between made the next run read the PATH's script and binary again ({after:?})"
        );
        // The script edited to run the workspace's `tool.sh`: still seen
        // after runs with either PATH.
        script(
            &a,
            &format!("#!/bin/sh\nexec sh {} \"$@\"\n", tool.display()),
        );
        if nobody {
            let _ = as_user(Command::new("true"), &bin).status();
        }
        let _ = run(nobody, &home, &other, &ws, "true", None);
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo started; echo 'echo planted' > tool.sh",
            None,
        );
        kept(
            &o,
            &tool,
            &format!("{} edited (uid 65534: {nobody})", a.display()),
        );
    }
}

#[test]
fn a_busy_directory_above_path_keeps_the_records_and_a_change_below_is_seen() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the opened files cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30j-busy");
        let home = t.dir("home");
        let bin = t.dir("bin");
        let lib = t.dir("lib");
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        let tool = ws.join("tool.sh");
        std::fs::write(&tool, "echo real\n").unwrap();
        std::fs::write(lib.join("tool.sh"), "echo lib\n").unwrap();
        // The script's word is resolved through the busy directory `t`.
        let a = bin.join("p30j-lib");
        let named = lib.join("tool.sh");
        script(
            &a,
            &format!("#!/bin/sh\nexec sh {} \"$@\"\n", named.display()),
        );
        if nobody {
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        settle();
        let dirs = (home.as_path(), bin.as_path(), ws.as_path());
        let counts = until_kept(nobody, &t, dirs, &[&a], "warm");
        none_opened(&counts, "warming up");
        // Something else changes in the directory above `bin` and `lib`.
        let mut busy = Vec::new();
        for round in 0..2 {
            std::fs::write(t.path().join(format!("busy-{round}")), "x").unwrap();
            let log = t.path().join(format!("busy-{round}.txt"));
            let o = run(nobody, &home, &bin, &ws, "echo ok", Some(&log));
            assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
            busy.push(opened(&log, &a));
        }
        eprintln!("uid 65534: {nobody}: warming {counts:?}, with a busy parent {busy:?}");
        assert!(
            busy.iter().all(|n| *n == 0),
            "a new file in a directory above the PATH made the run read its script again ({busy:?})"
        );
        // A real change below it: `lib` replaced by a directory whose
        // `tool.sh` leads to the workspace's.
        std::fs::rename(&lib, t.path().join("lib-old")).unwrap();
        std::fs::create_dir(&lib).unwrap();
        std::os::unix::fs::symlink(&tool, &named).unwrap();
        if nobody {
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo started; echo 'echo planted' > tool.sh",
            None,
        );
        kept(
            &o,
            &tool,
            &format!("{} replaced (uid 65534: {nobody})", lib.display()),
        );
    }
}
