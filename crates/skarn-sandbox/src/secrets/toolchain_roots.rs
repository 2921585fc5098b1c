//! Where the toolchain credential walk looks (atk27p F1, atk22m F1): the
//! trees a run can read outside the places it may write, taken from the
//! grants the plan will mount — the system's directories, the read,
//! execute and cache grants — not from the execute grants alone (the
//! system directories are added only when the plan is made, so `/opt`
//! was never walked).
//!
//! Inside the system's directories nothing is walked whole (`/usr`,
//! `/etc` are large and hold no toolchain trees of their own); the roots
//! there are each installation directly under `/opt` and `/usr/local`
//! (devcontainer-style `/usr/local/share/nvm`, `/usr/local/python`), and
//! each toolchain prefix the caller's environment names (`NVM_DIR`,
//! `PYENV_ROOT`, `CONDA_PREFIX`, `VIRTUAL_ENV`, the directory above each
//! `PATH` `bin`, ...). The system's fixed credential places are looked up
//! by name ([`crate::secrets::tool_configs::config_files`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::policy::{Policy, SYSTEM_EXEC_DIRS};

/// Variables naming a toolchain's root or prefix.
const PREFIX_VARS: &[&str] = &[
    "NVM_DIR",
    "PYENV_ROOT",
    "CONDA_PREFIX",
    "CONDA_ROOT",
    "MAMBA_ROOT_PREFIX",
    "VIRTUAL_ENV",
    "VOLTA_HOME",
    "FNM_DIR",
    "SDKMAN_DIR",
    "JAVA_HOME",
    "GRADLE_HOME",
    "M2_HOME",
    "MAVEN_HOME",
    "RUSTUP_HOME",
    "GOROOT",
    "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
];

/// Entries of `/usr/local` that hold installed code or programs, not a
/// toolchain tree of their own (their prefix files are looked up by name).
const USR_LOCAL_SKIP: &[&str] = &[
    "bin", "sbin", "lib", "lib64", "include", "man", "src", "libexec", "games", "etc",
];

/// The places a run of `policy` may write: never walked (a run could fill
/// them, or plant a link named like a credential file to any file).
pub(super) fn writable(policy: &Policy) -> Vec<PathBuf> {
    std::iter::once(policy.workspace.clone())
        .chain(policy.write.iter().map(|g| g.path.clone()))
        .collect()
}

/// The directories a run of `policy` reads: the system's and every read,
/// execute and cache grant.
pub(super) fn readable(policy: &Policy) -> Vec<PathBuf> {
    SYSTEM_EXEC_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(
            policy
                .read
                .iter()
                .chain(&policy.exec)
                .chain(&policy.overlay)
                .map(|g| g.path.clone()),
        )
        .collect()
}

fn is_system(p: &Path) -> bool {
    SYSTEM_EXEC_DIRS.iter().any(|s| p == Path::new(s))
}

/// Whether `p` lies in a place `policy` lets a run write.
pub(super) fn in_writable(p: &Path, writable: &[PathBuf]) -> bool {
    writable.iter().any(|w| p.starts_with(w))
}

/// The entries of directory `d` (at most 4,096), sorted.
fn entries(d: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(d)
        .map(|rd| rd.flatten().take(4096).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// The toolchain prefixes the environment `env` names: its variables'
/// directories and the directory above each `PATH` `bin` (and above the
/// real directory of each program there: version managers' links).
fn env_prefixes(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PREFIX_VARS
        .iter()
        .filter_map(|v| env(v))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect();
    if let Some(path) = env("PATH") {
        for d in std::env::split_paths(&path).take(256) {
            if !d.is_absolute() {
                continue;
            }
            let mut bins = vec![d.clone()];
            bins.extend(std::fs::canonicalize(&d));
            for prog in ["node", "python3", "conda", "git", "mvn", "gradle", "java"] {
                if let Ok(t) = std::fs::canonicalize(d.join(prog))
                    && let Some(dir) = t.parent()
                {
                    bins.push(dir.to_path_buf());
                }
            }
            for b in bins {
                if b.file_name().is_some_and(|n| n == "bin" || n == "sbin")
                    && let Some(p) = b.parent()
                {
                    out.push(p.to_path_buf());
                }
            }
        }
    }
    out
}

/// The roots walked for `policy` (see the module text), for the caller's
/// home `home` and environment `env`.
pub(super) fn roots(
    policy: &Policy,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let writable = writable(policy);
    let readable = readable(policy);
    let mut out: Vec<PathBuf> = Vec::new();
    for p in &readable {
        if is_system(p) {
            continue;
        }
        out.push(p.clone());
    }
    if readable.iter().any(|r| r == Path::new("/opt")) {
        out.extend(entries(Path::new("/opt")));
    }
    let local = Path::new("/usr/local");
    for e in entries(local) {
        let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !USR_LOCAL_SKIP.contains(&name) {
            out.push(e);
        }
    }
    // Project trees copied into an image (`/usr/src/app`, the Node
    // images' working directory, with the `.npmrc` its `npm ci` used):
    // they hold projects, not the system's code (atk27q F9). A kernel's
    // source or headers tree (`Kconfig` or `Module.symvers` at its top)
    // is code only.
    for src in [Path::new("/usr/src"), Path::new("/usr/local/src")] {
        out.extend(
            entries(src)
                .into_iter()
                .filter(|e| !e.join("Kconfig").exists() && !e.join("Module.symvers").exists()),
        );
    }
    for p in env_prefixes(env) {
        // A prefix the run reads, other than a system directory whole
        // (`/usr`, `/`, `/usr/local`: their fixed places are looked up).
        if readable.iter().any(|r| p.starts_with(r))
            && !is_system(&p)
            && p != local
            && p.components().count() > 2
        {
            out.push(p);
        }
    }
    if let Some(h) = home {
        out.push(crate::secrets::cargo_config::cargo_home(h));
    }
    // Walked by its real name, never in (or as) a writable place; the
    // home itself is never a root.
    let mut out: Vec<PathBuf> = out
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .filter(|p| p.is_dir() && !in_writable(p, &writable) && Some(p.as_path()) != home)
        .collect();
    out.sort();
    out.dedup();
    // A root the walk of another reaches is walked with it.
    let all = out.clone();
    out.retain(|r| !all.iter().any(|o| o != r && super::reaches(o, r)));
    out
}
