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

fn env_dir(n: &str) -> Option<PathBuf> {
    std::env::var_os(n)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
}

/// The home directories of the accounts in `/etc/passwd` (and every
/// directory directly in `/home`), canonical, that exist and are not `/`.
fn account_homes() -> Vec<(String, PathBuf)> {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open("/etc/passwd") {
        let _ = f.take(1 << 20).read_to_string(&mut text);
    }
    let mut out: Vec<(String, PathBuf)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            let (user, dir) = (f.first()?, f.get(5)?);
            Some((user.to_string(), PathBuf::from(dir)))
        })
        .collect();
    if let Ok(rd) = std::fs::read_dir("/home") {
        out.extend(rd.flatten().take(10_000).filter_map(|e| {
            e.file_type()
                .ok()?
                .is_dir()
                .then(|| (e.file_name().to_string_lossy().into_owned(), e.path()))
        }));
    }
    out.into_iter()
        .filter(|(_, d)| d.is_absolute() && d.as_os_str() != "/")
        .filter_map(|(u, d)| std::fs::canonicalize(&d).ok().map(|c| (u, c)))
        .filter(|(_, d)| d.as_os_str() != "/" && d.is_dir())
        .collect()
}

fn home_names(home: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = home.into_iter().map(Path::to_path_buf).collect();
    if let Some(real) = home.and_then(|h| std::fs::canonicalize(h).ok())
        && !v.contains(&real)
    {
        v.push(real);
    }
    v
}

/// Why `ws` (canonical) is not a project directory, if it is not one.
/// `home` is `$HOME`. Looks at the environment (`PATH`, `TMPDIR`, the XDG
/// directories) and, on unix, at where the home's dotfiles link.
pub fn non_project(ws: &Path, home: Option<&Path>) -> Option<NonProject> {
    home_reason(ws, home).or_else(|| other_reason(ws))
}

/// Every reason, at most one per flag.
fn reasons(ws: &Path, home: Option<&Path>) -> Vec<NonProject> {
    home_reason(ws, home)
        .into_iter()
        .chain(other_reason(ws))
        .collect()
}

fn home_reason(ws: &Path, home: Option<&Path>) -> Option<NonProject> {
    let home_flag = |why: String| {
        Some(NonProject {
            why,
            flag: ALLOW_HOME_FLAG,
        })
    };
    let homes = home_names(home);
    // The home under a second name (a bind mount, a volume): compared by
    // directory identity (attack atk22c F5).
    if let Some(h) = home
        && !homes.iter().any(|n| n.starts_with(ws))
        && crate::policy::dir_identity::holds_home(ws, h)
    {
        return home_flag(format!(
            "{} is the home directory {} or holds it (the same directory under another name)",
            ws.display(),
            h.display()
        ));
    }
    let alias = home.and_then(|h| crate::policy::dir_identity::through_home_alias(ws, h));
    for (h, ws) in homes.iter().flat_map(|h| {
        std::iter::once(ws)
            .chain(alias.as_deref())
            .map(move |w| (h, w))
    }) {
        if h.starts_with(ws) {
            return home_flag(format!(
                "{} is the home directory or holds it",
                ws.display()
            ));
        }
        if let Ok(rel) = ws.strip_prefix(h)
            && let Some(place) = home_place(rel)
        {
            return home_flag(format!(
                "{} lies in {}, a directory of the home that host programs read, load or \
                 run on their own (configuration, state, start-up files, data, programs)",
                ws.display(),
                h.join(place).display()
            ));
        }
    }
    // A home place under another name (`~/.config` a bind mount of
    // `/persist/home/u/.config`): compared by directory identity with
    // every ancestor of the workspace (attack atk22g F15).
    if let Some(h) = home
        && let Some(place) =
            crate::policy::dir_identity::in_home_place_by_identity(ws, h, HOME_PROGRAM_DIRS)
    {
        return home_flag(format!(
            "{} lies in {}, a directory of the home that host programs read, load or run on              their own (the same directory under another name)",
            ws.display(),
            place.display()
        ));
    }
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    ] {
        if let Some(d) = env_dir(var)
            && ws.starts_with(&d)
        {
            return home_flag(format!("{} lies in ${var} ({})", ws.display(), d.display()));
        }
    }
    // Another account's home (as root, or a shared home a user may
    // write): its start-up files, keys and units are that account's
    // persistence (attack atk22c F4).
    for (user, h) in account_homes() {
        if homes.contains(&h) {
            continue;
        }
        if h.starts_with(ws) {
            return home_flag(format!(
                "{} is the home directory of the account {user:?} or holds it",
                ws.display()
            ));
        }
        if let Ok(rel) = ws.strip_prefix(&h)
            && let Some(place) = home_place(rel)
        {
            return home_flag(format!(
                "{} lies in {}, a directory of the account {user:?}'s home that host programs \
                 read, load or run on their own",
                ws.display(),
                h.join(place).display()
            ));
        }
    }
    #[cfg(unix)]
    if let Some(h) = home {
        for t in crate::protect::home_links::scan(h).trusted {
            // A start-up file's directory tree (`tree`) is accepted as a
            // workspace, read-only for the run (plan/trusted.rs `demote`).
            if t.tree.is_none() && ws.starts_with(&t.target) && t.target.is_dir() {
                return home_flag(format!(
                    "{} lies in {}, which the home reaches as {}",
                    ws.display(),
                    t.target.display(),
                    t.via
                ));
            }
        }
    }
    None
}

