//! Shared helpers for the `skarn run` / `skarn doctor` integration tests.
//! Every check is made from outside the sandbox.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_skarn"))
}

/// A temporary directory tree removed on drop, world-accessible so the
/// tests also work when run as an unprivileged user.
pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(tag: &str) -> Tmp {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "skarn-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
    pub fn dir(&self, rel: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(&p).unwrap();
        p
    }
    pub fn s(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `skarn run --no-config --workspace WS <flags> -- <cmd>` with HOME=home.
pub fn run_in(ws: &Path, home: &Path, flags: &[&str], cmd: &[&str]) -> Output {
    Command::new(exe())
        .arg("run")
        .arg("--no-config")
        .arg("--workspace")
        .arg(ws)
        .args(flags)
        .arg("--")
        .args(cmd)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("spawn skarn")
}

/// Run a probe (`skarn __sandbox-helper probe ...`) inside the sandbox.
pub fn probe(ws: &Path, home: &Path, flags: &[&str], probe: &[&str]) -> Output {
    let e = exe();
    let e = e.to_str().unwrap();
    let mut f: Vec<&str> = vec!["--exec", e];
    f.extend_from_slice(flags);
    let mut cmd = vec![e, "__sandbox-helper", "probe"];
    cmd.extend_from_slice(probe);
    run_in(ws, home, &f, &cmd)
}

pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn is_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// Whether a command works on the host (outside the sandbox).
pub fn host_has(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}
