//! Issue 30, goal 2 (p30k): peak memory of `skarn run`. The record of
//! the toolchain listings (ADR 0290, up to `scan_cache_max`, 4 MiB by
//! default) was parsed into one string per name and every listing taken
//! from it copied again into the scan's new record: about five times the
//! record's size on the heap of the process that stays for the whole run.
//! Now the record is held once and listings refer to it.
//!
//! Checked from outside: the peak resident memory of whole runs (the
//! `ru_maxrss` of `wait4`: the largest of skarn's processes) with a home
//! holding a large toolchain tree, its listings kept, against the same run
//! with an empty home. As root and as uid 65534. Not timed.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::exe;
use crate::support_secret_sources::{as_user, users};
use skarn_test_support::TempDir;

/// Toolchain versions below `~/.pyenv/versions`, directories in each,
/// files in each directory: 36,369 entries (a scan takes 40,000 at most,
/// 4,096 from one place).
const VERSIONS: usize = 9;
const DIRS: usize = 40;
const FILES: usize = 100;

/// A long module name (as site-packages has), so the record is large.
fn name(i: usize) -> String {
    format!("a_rather_long_module_name_as_site_packages_holds_them_{i:05}.py")
}

fn toolchains(home: &Path) {
    for v in 0..VERSIONS {
        let lib = home.join(format!(".pyenv/versions/3.{v}.0/lib"));
        for d in 0..DIRS {
            let dir = lib.join(format!("package_{d:03}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..FILES {
                std::fs::write(dir.join(name(f)), b"").unwrap();
            }
        }
    }
}

/// The size of the kept toolchain listings (0: none kept).
fn record(home: &Path) -> u64 {
    std::fs::read_dir(home.join(".local/state/skarn/scan-cache"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("toolchains-"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// A default `skarn run -- /bin/true` in `ws` with `HOME` = `home`; its
/// peak resident memory in KiB (of skarn and every process it waited for).
/// (As uid 65534 through `setpriv` when `nobody`: no `chown` between
/// runs, which would move every listed directory's change time.)
fn peak_kib(nobody: bool, root: &Path, ws: &Path, home: &Path) -> i64 {
    let mut c = Command::new("setpriv");
    if nobody {
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
    }
    c.arg("--").arg(exe()).args(["run", "--", "/bin/true"]);
    c.current_dir(ws).env("HOME", home);
    for k in ["XDG_STATE_HOME", "CLAUDECODE", "GEMINI_CLI", "SKARN_CALLER"] {
        c.env_remove(k);
    }
    let log = root.join("stderr.log");
    // (Reaped by `wait4` below, which also gives its resource usage.)
    #[allow(clippy::zombie_processes)]
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for (the `Child` is
    // never waited); `status` and `ru` are valid for writes.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the run failed ({status}): {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    ru.ru_maxrss
}

#[test]
fn kept_toolchain_listings_are_held_once_not_copied() {
    for nobody in users() {
        let root = TempDir::new("p30k-listings");
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let st = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(st.success());
        let empty = root.path().join("empty-home");
        let big = root.path().join("home");
        std::fs::create_dir_all(&empty).unwrap();
        toolchains(&big);
        if nobody {
            // (Given to uid 65534 once, before the wait.)
            as_user(Command::new("true"), root.path());
        }
        // Listings of directories changed within 2 s are not kept.
        std::thread::sleep(std::time::Duration::from_millis(2200));
        // The first runs keep their records; the second read them.
        peak_kib(nobody, root.path(), &ws, &empty);
        peak_kib(nobody, root.path(), &ws, &big);
        let kept = record(&big);
        assert!(
            kept > 1 << 20,
            "uid 65534: {nobody}: the toolchain listings were not kept ({kept} bytes)"
        );
        let base = peak_kib(nobody, root.path(), &ws, &empty);
        let with = peak_kib(nobody, root.path(), &ws, &big);
        let kept_kib = i64::try_from(kept / 1024).unwrap();
        let grown = with - base;
        eprintln!("uid 65534: {nobody}: {kept_kib} KiB kept: {base} -> {with} KiB");
        // Held once, with its index and one directory's listing at a
        // time: the record's size and a bounded rest (it was about five
        // times the record's size: 11 MiB more for 2.3 MiB here).
        assert!(
            grown < kept_kib * 2 + 1024,
            "uid 65534: {nobody}: a run whose home keeps {kept_kib} KiB of listings \
             peaks {grown} KiB above one with an empty home ({base} -> {with} KiB)"
        );
    }
}
