//! Runs counted from outside (issue 30's record tests: run_p30e,
//! run_p30h, run_p30i): `skarn run --no-config -- sh -c SCRIPT` in a
//! workspace, as uid 65534 through `setpriv` when asked, under `strace
//! -f` (opens only) into a log when given; how often a file was opened;
//! a workspace refusal; the wait after which a scan's facts are kept.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{err, exe, out};

/// A run of `script` in `ws` with `HOME` = `home`, the variables `set`
/// and without `unset` (and the agent markers), traced into `log`.
pub fn traced_run(
    nobody: bool,
    ws: &Path,
    home: &Path,
    set: &[(&str, &OsStr)],
    unset: &[&str],
    script: &str,
    log: Option<&Path>,
) -> Output {
    let mut c = match log {
        Some(log) => {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "-e", "trace=openat,open", "-o"])
                .arg(log);
            c
        }
        None => Command::new("env"),
    };
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
        .args(["run", "--no-config", "--", "sh", "-c", script])
        .current_dir(ws)
        .env("HOME", home);
    for (k, v) in set {
        c.env(k, v);
    }
    for k in unset
        .iter()
        .chain(&["XDG_STATE_HOME", "CLAUDECODE", "GEMINI_CLI", "SKARN_CALLER"])
    {
        c.env_remove(k);
    }
    c.stdin(Stdio::null()).output().expect("spawn skarn")
}

/// How often a file whose open line holds `needle` was opened in `log`.
pub fn opened_matching(log: &Path, needle: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

/// How often `file` was opened in `log`.
pub fn opened(log: &Path, file: &Path) -> usize {
    opened_matching(log, &format!("\"{}\"", file.display()))
}

/// The run was refused as a workspace, saying `flag`, and the planted
/// step did not run.
pub fn refused(o: &Output, flag: &str, what: &str) {
    assert!(
        !o.status.success() && !out(o).contains("PLANTED"),
        "{what}: the workspace was accepted: {}{}",
        out(o),
        err(o)
    );
    assert!(
        err(o).contains(flag),
        "{what}: no clear refusal: {}",
        err(o)
    );
}

/// What changed within 2 s of a scan is not kept: wait past it.
pub fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}
