//! What may be a workspace: a project directory. Not the home's
//! configuration, state, start-up or data directories (`~/.config/...`,
//! `~/.local/...`, `~/bin`, `~/go`, the XDG directories), not a directory a
//! home dotfile links into, not `/tmp` or `/var/tmp` themselves (host
//! sockets live there), not a system directory (`/var/lib`, `/srv`,
//! `/run`, ...), not a directory on the caller's `PATH`. The directory a
//! command starts in is chosen by whoever starts it (an agent, a gateway's
//! `run` tool given a `cwd`), so this rule is applied by `skarn run`
//! itself ([`refuse_non_project_workspace`]); each refusal names the flag
//! that allows it, and an allowed one is protected like a home workspace.

use std::path::{Path, PathBuf};

use crate::policy::policy_error::PolicyError;

mod build_dirs;
#[cfg(unix)]
mod env_dirs;
mod env_relative;
mod home;
mod launcher_files;
#[cfg(unix)]
mod launcher_record;
#[cfg(unix)]
pub use launcher_record::remember_lists;
pub mod launchers;
mod opt_links;
mod path_trees;
#[cfg(unix)]
mod startup_dirs;
mod udev_rules;
pub(crate) mod vcs;

/// The flag accepting a workspace in or at the home's own directories.
pub const ALLOW_HOME_FLAG: &str = "--allow-home-workspace";
/// The flag accepting a temporary, system or `PATH` directory.
pub(crate) const ALLOW_NON_PROJECT_FLAG: &str = "--allow-non-project-workspace";

/// Why a directory is not a project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonProject {
    /// What it is instead.
    pub why: String,
    /// The flag that accepts it anyway.
    pub flag: &'static str,
}

impl std::fmt::Display for NonProject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// Exactly these directories are shared places, not projects.
const SHARED_EXACT: &[&str] = &[
    "/",
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/home",
    "/srv",
    "/mnt",
    "/media",
    "/var",
    "/opt",
    "/root",
    "/usr/local",
    "/private/tmp",
    "/private/var",
    "/private/var/tmp",
    "/Users",
    "/Volumes",
];

/// Whether `prefix` may stand for an installation: not `/`, not a shared
/// directory every project lies in (`/opt`, `/tmp`), not a home or a
/// directory holding one (`~/bin` on `PATH` makes no prefix of the home).
pub(super) fn is_prefix(prefix: &Path, homes: &[PathBuf]) -> bool {
    prefix.parent().is_some()
        && !SHARED_EXACT.iter().any(|d| prefix == Path::new(d))
        && !homes.iter().any(|h| h.starts_with(prefix))
}

/// These directories and everything below them belong to the system.
const SYSTEM_TREES: &[&str] = &[
    "/var/lib",
    "/var/cache",
    "/var/spool",
    "/var/log",
    "/var/mail",
    "/var/db",
    "/var/backups",
    "/var/run",
    "/var/lock",
    "/run",
    "/proc",
    "/sys",
    "/boot",
    "/snap",
    "/nix",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/System",
    "/Library",
    "/private/etc",
];

/// Directories of `/var` that hold people's projects or homes; every
/// other one (`/var/opt`, `/var/local`, `/var/crash`, a package's own
/// directory) is the system's (atk22e: `/var/opt` and `/var/local` were
/// accepted as workspaces).
const VAR_USER_DIRS: &[&str] = &["tmp", "home", "roothome", "www", "srv", "mnt", "git"];

/// The `/var/<name>` directory `ws` lies in when `<name>` is not one of
/// [`VAR_USER_DIRS`].
fn var_system_dir(ws: &Path) -> Option<PathBuf> {
    let rel = ws.strip_prefix("/var").ok()?;
    let first = rel.components().next()?.as_os_str();
    (!VAR_USER_DIRS.iter().any(|d| first == *d)).then(|| Path::new("/var").join(first))
}

/// Top-level entries of the home that host programs run or load from
/// without a leading dot (besides every dot entry): `~/Library` (macOS
/// launch agents, Python user site, application settings) and `~/AppData`
/// (Windows start-up folder, application settings) included.
pub(crate) const HOME_PROGRAM_DIRS: &[&str] = &[
    "bin",
    "go/bin",
    "go/pkg",
    "snap",
    "node_modules",
    "perl5",
    "R",
    "Library",
    "AppData",
];

/// The entry of the home that `rel` (a path relative to the home) lies in
/// when host programs read, load or run it on their own: any top-level dot
/// entry (`skarn run` keeps those read-only, and sets new ones aside, when
/// the home is writable) or a [`HOME_PROGRAM_DIRS`] entry. This one rule
/// decides what may not be a workspace here and what the agent's file
/// tools may not write (`skarn hook`). Names compare without regard to
/// ASCII case (macOS and Windows homes usually ignore it).
pub fn home_place(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    if first.starts_with('.') {
        return Some(first.into_owned());
    }
    HOME_PROGRAM_DIRS
        .iter()
        .find(|d| {
            let n = Path::new(d).components().count();
            let head: Vec<_> = rel.components().take(n).collect();
            head.len() == n
                && head.iter().zip(Path::new(d).components()).all(|(a, b)| {
                    a.as_os_str()
                        .to_string_lossy()
                        .eq_ignore_ascii_case(&b.as_os_str().to_string_lossy())
                })
        })
        .map(|d| (*d).to_string())
}

