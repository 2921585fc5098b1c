//! The host's launcher list (attack atk22o F3, F12): every place the
//! host starts a program from on its own, read from one list — the links
//! of the `PATH` directories ([`super::opt_links`]) and the launcher
//! files ([`super::launcher_files`]: desktop entries, systemd units,
//! D-Bus services, cron tables). The installation each named program
//! belongs to (the directory above a `bin`, else the program's own
//! directory; a named directory itself) is host code: a workspace that
//! is or lies in one is refused (naming the flag), and the planner keeps
//! it read-only, whole, where it lies inside a writable grant anyway
//! ([`installations`]: one a workspace holds, or any with the flag).
//! Past a bound the list is incomplete: every workspace outside the home
//! is refused then (fail closed).

use std::path::{Path, PathBuf};

/// One installation the host starts a program from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// Its directory (canonical).
    pub dir: PathBuf,
    /// How the host comes to run it (for the messages).
    pub via: String,
}

/// The installation of `p` (a program or directory a launcher names):
/// its canonical place's directory, or the one above a `bin`; `None` for
/// system trees (never workspaces), shared directories and homes.
#[cfg(test)]
pub(super) fn installation_of(p: &Path, homes: &[PathBuf]) -> Option<PathBuf> {
    installation_in(p, homes, &mut crate::fact_deps::Deps::new())
}

/// [`installation_of`], what it reads recorded in `deps`.
fn installation_in(
    p: &Path,
    homes: &[PathBuf],
    deps: &mut crate::fact_deps::Deps,
) -> Option<PathBuf> {
    use crate::fact_deps::Node;
    // (`realpath` of the program, else of its directory with its name:
    // a directory only when the program itself resolved to one.)
    let (real, is_dir) = deps
        .resolve(p)
        .map(|(r, n)| (r, n == Node::Dir))
        .or_else(|| {
            let (parent, _) = deps.resolve(p.parent()?)?;
            Some((parent.join(p.file_name()?), false))
        })
        .unwrap_or_else(|| (p.to_path_buf(), false));
    let dir = if is_dir {
        real.as_path()
    } else {
        real.parent()?
    };
    let dir = if dir.file_name().is_some_and(|n| n == "bin") {
        dir.parent()?
    } else {
        dir
    };
    if super::SYSTEM_TREES.iter().any(|s| dir.starts_with(s)) {
        return None;
    }
    super::is_prefix(dir, homes).then(|| dir.to_path_buf())
}

/// Every installation the launcher list names (`reals`: the caller's
/// `PATH` directories, canonical and shown), and whether a bound was
/// reached.
pub(super) fn list(reals: &[(PathBuf, PathBuf)], homes: &[PathBuf]) -> (Vec<Installation>, bool) {
    #[cfg(unix)]
    return super::launcher_record::cached(reals, homes, |deps| list_in(reals, homes, deps));
    #[cfg(not(unix))]
    list_in(reals, homes, &mut crate::fact_deps::Deps::new())
}

/// [`list`] worked out, what it reads recorded in `deps`.
fn list_in(
    reals: &[(PathBuf, PathBuf)],
    homes: &[PathBuf],
    deps: &mut crate::fact_deps::Deps,
) -> (Vec<Installation>, bool) {
    let (mut named, over_links) = super::opt_links::links(reals, deps);
    let (files, over_files) = super::udev_rules::with(super::launcher_files::named(deps), deps);
    named.extend(files);
    let mut out: Vec<Installation> = Vec::new();
    for (p, how) in named {
        if let Some(dir) = installation_in(&p, homes, deps)
            && !out.iter().any(|i| i.dir == dir)
        {
            out.push(Installation {
                dir,
                via: format!("{} ({how})", p.display()),
            });
        }
    }
    (out, over_links || over_files)
}

/// Why `ws` (canonical) is or lies in an installation the host's
/// launchers start a program from.
pub(super) fn reason(ws: &Path, reals: &[(PathBuf, PathBuf)], homes: &[PathBuf]) -> Option<String> {
    let (list, over) = list(reals, homes);
    for i in &list {
        let how = if ws == i.dir {
            "is"
        } else if ws.starts_with(&i.dir) {
            "lies in"
        } else {
            // One the workspace holds is not refused: the planner keeps it
            // read-only, whole ([`installations`]), as a toolchain home
            // inside a workspace (a project whose `scripts/` a `PATH`
            // link names stays a workspace).
            continue;
        };
        return Some(format!(
            "{} {how} {}, the installation of {}: code the command put there would run in the \
             host's next call",
            ws.display(),
            i.dir.display(),
            i.via
        ));
    }
    if over && !homes.iter().any(|h| ws.starts_with(h)) {
        return Some(format!(
            "the host's launchers (PATH links, desktop entries, systemd units, D-Bus services, \
             cron tables) name more than {} entries or {} files: whether one starts a program \
             from {} was not finished",
            super::opt_links::MAX_NAMES,
            super::launcher_files::MAX_FILES,
            ws.display()
        ));
    }
    None
}

/// The installations of the launcher list for the planner (kept
/// read-only, whole, inside a writable grant), with the caller's `PATH`.
pub fn installations() -> Vec<Installation> {
    let mut homes: Vec<PathBuf> = super::home::account_homes()
        .into_iter()
        .map(|(_, h)| h)
        .collect();
    homes.extend(super::env_dir("HOME"));
    let reals: Vec<(PathBuf, PathBuf)> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .take(1000)
                .filter(|d| d.is_absolute())
                .map(|d| (std::fs::canonicalize(&d).unwrap_or(d.clone()), d))
                .collect()
        })
        .unwrap_or_default();
    let mut out = list(&reals, &homes).0;
    // An installation in a home's dot entry or program directory
    // (`~/.cargo`, `~/.nvm/versions/...`) is the home rule's: kept whole
    // there, and it may hold the run's own cache grants.
    out.retain(|i| {
        !homes.iter().any(|h| {
            i.dir
                .strip_prefix(h)
                .is_ok_and(|rel| super::home_place(rel).is_some())
        })
    });
    out
}

/// Whether `dir` (canonical) may stand for a tree of host code: not `/`,
/// not a shared directory, not a home or a directory holding one.
#[cfg(unix)]
pub(crate) fn is_code_tree(dir: &Path) -> bool {
    let mut homes: Vec<PathBuf> = super::home::account_homes()
        .into_iter()
        .map(|(_, h)| h)
        .collect();
    homes.extend(super::env_dir("HOME"));
    super::is_prefix(dir, &homes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installations_of_programs() {
        let h: Vec<PathBuf> = Vec::new();
        let d = std::env::temp_dir().join(format!("skarn-launchers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("go/bin")).unwrap();
        std::fs::create_dir_all(d.join("app")).unwrap();
        std::fs::write(d.join("go/bin/go"), "x").unwrap();
        std::fs::write(d.join("app/app"), "x").unwrap();
        let d = std::fs::canonicalize(&d).unwrap();
        assert_eq!(
            installation_of(&d.join("go/bin/go"), &h),
            Some(d.join("go"))
        );
        assert_eq!(installation_of(&d.join("app/app"), &h), Some(d.join("app")));
        assert_eq!(
            installation_of(&d.join("app/missing"), &h),
            Some(d.join("app"))
        );
        assert_eq!(installation_of(&d.join("app"), &h), Some(d.join("app")));
        assert_eq!(installation_of(Path::new("/usr/lib/x/bin/x"), &h), None);
        assert_eq!(installation_of(Path::new("/opt/x"), &h), None);
        assert_eq!(
            installation_of(&d.join("x"), std::slice::from_ref(&d)),
            None
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
