//! [`MacFacts`]: what the profile generator needs to know about the host
//! beyond the [`Policy`], gathered by [`MacFacts::probe`] (file-system
//! reads only) so that [`crate::macos::profile`] stays a pure function.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::policy::Policy;
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES};

/// The system's `/private` links: `/tmp`, `/var` and `/etc` are symlinks
/// to `/private/tmp`, `/private/var` and `/private/etc` on macOS.
pub(crate) const PRIVATE_LINKS: &[(&str, &str)] = &[
    ("/tmp", "/private/tmp"),
    ("/var", "/private/var"),
    ("/etc", "/private/etc"),
];

/// The data volume's mount point: `/Users`, `/private`, `/usr/local`,
/// `/opt`, `/Applications`, ... are firmlinks into it, so each such path
/// also has a name below it.
pub(crate) const DATA_VOLUME: &str = "/System/Volumes/Data";

/// Host facts for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacFacts {
    /// The home directory, canonical.
    pub home: Option<PathBuf>,
    /// `$HOME` as the user has it, when it differs from [`Self::home`].
    pub home_alias: Option<PathBuf>,
    /// The per-run temporary directory (canonical, already created).
    pub run_temp: PathBuf,
    /// The `/private` links in force (normally [`PRIVATE_LINKS`]).
    pub private_links: Vec<(PathBuf, PathBuf)>,
    /// Workspace-relative persistence entries that exist.
    pub present: BTreeSet<String>,
    /// Paths of the workspace's git layout to keep read-only
    /// ([`crate::protect::git::git_vet::guards`]).
    pub git_guards: Vec<PathBuf>,
    /// Canonical targets of symlinks found inside secret directories: a
    /// read through the link is checked against the target's path.
    pub secret_link_targets: Vec<PathBuf>,
    /// Loopback ports of the egress proxy (HTTP, SOCKS5) for
    /// `--net allow:...`.
    pub proxy_ports: Option<(u16, u16)>,
}

impl MacFacts {
    /// Facts with nothing found on disk: for tests and golden files.
    pub fn fixed(home: Option<&Path>, run_temp: &Path) -> MacFacts {
        MacFacts {
            home: home.map(Path::to_path_buf),
            home_alias: None,
            run_temp: run_temp.to_path_buf(),
            private_links: PRIVATE_LINKS
                .iter()
                .map(|(a, b)| (PathBuf::from(a), PathBuf::from(b)))
                .collect(),
            present: BTreeSet::new(),
            git_guards: Vec::new(),
            secret_link_targets: Vec::new(),
            proxy_ports: None,
        }
    }

    /// Read the facts for `policy` (workspace and grants canonical
    /// already) from the file system.
    pub fn probe(policy: &Policy, home: Option<&Path>, run_temp: &Path) -> MacFacts {
        let real_home = home.and_then(|h| std::fs::canonicalize(h).ok());
        let mut f = MacFacts::fixed(real_home.as_deref().or(home), run_temp);
        if let (Some(h), Some(r)) = (home, &real_home)
            && h != r
        {
            f.home_alias = Some(h.to_path_buf());
        }
        f.private_links
            .retain(|(link, target)| std::fs::canonicalize(link).is_ok_and(|t| t == *target));
        let ws = &policy.workspace;
        for e in ENTRIES.iter().chain(GIT_DIR_ENTRIES) {
            if std::fs::symlink_metadata(ws.join(e.path)).is_ok() {
                f.present.insert(e.path.to_string());
            }
        }
        #[cfg(unix)]
        {
            let mut writable = vec![ws.clone(), run_temp.to_path_buf()];
            writable.extend(policy.write.iter().map(|g| g.path.clone()));
            f.git_guards = crate::protect::git::git_vet::guards(ws, &writable, f.home.as_deref())
                .into_iter()
                .map(|g| g.path)
                .collect();
        }
        // Dot-directories and --deny-read paths only: the Library ones are
        // large, and privacy-protected (a walk would be refused or prompt).
        let library = f.home.as_ref().map(|h| h.join("Library"));
        let mut budget = 0;
        for s in super::secret_paths::secret_paths(policy, f.home.as_deref()) {
            if library.as_ref().is_some_and(|l| s.starts_with(l)) {
                continue;
            }
            collect_link_targets(&s, &mut f.secret_link_targets, &mut budget);
        }
        f.secret_link_targets.sort();
        f.secret_link_targets.dedup();
        f
    }

