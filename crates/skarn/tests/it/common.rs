//! Helpers for running the `skarn` binary under test (`skarn run`,
//! sandbox probes, `skarn doctor`) and reading what it printed; every
//! check is made from outside the sandbox. Generic helpers (temporary
//! directories, built binaries, `is_root`, bridge fakes) come from
//! skarn-test-support.
// Each helper is used by some modules only, and some modules are built on
// some systems only.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `skarn` binary under test.
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_skarn"))
}

/// A program Cargo built next to `skarn` (`skarn-example-server`,
/// `skarn-hostile-server`, `skarn-conformance-server`), or a panic saying
/// how to build it.
pub fn sibling(name: &str) -> PathBuf {
    skarn_test_support::bin_next_to(exe(), name)
}

/// `skarn run --no-config --workspace WS <flags> -- <cmd>` with HOME=home.
pub fn run_in(ws: &Path, home: &Path, flags: &[&str], cmd: &[&str]) -> Output {
    run_command(ws, home, flags, cmd)
        .output()
        .expect("spawn skarn")
}

/// The command `run_in` runs, for a test that sets more on it first.
pub fn run_command(ws: &Path, home: &Path, flags: &[&str], cmd: &[&str]) -> Command {
    let mut c = Command::new(exe());
    c.arg("run")
        .arg("--no-config")
        .arg("--workspace")
        .arg(ws)
        .args(flags)
        .arg("--")
        .args(cmd)
        .env("HOME", home)
        // Records of granted directories go to the test's home.
        .env_remove("XDG_STATE_HOME")
        // An agent's marker would make the failure line speak to an agent.
        .env_remove("CLAUDECODE")
        .env_remove("GEMINI_CLI")
        .env_remove("SKARN_CALLER")
        .stdin(Stdio::null());
    c
}

/// Run a probe (`skarn __sandbox-helper probe ...`) inside the sandbox.
pub fn probe(ws: &Path, home: &Path, flags: &[&str], probe: &[&str]) -> Output {
    probe_command(ws, home, flags, probe)
        .output()
        .expect("spawn skarn")
}

/// The command `probe` runs, for a test that sets more on it first.
pub fn probe_command(ws: &Path, home: &Path, flags: &[&str], probe: &[&str]) -> Command {
    let e = exe();
    let e = e.to_str().unwrap();
    let mut f: Vec<&str> = vec!["--exec", e];
    f.extend_from_slice(flags);
    let mut cmd = vec![e, "__sandbox-helper", "probe"];
    cmd.extend_from_slice(probe);
    run_command(ws, home, &f, &cmd)
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

/// Host git in `ws`, with a fixed identity and no system or user config.
pub fn git(ws: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws)
        .output()
        .unwrap()
}

/// `skarn trust FILE` with `HOME=home`: the user trusts the workspace
/// configuration a test wrote (an untrusted one only narrows).
pub fn trust(file: &Path, home: &Path) {
    let o = Command::new(exe())
        .arg("trust")
        .arg(file)
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("spawn skarn trust");
    assert_eq!(code(&o), 0, "skarn trust: {}", err(&o));
}

/// Clears every workspace store of `home` when a test ends, passed or not
/// (an overlayfs work directory is mode 0, and go's module cache
/// read-only: plain removal cannot empty them).
pub struct Stores(pub PathBuf);

impl Drop for Stores {
    fn drop(&mut self) {
        let _ = Command::new(exe())
            .args(["cache", "clear", "--all"])
            .env("HOME", &self.0)
            .stdin(Stdio::null())
            .output();
    }
}

/// The `XDG_STATE_HOME` of the gateway, doctor and exec commands a test
/// starts without a HOME of its own: one directory per test process in
/// the system temp dir, so that sandboxed servers' state directories (and
/// the run records naming them) do not pile up in the real home; those of
/// finished test processes are removed here.
pub fn state_home() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        #[cfg(target_os = "linux")]
        if let Ok(rd) = std::fs::read_dir(&tmp) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = n.strip_prefix("skarn-it-state-")
                    && !Path::new("/proc").join(pid).exists()
                {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let d = tmp.join(format!("skarn-it-state-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
    .clone()
}

/// `program` installed as `home/.local/bin/<its name>` (a hard link, else a
/// copy): where no sandbox may write, so a trusted file's server with
/// `sandbox.enabled = false` runs it unconfined (ADR 0237; the build
/// directory is a project, which a sandboxed command may write).
pub fn installed(program: &Path, home: &Path) -> PathBuf {
    let dir = home.join(".local/bin");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join(program.file_name().unwrap());
    if !to.exists() && std::fs::hard_link(program, &to).is_err() {
        std::fs::copy(program, &to).unwrap();
    }
    to
}