fn other_reason(ws: &Path) -> Option<NonProject> {
    let other = |why: String| {
        Some(NonProject {
            why,
            flag: ALLOW_NON_PROJECT_FLAG,
        })
    };
    if let Some(g) = git_dir_holding(ws) {
        if g == ws {
            return other(format!(
                "{} is a git directory, not a project's work tree (its hooks and \
                 configuration run on the host); give the repository's top directory",
                ws.display()
            ));
        }
        return other(format!(
            "{} lies in the git directory {} (its hooks and configuration run on the host)",
            ws.display(),
            g.display()
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
    if let Some(path) = std::env::var_os("PATH") {
        // A leading `~` is the home for bash, which expands it when it
        // searches (atk22g F14): judged as that absolute place.
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let entries: Vec<PathBuf> = std::env::split_paths(&path)
            .take(1000)
            .map(|d| match (&home, d.to_str()) {
                (Some(h), Some("~")) => h.clone(),
                (Some(h), Some(s)) if s.starts_with("~/") => h.join(&s[2..]),
                _ => d,
            })
            .collect();
        // A relative or empty entry (`.`, a trailing `:`) is the directory
        // a host shell is in: the workspace (or a directory in it) for
        // every shell started there.
        if let Some(d) = entries.iter().find(|d| !d.is_absolute()) {
            return other(format!(
                "your PATH has the relative entry {:?} (`.`, an empty entry or a relative \
                 name): in {} it names the workspace or a directory in it, so a program the \
                 command put there would run for a host shell started there (remove the entry \
                 from PATH)",
                d.display().to_string(),
                ws.display()
            ));
        }
        for d in entries.into_iter().filter(|d| d.is_absolute()) {
            let real = std::fs::canonicalize(&d).unwrap_or(d.clone());
            // The installation tree a `bin` on PATH takes its programs'
            // code from (`~/npm/bin/tool -> ../lib/node_modules/tool/...`,
            // a prefix's `lib/python3.X/site-packages`): the programs'
            // modules there run in the host's next call (atk22g F23).
            if real.file_name().is_some_and(|n| n == "bin")
                && let Some(prefix) = real.parent()
                && prefix.parent().is_some()
                && ws.starts_with(prefix.join("lib"))
            {
                return other(format!(
                    "{} lies in {}, the installation tree of the programs your PATH runs from                      {}: code the command put there would run in the host's next call",
                    ws.display(),
                    prefix.join("lib").display(),
                    d.display()
                ));
            }
            if ws == real {
                return other(format!(
                    "{} is on your PATH ({}): a program the command put there would run on \
                     the host",
                    ws.display(),
                    d.display()
                ));
            }
            // A virtual environment whose `bin` is on PATH: its python
            // loads `.pth` files and modules from `lib` on every start.
            if real.parent() == Some(ws)
                && ["pyvenv.cfg", "conda-meta"]
                    .iter()
                    .any(|m| std::fs::symlink_metadata(ws.join(m)).is_ok())
            {
                return other(format!(
                    "{} is a virtual environment whose programs are on your PATH ({}): code \
                     the command put in it would run in the host's next python there",
                    ws.display(),
                    d.display()
                ));
            }
        }
    }
    None
}

/// The git directory `ws` is or is inside: a `.git` component (the last
/// one too: a workspace that is a `.git` directory has its `config` and
/// hooks at its top, where no rule of a work tree looks, attack atk22l
/// F2), or `ws` or an ancestor git takes for a bare repository (HEAD,
/// objects, refs).
fn git_dir_holding(ws: &Path) -> Option<PathBuf> {
    let mut acc = PathBuf::new();
    for c in ws.components() {
        acc.push(c);
        if c.as_os_str() == ".git" {
            return Some(acc);
        }
    }
    ws.ancestors().find_map(|a| {
        let bare = ["HEAD", "objects", "refs"]
            .iter()
            .all(|n| std::fs::symlink_metadata(a.join(n)).is_ok());
        bare.then(|| a.to_path_buf())
    })
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
    if git_dir_holding(ws).is_some_and(|g| g == ws) {
        return Err(PolicyError::Workspace(format!(
            "workspace refused: {} is a git directory, not a project's work tree (host git \
             runs what its configuration and hooks name; no flag accepts it); run in the \
             repository's top directory",
            ws.display()
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
