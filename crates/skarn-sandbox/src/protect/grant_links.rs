//! Links on the way of a grant that an earlier sandboxed run could have
//! made (host side, part of [`crate::policy::grants::canonicalize`]).
//!
//! A run may turn a directory of its workspace into a link
//! (`build -> ../.config/systemd/user`); a later run granted that
//! directory by name (the user's config, a trusted `skarn.toml`) would be
//! bound at the link's target. Every link on a grant's path (not only the
//! first) is checked against the directories sandboxed runs were allowed
//! to write ([`crate::policy::granted::GrantLog`]), and a write grant that reaches
//! one of the home's start-up, configuration or secret places through any
//! link is refused: the user named another place.

use std::path::{Path, PathBuf};

use crate::policy::granted::GrantLog;

/// The link on `path`'s way (every hop, see
/// [`crate::protect::trusted::link_hops`]) that lies inside a directory an
/// earlier sandboxed run could write, with that directory.
pub(crate) fn planted_by_earlier_run(path: &Path, log: &GrantLog) -> Option<(PathBuf, PathBuf)> {
    #[cfg(unix)]
    let hops = crate::protect::trusted::link_hops(path);
    #[cfg(not(unix))]
    let hops: Vec<PathBuf> = crate::policy::canonical::first_symlink(path)
        .into_iter()
        .collect();
    for hop in hops {
        for (_, root) in &log.roots {
            // A grant's root itself is the run's mount point: only what
            // lies strictly inside it could be replaced.
            if hop.starts_with(root) && hop != *root {
                return Some((hop, root.clone()));
            }
        }
    }
    None
}

/// Whether `real` (a write grant's canonical place, reached through a
/// link) is one of the home's start-up, configuration or secret places,
/// or holds one.
pub fn home_place(real: &Path, home: &Path) -> Option<PathBuf> {
    let shell_rc = crate::protect::persistence::ENTRIES
        .iter()
        .filter(|e| e.reserve == crate::protect::persistence::Reserve::IfHome)
        .map(|e| e.path);
    let homes: Vec<PathBuf> = std::iter::once(home.to_path_buf())
        .chain(crate::policy::canonical::canonical_lossy(home))
        .collect();
    for h in &homes {
        for rel in crate::policy::HOME_PERSISTENCE_PATHS
            .iter()
            .copied()
            .chain(shell_rc.clone())
            .chain(crate::policy::HOME_SECRET_PATHS.iter().copied())
        {
            let p = h.join(rel);
            if real.starts_with(&p) || p.starts_with(real) && real.starts_with(h) && real != h {
                return Some(p);
            }
        }
    }
    None
}

/// The log of directories earlier runs could write, for the home named by
/// `$HOME` (empty without one).
pub(crate) fn earlier_runs() -> GrantLog {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .and_then(|h| crate::policy::granted::log_path(Some(&h)))
        .map(|f| GrantLog::load(&f))
        .unwrap_or_default()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::policy::granted::Kind;

    #[test]
    fn links_made_in_earlier_runs_and_home_places_are_found() {
        let t = skarn_test_support::TempDir::new("grant-links");
        let d = std::fs::canonicalize(t.path()).unwrap();
        let home = d.join("home");
        std::fs::create_dir_all(home.join(".config/systemd/user")).unwrap();
        std::fs::create_dir_all(home.join("A")).unwrap();
        std::os::unix::fs::symlink("../.config/systemd/user", home.join("A/build")).unwrap();
        let log = GrantLog {
            roots: vec![(Kind::Workspace, home.join("A"))],
            file: None,
        };
        let (hop, root) = planted_by_earlier_run(&home.join("A/build"), &log).unwrap();
        assert_eq!((hop, root), (home.join("A/build"), home.join("A")));
        assert_eq!(planted_by_earlier_run(&home.join("A"), &log), None);
        let real = std::fs::canonicalize(home.join("A/build")).unwrap();
        assert!(home_place(&real, &home).is_some());
        assert!(home_place(&home.join("A"), &home).is_none());
    }
}