    /// Every name of `p` that Seatbelt may be shown: `p` itself, its
    /// `/private` twin (or its short name), the same under the data
    /// volume, and under the home alias. Used for exact `subpath` filters;
    /// the deny regexes cover further names ([`super::sbpl::deny_regex`]).
    pub fn names(&self, p: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = vec![p.to_path_buf()];
        if let (Some(h), Some(alias)) = (&self.home, &self.home_alias) {
            if let Ok(rest) = p.strip_prefix(h) {
                out.push(alias.join(rest));
            } else if let Ok(rest) = p.strip_prefix(alias) {
                out.push(h.join(rest));
            }
        }
        for (link, target) in &self.private_links {
            for q in out.clone() {
                if let Ok(rest) = q.strip_prefix(link) {
                    out.push(target.join(rest));
                } else if let Ok(rest) = q.strip_prefix(target) {
                    out.push(link.join(rest));
                }
            }
        }
        for q in out.clone() {
            if !q.starts_with(DATA_VOLUME) && !q.starts_with("/System") {
                out.push(Path::new(DATA_VOLUME).join(q.strip_prefix("/").unwrap_or(&q)));
            }
        }
        let mut seen = BTreeSet::new();
        out.retain(|q| seen.insert(q.clone()));
        out
    }
}

/// Bound on the entries walked below all secret directories together.
const LINK_WALK_BUDGET: usize = 2000;

/// Canonical targets of symlinks at or below `p` (bounded walk, links not
/// followed) that lie outside `p`.
fn collect_link_targets(p: &Path, out: &mut Vec<PathBuf>, seen: &mut usize) {
    *seen += 1;
    if *seen > LINK_WALK_BUDGET {
        return;
    }
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return;
    };
    if m.file_type().is_symlink() {
        if let Ok(t) = std::fs::canonicalize(p)
            && !t.starts_with(p)
        {
            out.push(t);
        }
        return;
    }
    if m.is_dir()
        && let Ok(rd) = std::fs::read_dir(p)
    {
        for e in rd.flatten() {
            collect_link_targets(&e.path(), out, seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_private_data_volume_and_home_alias() {
        let mut f = MacFacts::fixed(Some(Path::new("/Users/a")), Path::new("/private/tmp/r"));
        f.home_alias = Some(PathBuf::from("/Volumes/Home/a"));
        let n = f.names(Path::new("/Users/a/.ssh"));
        for want in [
            "/Users/a/.ssh",
            "/Volumes/Home/a/.ssh",
            "/System/Volumes/Data/Users/a/.ssh",
        ] {
            assert!(n.contains(&PathBuf::from(want)), "{want}: {n:?}");
        }
        let n = f.names(Path::new("/private/var/folders/x/T"));
        for want in [
            "/private/var/folders/x/T",
            "/var/folders/x/T",
            "/System/Volumes/Data/private/var/folders/x/T",
            "/System/Volumes/Data/var/folders/x/T",
        ] {
            assert!(n.contains(&PathBuf::from(want)), "{want}: {n:?}");
        }
        assert_eq!(f.names(Path::new("/etc/ssh")).len(), 4);
        assert_eq!(
            f.names(Path::new("/System/Library")),
            [PathBuf::from("/System/Library")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn link_targets_inside_secret_directories_are_found() {
        let d = std::env::temp_dir().join(format!("skarn-mac-facts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(d.join("dotfiles")).unwrap();
        std::fs::write(d.join("dotfiles/id_rsa"), "k").unwrap();
        std::os::unix::fs::symlink(d.join("dotfiles/id_rsa"), d.join("home/.ssh/id_rsa")).unwrap();
        let mut out = Vec::new();
        collect_link_targets(&d.join("home/.ssh"), &mut out, &mut 0);
        let real = std::fs::canonicalize(d.join("dotfiles/id_rsa")).unwrap();
        assert_eq!(out, [real]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
