//! Issue 30, goal 2 (p30h): what each `PATH` script names (its path
//! words, each absolute word resolved) is kept per script in skarn's
//! state with the script's stamp and those of the directories its words
//! resolved through; a run with nothing changed reads no script again
//! (counted from outside: `strace -f` of a whole run opens the script 0
//! times). The protection side: a script edited, or a new script added,
//! after a run kept the record still names the workspace's file, and the
//! run leaves that file unchanged on the host. As root and as uid 65534.
//! Not timed.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::as_user;
use crate::support_traced::{opened, settle, traced_run};
use skarn_test_support::TempDir;

/// A run of `script` in `ws` with `PATH` = `bin` and the system's (as
/// uid 65534 with `nobody`), under `strace -f` into `log` when given.
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

/// The run tried to rewrite `file`: the host's copy is unchanged.
fn kept(o: &Output, file: &Path, what: &str) {
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

#[test]
fn path_scripts_are_not_read_again_and_a_changed_or_new_one_is_seen() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the opened files cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30h-scripts");
        let home = t.dir("home");
        let bin = t.dir("bin");
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        let tool = ws.join("tool.sh");
        let other = ws.join("other.sh");
        for f in [&tool, &other] {
            std::fs::write(f, "echo real\n").unwrap();
        }
        // A wrapper naming only system paths (resolved through `/usr`).
        let a = bin.join("p30h-wrap");
        script(
            &a,
            "#!/bin/sh\nexec /usr/bin/env LC_ALL=C /usr/lib/p30h-none \"$@\"\n",
        );
        if nobody {
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        settle();
        let mut counts = Vec::new();
        for round in 0..3 {
            let o = run(nobody, &home, &bin, &ws, "true", None);
            assert!(o.status.success(), "the first run failed: {}", err(&o));
            let log = t.path().join(format!("strace-{round}.txt"));
            let o = run(nobody, &home, &bin, &ws, "echo ok", Some(&log));
            assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
            counts.push(opened(&log, &a));
            if counts.last() == Some(&0) {
                break;
            }
            settle();
        }
        eprintln!("uid 65534: {nobody}: the PATH script opened by later runs: {counts:?}");
        assert_eq!(
            counts.last(),
            Some(&0),
            "a run with unchanged PATH scripts read the script again ({counts:?})"
        );
        // A new script added after the record was kept names the
        // workspace's `other.sh`: the run cannot rewrite it.
        let b = bin.join("p30h-new");
        script(&b, &format!("#!/bin/sh\nexec sh {}\n", other.display()));
        if nobody {
            let _ = as_user(Command::new("true"), &bin).status();
        }
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo 'echo planted' > other.sh",
            None,
        );
        kept(
            &o,
            &other,
            &format!("{} added (uid 65534: {nobody})", b.display()),
        );
        std::fs::remove_file(&b).unwrap();
        // The kept script edited (same directory, new text) to run the
        // workspace's `tool.sh`, after a run kept the record again.
        settle();
        let _ = run(nobody, &home, &bin, &ws, "true", None);
        script(
            &a,
            &format!("#!/bin/sh\nexec sh ~/../ws/tool.sh {}\n", "\"$@\""),
        );
        if nobody {
            let _ = as_user(Command::new("true"), &bin).status();
        }
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo 'echo planted' > tool.sh",
            None,
        );
        kept(
            &o,
            &tool,
            &format!("{} edited (uid 65534: {nobody})", a.display()),
        );
    }
}

/// A persistence name replaced by a link between two runs (the names are
/// told missing by their directories' listings now): the second run keeps
/// what the link leads to read-only, checked on the host.
#[test]
fn a_persistence_name_made_a_link_between_runs_is_followed() {
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30h-names");
        let home = t.dir("home");
        let bin = t.dir("bin");
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        std::fs::create_dir_all(ws.join("cfg")).unwrap();
        let hook = ws.join("cfg/pre-commit");
        std::fs::write(&hook, "echo real\n").unwrap();
        if nobody {
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        let o = run(nobody, &home, &bin, &ws, "true", None);
        assert!(o.status.success(), "the first run failed: {}", err(&o));
        // Between the runs: the repository's hooks directory becomes a
        // link to `cfg` (git runs `cfg/pre-commit` as the hook).
        let hooks = ws.join(".git/hooks");
        let _ = std::fs::remove_dir_all(&hooks);
        std::os::unix::fs::symlink("../cfg", &hooks).unwrap();
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo 'echo planted' > cfg/pre-commit",
            None,
        );
        kept(
            &o,
            &hook,
            &format!(".git/hooks made a link (uid 65534: {nobody})"),
        );
        // And `.envrc` made a link to a workspace file: direnv reads it.
        let target = ws.join("cfg/envrc");
        std::fs::write(&target, "echo real\n").unwrap();
        std::os::unix::fs::symlink("cfg/envrc", ws.join(".envrc")).unwrap();
        if nobody {
            let _ = as_user(Command::new("true"), &ws).status();
        }
        let o = run(
            nobody,
            &home,
            &bin,
            &ws,
            "echo 'echo planted' > cfg/envrc",
            None,
        );
        kept(
            &o,
            &target,
            &format!(".envrc made a link (uid 65534: {nobody})"),
        );
    }
}
