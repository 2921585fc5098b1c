//! Issue 30, goal 2 (p30e): the host-side preparation keeps what it
//! worked out about the host (ADR 0339). The launcher list (desktop
//! entries, units, D-Bus services, cron tables, the `PATH` links) was
//! read and every link resolved twice a run (about 28,000 `readlink`
//! calls here); it is now kept in skarn's state with the stamp of every
//! directory and file it was read from. Counted from outside (`strace
//! -f` of whole runs: a second run opens no launcher file), and the
//! protection side: a launcher file changed or added after a run still
//! refuses the installation it names as a workspace, its program left
//! the host's. As root and as uid 65534. Not timed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use crate::support_traced::{self, opened, settle, traced_run};
use skarn_test_support::TempDir;

const FLAG: &str = "--allow-non-project-workspace";
const PLANT: &str = "printf '#!/bin/sh\\necho planted\\n' > svcd && echo PLANTED";

/// A run of `script` in `ws` (uid 65534 through `setpriv` when
/// `nobody`), under `strace -f` into `log` when given.
fn run(
    nobody: bool,
    home: &Path,
    xdg: &Path,
    ws: &Path,
    script: &str,
    log: Option<&Path>,
) -> Output {
    let path = OsStr::new("/usr/local/bin:/usr/bin:/bin");
    let set = [("PATH", path), ("XDG_DATA_DIRS", xdg.as_os_str())];
    traced_run(nobody, ws, home, &set, &["XDG_CONFIG_DIRS"], script, log)
}

fn refused(o: &Output, what: &str) {
    support_traced::refused(o, FLAG, what);
}

#[test]
fn the_launcher_list_is_kept_and_a_changed_launcher_is_seen() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the opened files cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30e-launchers");
        let home = t.dir("home");
        if nobody {
            // (Given to uid 65534 once: a later chown would move the times.)
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        // Outside the run's home: the launcher directory and an
        // installation (a repository) whose program a launcher may name.
        // (In `/opt` as root: every directory a launcher's program is
        // resolved through is stamped, and `/tmp` changes all the time.)
        let o = if is_root() {
            TempDir::new_in("/opt", "p30e-inst")
        } else {
            TempDir::new("p30e-inst")
        };
        let top = std::fs::canonicalize(o.path()).unwrap();
        let apps = top.join("xdg/applications");
        std::fs::create_dir_all(&apps).unwrap();
        let svc = top.join("app/svc");
        std::fs::create_dir_all(&svc).unwrap();
        let prog = svc.join("svcd");
        std::fs::write(&prog, "#!/bin/sh\necho real\n").unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
        };
        mode(&prog, 0o755);
        assert!(git(&svc, &["init", "-q"]).status.success());
        let entry = |p: &Path| {
            format!(
                "[Desktop Entry]\nType=Application\nName=x\nExec={} %U\n",
                p.display()
            )
        };
        let a = apps.join("p30e-a.desktop");
        std::fs::write(&a, entry(Path::new("/opt/p30e-elsewhere/bin/x"))).unwrap();
        for d in [top.clone(), top.join("xdg"), apps.clone(), top.join("app")] {
            mode(&d, 0o755);
        }
        mode(&a, 0o644);
        if nobody {
            let st = Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&svc)
                .status()
                .unwrap();
            assert!(st.success());
        }
        let xdg = top.join("xdg");
        settle();
        // The first run works the list out and keeps it; a second run
        // with nothing changed opens no launcher file. (Other tests plant
        // launchers in the system's directories meanwhile: a run after
        // such a change works the list out again; tried three times.)
        let mut counts = Vec::new();
        for round in 0..3 {
            let _ = run(nobody, &home, &xdg, &svc, "true", None);
            let log = t.path().join(format!("strace-{round}.txt"));
            let o = run(nobody, &home, &xdg, &svc, "echo ok", Some(&log));
            assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
            counts.push(opened(&log, &a));
            if counts.last() == Some(&0) {
                break;
            }
            settle();
        }
        eprintln!("uid 65534: {nobody}: the desktop entry opened by later runs: {counts:?}");
        assert_eq!(
            counts.last(),
            Some(&0),
            "a run with unchanged launchers read a launcher file again ({counts:?})"
        );
        // The entry changed after the list was kept: it now names the
        // workspace's program. The run sees it and refuses.
        std::fs::write(&a, entry(&prog)).unwrap();
        let o = run(nobody, &home, &xdg, &svc, PLANT, None);
        refused(
            &o,
            &format!("{} changed (uid 65534: {nobody})", a.display()),
        );
        // A new entry beside it, after the list was kept again.
        std::fs::write(&a, entry(Path::new("/opt/p30e-elsewhere/bin/x"))).unwrap();
        settle();
        let _ = run(nobody, &home, &xdg, &svc, "true", None);
        let b: PathBuf = apps.join("p30e-b.desktop");
        std::fs::write(&b, entry(&prog)).unwrap();
        mode(&b, 0o644);
        let o = run(nobody, &home, &xdg, &svc, PLANT, None);
        refused(&o, &format!("{} added (uid 65534: {nobody})", b.display()));
        assert!(err(&o).contains(&b.display().to_string()), "{}", err(&o));
        // What the launcher starts next is the host's own program.
        let r = Command::new(&prog).output().unwrap();
        assert_eq!(
            out(&r),
            "real\n",
            "uid 65534: {nobody}: the launcher ran the plant"
        );
    }
}
