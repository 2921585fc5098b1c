//! System calls of one whole `skarn run` counted under `strace -f -c`
//! (issue 30's not-timed tests).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::exe;
use skarn_test_support::TempDir;

/// Whether `strace` can be started.
pub fn strace_installed() -> bool {
    Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The calls by name of one `skarn run -- /bin/true` in `ws` with `home`
/// (and `env`), or why they cannot be counted.
pub fn run_calls(
    t: &TempDir,
    ws: &Path,
    home: &Path,
    env: &[(&str, &OsStr)],
    tag: &str,
) -> Result<HashMap<String, u64>, String> {
    let out = t.path().join(format!("strace-{tag}.txt"));
    let mut c = Command::new("strace");
    c.args(["-f", "-c", "-o"])
        .arg(&out)
        .arg(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(ws)
        .args(["--", "/bin/true"])
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDECODE")
        .env_remove("GEMINI_CLI")
        .env_remove("SKARN_CALLER")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c
        .output()
        .map_err(|e| format!("strace cannot be started: {e}"))?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    if !o.status.success() || text.is_empty() {
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        if e.contains("ptrace") || text.is_empty() {
            return Err(format!("strace cannot trace here: {e}"));
        }
        panic!("the run failed under strace: {e}");
    }
    // `% time seconds usecs/call calls [errors] syscall`
    Ok(text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let n = w.get(3)?.parse::<u64>().ok()?;
            Some((w.last()?.to_string(), n))
        })
        .collect())
}
