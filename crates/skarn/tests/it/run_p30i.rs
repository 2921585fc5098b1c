//! Issue 30, goal 2 (p30i): the launcher list (ADR 0339) is kept per
//! set of inputs and checked once per run. Two callers with different
//! `PATH`s (an agent's and a user's shell) used to replace each other's
//! record, so each of their runs worked the whole list out again; and one
//! run read and checked its record twice (the workspace check, the
//! planner). Counted from outside (`strace -f` of whole runs: after runs
//! with two `PATH`s, a run with the first opens no launcher file and the
//! record once), and the protection side: a launcher file changed after
//! both were kept still refuses the installation it names as a workspace
//! for both callers, its program left the host's. As root and as uid
//! 65534. Not timed.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use crate::support_traced::{self, opened, opened_matching, settle, traced_run};
use skarn_test_support::TempDir;

const FLAG: &str = "--allow-non-project-workspace";
const PLANT: &str = "printf '#!/bin/sh\\necho planted\\n' > svcd && echo PLANTED";
const FIRST: &str = "/usr/local/bin:/usr/bin:/bin";
/// Other callers' `PATH`s (the first whose record lands beside the
/// first's is used).
const OTHERS: &[&str] = &[
    "/usr/bin:/bin",
    "/bin:/usr/bin",
    "/usr/local/bin:/bin",
    "/usr/local/sbin:/usr/bin:/bin",
    "/usr/sbin:/usr/bin:/bin",
    "/sbin:/usr/bin:/bin",
    "/usr/local/bin:/usr/sbin:/usr/bin",
    "/usr/bin",
];

struct Setup<'a> {
    nobody: bool,
    home: &'a Path,
    xdg: &'a Path,
    ws: &'a Path,
}

/// A run of `script` (uid 65534 through `setpriv` when `nobody`), with
/// `path` as `PATH`, under `strace -f` into `log` when given.
fn run(s: &Setup, path: &str, script: &str, log: Option<&Path>) -> Output {
    let set = [
        ("PATH", OsStr::new(path)),
        ("XDG_DATA_DIRS", s.xdg.as_os_str()),
    ];
    traced_run(
        s.nobody,
        s.ws,
        s.home,
        &set,
        &["XDG_CONFIG_DIRS"],
        script,
        log,
    )
}

fn refused(o: &Output, what: &str) {
    support_traced::refused(o, FLAG, what);
}

/// The launcher records kept in `home`'s state.
fn records(home: &Path) -> usize {
    std::fs::read_dir(home.join(".local/state/skarn/scan-cache"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("launchers-"))
                .count()
        })
        .unwrap_or(0)
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
}

fn entry(p: &Path) -> String {
    format!(
        "[Desktop Entry]\nType=Application\nName=x\nExec={} %U\n",
        p.display()
    )
}

#[test]
fn launcher_lists_of_two_paths_are_kept_side_by_side_and_still_see_a_change() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the opened files cannot be counted");
    }
    for nobody in crate::support_secret_sources::users() {
        let t = TempDir::new("p30i-launchers");
        let home = t.dir("home");
        if nobody {
            // (Given to uid 65534 once: a later chown would move the times.)
            let _ = as_user(Command::new("true"), t.path()).status();
        }
        // Outside `/tmp` as root (every directory a launcher's program is
        // resolved through is stamped, and `/tmp` changes all the time);
        // in `/srv`, not `/opt`, where it would change what run_p30e's
        // launcher list is read from while that test counts.
        let o = if is_root() {
            let quiet = if Path::new("/srv").is_dir() {
                "/srv"
            } else {
                "/opt"
            };
            TempDir::new_in(quiet, "p30i-inst")
        } else {
            TempDir::new("p30i-inst")
        };
        let top = std::fs::canonicalize(o.path()).unwrap();
        let apps = top.join("xdg/applications");
        std::fs::create_dir_all(&apps).unwrap();
        let svc = top.join("app/svc");
        std::fs::create_dir_all(&svc).unwrap();
        let prog = svc.join("svcd");
        std::fs::write(&prog, "#!/bin/sh\necho real\n").unwrap();
        mode(&prog, 0o755);
        assert!(git(&svc, &["init", "-q"]).status.success());
        let a = apps.join("p30i-a.desktop");
        std::fs::write(&a, entry(Path::new("/opt/p30i-elsewhere/bin/x"))).unwrap();
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
        let s = Setup {
            nobody,
            home: &home,
            xdg: &xdg,
            ws: &svc,
        };
        settle();
        // A run with the first `PATH`, then with another: two records.
        // (Other tests plant launchers in the system's directories
        // meanwhile: tried up to eight times; three were not enough in
        // one whole-suite run.)
        let mut counts = Vec::new();
        let mut other = OTHERS[0];
        for round in 0..8 {
            let _ = run(&s, FIRST, "true", None);
            for p in OTHERS {
                other = p;
                let _ = run(&s, other, "true", None);
                if records(&home) >= 2 {
                    break;
                }
            }
            let log = t.path().join(format!("strace-{round}.txt"));
            let o = run(&s, FIRST, "echo ok", Some(&log));
            assert!(out(&o).contains("ok"), "the run failed: {}", err(&o));
            let entry_reads = opened(&log, &a);
            let record_reads = opened_matching(&log, "/scan-cache/launchers-");
            counts.push((entry_reads, record_reads));
            if counts.last() == Some(&(0, 1)) {
                break;
            }
            settle();
        }
        eprintln!(
            "uid 65534: {nobody}: (desktop entry opens, launcher record opens) of the \
             run with the first PATH after one with {other}: {counts:?}"
        );
        assert_eq!(
            counts.last(),
            Some(&(0, 1)),
            "after a run with another PATH, a run with unchanged launchers read a \
             launcher file again or its record more than once ({counts:?})"
        );
        // The entry changed after both lists were kept: it now names the
        // workspace's program. Runs with either `PATH` see it and refuse.
        std::fs::write(&a, entry(&prog)).unwrap();
        for p in [FIRST, other] {
            let o = run(&s, p, PLANT, None);
            refused(
                &o,
                &format!("{} changed (PATH {p}, uid 65534: {nobody})", a.display()),
            );
            assert!(err(&o).contains(&a.display().to_string()), "{}", err(&o));
        }
        // What the launcher starts next is the host's own program.
        let r = Command::new(&prog).output().unwrap();
        assert_eq!(
            out(&r),
            "real\n",
            "uid 65534: {nobody}: the launcher ran the plant"
        );
    }
}