pub(super) fn env_dir(n: &str) -> Option<PathBuf> {
    std::env::var_os(n)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
}

/// Why `ws` (canonical) is not a project directory, if it is not one.
/// `home` is `$HOME`. Looks at the environment (`PATH`, `TMPDIR`, the XDG
/// directories) and, on unix, at where the home's dotfiles link.
pub fn non_project(ws: &Path, home: Option<&Path>) -> Option<NonProject> {
    home::home_reason(ws, home).or_else(|| other_reason(ws))
}

/// Every reason, at most one per flag.
/// (`skarn run` also refuses any workspace when the caller's search-path
/// variables name the current directory: [`env_relative`].)
fn reasons(ws: &Path, home: Option<&Path>) -> Vec<NonProject> {
    let env = || {
        env_relative::reason().map(|why| NonProject {
            why,
            flag: ALLOW_NON_PROJECT_FLAG,
        })
    };
    home::home_reason(ws, home)
        .into_iter()
        .chain(other_reason(ws).or_else(env))
        .collect()
}

fn other_reason(ws: &Path) -> Option<NonProject> {
    let other = |why: String| {
        Some(NonProject {
            why,
            flag: ALLOW_NON_PROJECT_FLAG,
        })
    };
    if let Some(m) = vcs::holding(ws) {
        if m.dir == ws {
            return other(format!(
                "{} is a {} directory (version-control metadata), not a project's work tree (its \
                 hooks and configuration run on the host); give the repository's top directory",
                ws.display(),
                m.system
            ));
        }
        return other(format!(
            "{} lies in {}, a {} directory (version-control metadata: its hooks and \
             configuration run on the host)",
            ws.display(),
            m.dir.display(),
            m.system
        ));
    }
    if let Some(b) = build_dirs::holding(ws) {
        let how = if b.dir == ws { "is" } else { "lies in" };
        return other(format!(
            "{} {how} {} {} (host cargo runs the build scripts, tests and binaries there its \
             records call up to date); give the crate's directory",
            ws.display(),
            b.what,
            b.dir.display()
        ));
    }
    if SHARED_EXACT.iter().any(|d| ws == Path::new(d)) {
        return other(format!(
            "{} is a shared or temporary directory (other programs' files and sockets live \
             there), not a project",
            ws.display()
        ));
    }
    if let Some(d) = SYSTEM_TREES.iter().find(|d| ws.starts_with(d)) {
        return other(format!("{} lies in the system directory {d}", ws.display()));
    }
    if let Some(d) = var_system_dir(ws) {
        return other(format!(
            "{} lies in the system directory {}",
            ws.display(),
            d.display()
        ));
    }
    for var in ["TMPDIR", "XDG_RUNTIME_DIR"] {
        if let Some(d) = env_dir(var)
            && ws == d
        {
            return other(format!(
                "{} is ${var}, a shared directory (sockets of host programs live there)",
                ws.display()
            ));
        }
    }
    if let Some(rt) = env_dir("XDG_RUNTIME_DIR")
        && ws.starts_with(&rt)
    {
        return other(format!(
            "{} lies in $XDG_RUNTIME_DIR ({}), where host programs keep their sockets",
            ws.display(),
            rt.display()
        ));
    }
    let mut homes: Vec<PathBuf> = home::account_homes().into_iter().map(|(_, h)| h).collect();
    homes.extend(env_dir("HOME"));
    if let Some(why) = path_trees::reason(ws, &homes) {
        return other(why);
    }
    #[cfg(unix)]
    if let Some(why) = env_dirs::reason(ws, &homes) {
        return other(why);
    }
    None
}

/// Refuse a workspace that is not a project directory unless the flag
/// naming its kind was given (`allow_home`: [`ALLOW_HOME_FLAG`];
/// `allow_other`: [`ALLOW_NON_PROJECT_FLAG`]). `ws` is canonical, `home`
/// is `$HOME`. This is the rule `skarn run` applies to every workspace it
/// is started with, whoever chose the directory.
pub fn refuse_non_project_workspace(
    ws: &Path,
    home: Option<&Path>,
    allow_home: bool,
    allow_other: bool,
) -> Result<(), PolicyError> {
    // A git directory is never a workspace, whatever the flags (attack
    // atk22l F2): its `config` and hooks would be the work tree's files.
    // The same for every version-control system's metadata directory
    // (atk22m F5: `.hg/hgrc` hooks run at the host's `hg status`).
    if let Some(m) = vcs::holding(ws).filter(|m| m.dir == ws) {
        return Err(PolicyError::Workspace(format!(
            "workspace refused: {} is a {} directory (version-control metadata), not a project's work tree (the \
             host's {} runs what its configuration and hooks name; no flag accepts it); run in \
             the repository's top directory",
            ws.display(),
            m.system,
            m.system
        )));
    }
    let refused: Vec<NonProject> = reasons(ws, home)
        .into_iter()
        .filter(|n| match n.flag {
            ALLOW_HOME_FLAG => !allow_home,
            _ => !allow_other,
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    let why: Vec<String> = refused.iter().map(|n| n.why.clone()).collect();
    let flags: Vec<&str> = refused.iter().map(|n| n.flag).collect();
    Err(PolicyError::Workspace(format!(
        "workspace refused: {}; run in a project directory, name one with --workspace, or \
         pass {} to accept it (it is then protected like a home workspace)",
        why.join("; "),
        flags.join(" and ")
    )))
}

#[cfg(all(test, unix))]
mod tests;
