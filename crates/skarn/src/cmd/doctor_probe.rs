//! One escape attempt of `skarn doctor --self-test`: a probe run through
//! `skarn run` (this binary's `__sandbox-helper probe`), its own words, and
//! the record of what was decided from outside.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

#[derive(Debug, Serialize)]
pub(super) struct Attempt {
    pub(super) attempt: String,
    /// For an escape attempt: it got through. For a usability check
    /// (`works_check`): what must work inside did not.
    pub(super) escaped: bool,
    pub(super) detail: String,
    /// A usability check (something the sandbox must allow), not an
    /// escape attempt: printed as `works`/`BROKEN`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) works_check: bool,
}

impl Attempt {
    /// The word for this result in the text listing.
    pub(super) fn verdict(&self) -> &'static str {
        match (self.works_check, self.escaped) {
            (false, false) => "blocked",
            (false, true) => "ESCAPED",
            (true, false) => "works",
            (true, true) => "BROKEN",
        }
    }
}

/// A scratch directory removed on drop.
pub(super) struct Scratch(pub(super) PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn sandboxed(
    exe: &Path,
    root: &Path,
    net: &str,
    extra: &[&str],
    probe: &[&str],
) -> (i32, String) {
    let out = Command::new(exe)
        .arg("run")
        .arg("--no-config")
        .arg("--preset")
        .arg("none")
        .arg("--workspace")
        .arg(root.join("ws"))
        .arg("--net")
        .arg(net)
        .arg("--exec")
        .arg(exe)
        .args(extra)
        .arg("--")
        .arg(exe)
        .arg("__sandbox-helper")
        .arg("probe")
        .args(probe)
        .env("HOME", root.join("home"))
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        ),
        Err(e) => (-1, e.to_string()),
    }
}

/// The probe's own view, worded so it is not mistaken for the verdict
/// (which is always decided from outside).
pub(super) fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    let l = if let Some(r) = l.strip_prefix("ESCAPED ") {
        format!("inside: succeeded: {r}")
    } else if let Some(r) = l.strip_prefix("blocked ") {
        format!("inside: failed: {r}")
    } else {
        format!("inside: {l}")
    };
    l.chars().take(90).collect()
}

/// Run the vsock probe; while it runs (it holds the port until its stdin
/// closes, if it got it), check from outside whether the port is taken.
pub(super) fn vsock_attempt(exe: &Path, root: &Path, net: &str) -> (bool, String) {
    use std::io::BufRead;
    let port = 50_000 + std::process::id() % 10_000;
    let child = Command::new(exe)
        .args(["run", "--no-config", "--preset", "none", "--workspace"])
        .arg(root.join("ws"))
        .args(["--net", net, "--exec"])
        .arg(exe)
        .arg("--")
        .arg(exe)
        .args(["__sandbox-helper", "probe", "vsock", &port.to_string()])
        .env("HOME", root.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return (false, "could not start the probe".into());
    };
    let mut line = String::new();
    if let Some(o) = child.stdout.take() {
        let _ = std::io::BufReader::new(o).read_line(&mut line);
    }
    let free = skarn_sandbox::linux::probe::host_can_bind_vsock(port);
    drop(child.stdin.take());
    let _ = child.wait();
    match free {
        Some(free) => (!free, first_line(&line)),
        None => (
            line.starts_with("ESCAPED"),
            format!(
                "{} (no vsock on the host: inside view only)",
                first_line(&line)
            ),
        ),
    }
}

/// Whether a connection is waiting on `l` (a short grace for the proxy's
/// connect to land).
pub(super) fn wait_accept(l: &std::net::TcpListener) -> bool {
    for _ in 0..20 {
        if l.accept().is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    false
}
