//! Issue 30, goal 2 (p30): a run's start-up does not list the home's
//! unchanged directories again. The home link scan (every link a host
//! program passes through) listed `~/.config`, `~/.local` and the rest
//! eight levels deep on every run (a `pnpm` store alone: about 1,000
//! directories, 4,000 system calls); it now reuses the listing of a
//! directory whose device, inode, modification and change times are
//! unchanged (ADR 0325). Counted from outside (`strace -f` of whole runs,
//! the directories opened below the tree), as root and as uid 65534; the
//! protection side: a link found through a kept listing still keeps its
//! target in the workspace read-only. Not timed.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use crate::support_secret_sources::as_user;
use skarn_test_support::TempDir;

/// The directories below `tree` one whole run opened (`strace -f`), the
/// run made as uid 65534 (`nobody`, through `setpriv`) or as the caller.
fn dirs_opened(nobody: bool, t: &TempDir, ws: &Path, home: &Path, tree: &Path, tag: &str) -> usize {
    let log = t.path().join(format!("strace-{tag}.txt"));
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=openat,open", "-o"])
        .arg(&log);
    if nobody {
        c.args([
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]);
    }
    c.arg(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(ws)
        .args(["--", "/bin/true"])
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDECODE")
        .env_remove("GEMINI_CLI")
        .env_remove("SKARN_CALLER")
        .stdin(Stdio::null());
    let o = c.output().expect("strace");
    assert!(o.status.success(), "the run failed: {}", err(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    let needle = format!("\"{}/", tree.display());
    text.lines()
        .filter(|l| l.contains("O_DIRECTORY") && l.contains(&needle))
        .count()
}

#[test]
fn a_second_run_does_not_list_the_homes_unchanged_directories_again() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the listings cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30-home-listings");
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        std::fs::write(ws.join("tools/hook.sh"), "original\n").unwrap();
        let home = t.dir("home");
        // 300 directories of a tool's configuration (walked 8 levels
        // deep), and a link among them to a workspace file, which a host
        // program then runs.
        let tree = home.join(".config/p30tool");
        for i in 0..150 {
            std::fs::create_dir_all(tree.join(format!("d{i}/sub"))).unwrap();
        }
        std::os::unix::fs::symlink(ws.join("tools/hook.sh"), tree.join("d7/sub/hook")).unwrap();
        if nobody {
            // (Given to uid 65534: its own home and workspace.)
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        // (A directory changed within 2 s of a scan is not recorded.)
        std::thread::sleep(std::time::Duration::from_millis(2200));
        let first = dirs_opened(nobody, &t, &ws, &home, &tree, "first");
        let second = dirs_opened(nobody, &t, &ws, &home, &tree, "second");
        eprintln!("uid 65534: {nobody}: directories below the tree opened: {first} -> {second}");
        assert!(first >= 300, "the first run did not list the tree: {first}");
        assert!(
            second <= 10,
            "the second run listed the unchanged tree again ({second} directories opened)"
        );
        // The link found through the kept listing still protects its
        // target: the run cannot change what the host program runs.
        let c = run_command(
            &ws,
            &home,
            &[],
            &["sh", "-c", "echo evil > tools/hook.sh; echo ran"],
        );
        let mut c = if nobody { as_user(c, t.path()) } else { c };
        let o = c.output().unwrap();
        assert!(out(&o).contains("ran"), "the run did not run: {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(ws.join("tools/hook.sh")).unwrap(),
            "original\n",
            "a run changed a file a home link leads to: {}",
            err(&o)
        );
    }
}
