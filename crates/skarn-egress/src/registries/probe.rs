//! Running a toolchain's own program for discovery without trusting
//! anything a sandboxed command could have written.
//!
//! Discovery runs on the host, unconfined, before the sandbox exists. The
//! workspace and every other write grant (the writable roots) may hold
//! whatever an earlier sandboxed command left there, so a probe
//! - starts in a neutral directory (the filesystem root), so no tool finds
//!   a project file, package or configuration of the workspace;
//! - looks programs up on a PATH without the entries that are relative,
//!   empty or inside a writable root, resolves the program itself, and
//!   skips the tool when the program (or its canonical target) lies inside
//!   a writable root;
//! - gets only the variables the tools' configuration and version
//!   managers need ([`kept_var`]; no preloads such as `NODE_OPTIONS`),
//!   without those that name a path inside a writable root in any form
//!   (quoted, relative to `/`, through `..`), and a `HOME` that holds
//!   nothing when the real one is inside a writable root.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `HOME` for the probes when the real one is writable from the sandbox.
const NO_HOME: &str = "/nonexistent";

/// The writable roots and the environment the probes run with.
#[derive(Debug, Clone)]
pub(super) struct Probe {
    roots: Vec<PathBuf>,
    env: Vec<(OsString, OsString)>,
    path: Vec<PathBuf>,
}

impl Probe {
    /// A probe for writable roots `writable` (absolute paths) and the
    /// caller's environment `env`; what it leaves out goes to `notes`.
    pub(super) fn new(
        writable: &[PathBuf],
        env: impl IntoIterator<Item = (OsString, OsString)>,
        notes: &mut Vec<String>,
    ) -> Probe {
        let mut roots: Vec<PathBuf> = Vec::new();
        for r in writable {
            roots.push(r.clone());
            if let Ok(c) = std::fs::canonicalize(r) {
                roots.push(c);
            }
        }
        let mut p = Probe {
            roots,
            env: Vec::new(),
            path: Vec::new(),
        };
        for (k, v) in env {
            if !k.to_str().is_some_and(kept_var) {
                continue;
            }
            match k.to_str() {
                Some("PATH") => p.path = p.sanitize_path(&v, notes),
                // The caller's directory: the probes never start there.
                Some("PWD" | "OLDPWD") => {}
                Some("HOME") if p.untrusted(Path::new(&v)) => {
                    notes.push(format!(
                        "HOME ({}) is writable from the sandbox: the user's own npm, pip and \
                         cargo configuration is not read",
                        Path::new(&v).display()
                    ));
                    p.env.push((k, NO_HOME.into()));
                }
                _ if p.names_untrusted(&v) => notes.push(format!(
                    "{} names a path writable from the sandbox: left out of the probes",
                    k.to_string_lossy()
                )),
                _ => p.env.push((k, v)),
            }
        }
        p
    }

    /// Whether `p`, or the file it resolves to, lies inside a writable root.
    pub(super) fn untrusted(&self, p: &Path) -> bool {
        let inside = |p: &Path| self.roots.iter().any(|r| p.starts_with(r));
        inside(p) || std::fs::canonicalize(p).is_ok_and(|c| inside(&c))
    }

    /// Whether a variable's value names a path inside a writable root:
    /// an absolute part (split at `:`, `=`, `,`, `;`, quotes or spaces)
    /// that is, or resolves, inside one; or a writable root's path
    /// anywhere in the text, with or without its leading `/` (a quoted,
    /// relative or `..` form of it).
    fn names_untrusted(&self, v: &OsStr) -> bool {
        let text = v.to_string_lossy();
        let named = self.roots.iter().any(|r| {
            let r = r.to_string_lossy();
            let bare = r.trim_start_matches('/');
            !bare.is_empty() && text.contains(bare)
        });
        named
            || text
                .split([':', '=', ',', ';', ' ', '\t', '\n', '"', '\''])
                .filter(|part| part.starts_with('/'))
                .any(|part| self.untrusted(Path::new(part)))
    }

    fn sanitize_path(&self, v: &OsStr, notes: &mut Vec<String>) -> Vec<PathBuf> {
        let mut kept = Vec::new();
        for d in std::env::split_paths(v) {
            if !d.is_absolute() {
                notes.push(format!(
                    "PATH entry {:?} is relative: not searched for the probes",
                    d.display().to_string()
                ));
            } else if self.untrusted(&d) {
                notes.push(format!(
                    "PATH entry {} is writable from the sandbox: not searched for the probes",
                    d.display()
                ));
            } else {
                kept.push(d);
            }
        }
        kept
    }

    /// A variable of the probes' environment.
    pub(super) fn var(&self, k: &str) -> Option<&OsStr> {
        self.env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_os_str())
    }

    /// The probes' environment variables (valid UTF-8 only).
    pub(super) fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.env
            .iter()
            .filter_map(|(k, v)| Some((k.to_str()?, v.to_str()?)))
    }

    /// `name` on the sanitized PATH, or why it is not used.
    fn resolve(&self, name: &str) -> Result<PathBuf, String> {
        let found = self
            .path
            .iter()
            .map(|d| d.join(name))
            .find(|c| is_executable(c))
            .ok_or_else(|| {
                format!("{name} not found on PATH (entries writable from the sandbox left out)")
            })?;
        if self.untrusted(&found) {
            return Err(format!(
                "{name} is {} whose target is writable from the sandbox: not run",
                found.display()
            ));
        }
        Ok(found)
    }

    /// A command running `name` (resolved here) with the probes'
    /// environment in the neutral directory, after checking each of
    /// `also` (programs it starts by PATH, e.g. an interpreter) resolves
    /// outside the writable roots too.
    pub(super) fn command(&self, name: &str, also: &[&str]) -> Result<Command, String> {
        let prog = self.resolve(name)?;
        for a in also {
            self.resolve(a)?;
        }
        let mut cmd = Command::new(prog);
        cmd.env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("PATH", std::env::join_paths(&self.path).unwrap_or_default())
            .current_dir(neutral_dir());
        Ok(cmd)
    }
}

/// Whether the probes get variable `k`: what npm, pip and version
/// managers' shims read, and the locale; nothing that makes an interpreter
/// load code (`NODE_OPTIONS`, `LD_PRELOAD`, `PYTHONSTARTUP`, ...).
fn kept_var(k: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "TZ",
        "PWD",
        "OLDPWD",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        // What `go env GOPROXY GOSUMDB` reads.
        "GOPROXY",
        "GOSUMDB",
        "GOENV",
        "GOROOT",
        "GOPATH",
    ];
    const PREFIXES: &[&str] = &[
        "npm_config_",
        "NPM_CONFIG_",
        "PIP_",
        "CARGO_",
        "PYENV",
        "VOLTA_",
        "ASDF_",
        "MISE_",
        "NVM_",
        "XDG_",
        "LC_",
    ];
    EXACT.contains(&k) || PREFIXES.iter().any(|p| k.starts_with(p))
}

/// The directory the probes start in: nothing there is a project.
fn neutral_dir() -> PathBuf {
    #[cfg(windows)]
    if let Some(r) = std::env::var_os("SystemRoot") {
        return PathBuf::from(r);
    }
    PathBuf::from("/")
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// Run a tool with a deadline; its stdout when it succeeded.
pub(super) fn output(cmd: &mut Command) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if start.elapsed() > Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut s = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut s).ok()?;
    Some(s)
}
