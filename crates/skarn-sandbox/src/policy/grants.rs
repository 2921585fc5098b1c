//! Grant resolution, run on the host before planning: every grant is bound
//! at its canonical path, so a symlink planted by an earlier run (inside a
//! writable grant, where a preset expects a directory that does not exist
//! yet) cannot redirect a later run's grant somewhere the secret checks do
//! not look. The planner then compares canonical grants with canonical
//! secrets (see [`crate::linux::host::HostFacts::secret_aliases`]).

use std::path::{Path, PathBuf};

use crate::policy::{Grant, Policy};

pub use super::canonical::{
    CanonicalCache, canonical_lossy, first_symlink, passes_through_symlink,
};

fn resolve(g: &mut Grant) {
    if let Some(real) = canonical_lossy(&g.path)
        && real != g.path
    {
        g.alias = Some(std::mem::replace(&mut g.path, real));
    }
}

/// Why a grant through a link is refused: a link on its way lies where an
/// earlier sandboxed run could write, or (a write grant) it lands on one
/// of the home's start-up, configuration or secret places.
fn linked_why(
    path: &Path,
    is_write: bool,
    earlier: &crate::policy::granted::GrantLog,
    home: Option<&Path>,
) -> Option<String> {
    if let Some((hop, root)) = crate::protect::grant_links::planted_by_earlier_run(path, earlier) {
        return Some(format!(
            "the link {} lies inside {}, which an earlier sandboxed run could write",
            hop.display(),
            root.display()
        ));
    }
    let real = canonical_lossy(path)?;
    // Whoever made the link (a run under another HOME is in no record
    // here), a write grant led into a git directory or another place host
    // programs run code from is refused (atk22b F11).
    if is_write
        && let Some(n) = real.components().map(|c| c.as_os_str()).find(|n| {
            [".git", ".hg", ".sl", ".jj"].iter().any(|v| *n == *v)
                || crate::protect::persistence::any_depth_name(n)
        })
    {
        return Some(format!(
            "it leads to {}, inside {}, a place host programs run code from",
            real.display(),
            n.to_string_lossy()
        ));
    }
    let place = crate::protect::grant_links::home_place(&real, home.filter(|_| is_write)?)?;
    Some(format!(
        "it leads to {}, the home's start-up, configuration or secret place {}",
        real.display(),
        place.display()
    ))
}

/// A grant that cannot be resolved safely.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GrantError {
    /// A grant goes through a symlink inside a directory an earlier
    /// sandboxed run could write, or a write grant reaches one of the
    /// home's start-up, configuration or secret places through a link.
    #[error(
        "grant {path} ({origin}) {detail}; refused, since a sandboxed command could have \
         made the link or the grant would make a home place writable; grant the target \
         itself if that is what you mean"
    )]
    LinkedGrant {
        /// The grant as written.
        path: PathBuf,
        /// Where the grant came from.
        origin: String,
        /// The link, where it leads, and why it is refused.
        detail: String,
    },
    /// An explicit grant goes through a symlink that lies inside a writable
    /// grant: a command could have planted it in an earlier run (see
    /// [`GrantError::LinkedGrant`] for other runs' directories).
    #[error(
        "grant {path} ({origin}) goes through the symlink {link}, which lies inside the \
         writable {writable}: refused, since a sandboxed command could have planted it; \
         grant the target itself if that is what you mean"
    )]
    PlantedSymlink {
        /// The grant as written.
        path: PathBuf,
        /// Where the grant came from.
        origin: String,
        /// The symlink.
        link: PathBuf,
        /// The writable grant holding the symlink.
        writable: PathBuf,
    },
}

/// Whether a grant's source is an explicit user choice (a flag or a
/// configuration file) rather than a preset or a default.
fn is_explicit(source: &str) -> bool {
    source.starts_with("--") || source.contains(".toml:")
}

/// Resolve every grant of `policy` (and its working directory) to its
/// canonical path, keeping the written name as the grant's alias. Each
/// `deny_read` entry is kept under both names. A grant that goes through a
/// symlink lying inside a writable grant (the workspace or a `--write`
/// grant, under its written or canonical name) is refused when explicit
/// and dropped with a note when it comes from a preset or a default.
/// Returns one report note per grant that went through a symlink.
pub fn canonicalize(policy: &mut Policy) -> Result<Vec<String>, GrantError> {
    let mut notes = Vec::new();
    if let Some(real) = canonical_lossy(&policy.workspace) {
        policy.workspace = real;
    }
    if let Some(cwd) = &policy.cwd
        && let Some(real) = canonical_lossy(cwd)
    {
        policy.cwd = Some(real);
    }
    // Directories the command could have written in an earlier run.
    let mut writable: Vec<PathBuf> = vec![policy.workspace.clone()];
    for g in &policy.write {
        writable.push(g.path.clone());
        writable.extend(canonical_lossy(&g.path));
    }
    let earlier = crate::protect::grant_links::earlier_runs();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let mut refused = None;
    for (is_write, list) in [
        (false, &mut policy.read),
        (true, &mut policy.write),
        (false, &mut policy.exec),
        (false, &mut policy.overlay),
    ] {
        list.retain_mut(|g| {
            let Some(link) = first_symlink(&g.path) else {
                return true;
            };
            // A write grant is not "planted in" itself.
            let own = if is_write {
                canonical_lossy(&g.path)
            } else {
                None
            };
            let planted_in = writable
                .iter()
                .filter(|w| !(is_write && (**w == g.path || Some(*w) == own.as_ref())))
                .find(|w| link.starts_with(w));
            if planted_in.is_none()
                && let Some(why) = linked_why(&g.path, is_write, &earlier, home.as_deref())
            {
                let target = canonical_lossy(&g.path).unwrap_or_else(|| g.path.clone());
                if is_explicit(&g.source) {
                    refused.get_or_insert(GrantError::LinkedGrant {
                        path: g.path.clone(),
                        origin: g.source.clone(),
                        detail: format!(
                            "goes through the symlink {} to {}: {why}",
                            link.display(),
                            target.display()
                        ),
                    });
                } else {
                    notes.push(format!(
                        "grant {} ({}) dropped: it goes through the symlink {} ({why})",
                        g.path.display(),
                        g.source,
                        link.display()
                    ));
                }
                return false;
            }
            if let Some(w) = planted_in {
                if is_explicit(&g.source) {
                    refused.get_or_insert(GrantError::PlantedSymlink {
                        path: g.path.clone(),
                        origin: g.source.clone(),
                        link: link.clone(),
                        writable: w.clone(),
                    });
                    return false;
                }
                // A preset's or default grant reached through a symlink
                // that a command could have planted: never follow it.
                notes.push(format!(
                    "grant {} ({}) dropped: it goes through the symlink {}, inside a writable \
                     grant",
                    g.path.display(),
                    g.source,
                    link.display()
                ));
                return false;
            }
            resolve(g);
            notes.push(format!(
                "grant {} ({}) is a symlink: bound at its target {}",
                g.alias.as_deref().unwrap_or(&g.path).display(),
                g.source,
                g.path.display()
            ));
            true
        });
    }
    if let Some(e) = refused {
        return Err(e);
    }
    let mut extra = Vec::new();
    for g in &policy.deny_read {
        if let Some(real) = canonical_lossy(&g.path)
            && real != g.path
        {
            extra.push(Grant::new(real, format!("{} (other name)", g.source)));
        }
    }
    policy.deny_read.extend(extra);
    Ok(notes)
}

#[cfg(all(test, unix))] // the test makes its symlinks the unix way
mod tests {
    use super::*;

    #[test]
    fn canonical_lossy_resolves_the_existing_prefix() {
        let tmp = skarn_test_support::TempDir::new("grants");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
        let real = std::fs::canonicalize(d.join("real")).unwrap();
        assert_eq!(
            canonical_lossy(&d.join("link/missing/x")).unwrap(),
            real.join("missing/x")
        );
        assert!(passes_through_symlink(&d.join("link/missing")));
        assert!(!passes_through_symlink(&real.join("missing")));
        let mut p = Policy::new(&real);
        p.write.push(Grant::new(d.join("link"), "--write"));
        p.deny_read
            .push(Grant::new(d.join("link/.env"), "--deny-read"));
        let notes = canonicalize(&mut p).unwrap();
        assert_eq!(p.write[0].path, real);
        assert_eq!(p.write[0].alias.as_deref(), Some(d.join("link").as_path()));
        assert_eq!(notes.len(), 1);
        assert!(p.deny_read.iter().any(|g| g.path == real.join(".env")));
        assert!(p.deny_read.iter().any(|g| g.path == d.join("link/.env")));
        // A link inside the (writable) workspace is refused when explicit,
        // dropped when implied by a preset.
        std::os::unix::fs::symlink(d.join("real"), real.join("planted")).unwrap();
        let mut p = Policy::new(&real);
        p.read.push(Grant::new(real.join("planted"), "--read"));
        assert!(matches!(
            canonicalize(&mut p),
            Err(GrantError::PlantedSymlink { .. })
        ));
        let mut p = Policy::new(&real);
        p.overlay
            .push(Grant::new(real.join("planted"), "preset python (detected)"));
        let notes = canonicalize(&mut p).unwrap();
        assert!(p.overlay.is_empty() && notes[0].contains("dropped"));
        assert_eq!(canonical_lossy(Path::new("rel")), None);
    }

    /// The realpath of the longest existing prefix plus the missing rest,
    /// computed the slow way, as the cached resolver must answer.
    fn reference(p: &Path) -> Option<PathBuf> {
        let mut rest = Vec::new();
        let mut cur = p;
        loop {
            match std::fs::canonicalize(cur) {
                Ok(mut real) => {
                    rest.iter().rev().for_each(|c| real.push(c));
                    return Some(real);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    rest.push(cur.file_name()?);
                    cur = cur.parent()?;
                }
                Err(_) => return None,
            }
        }
    }

    #[test]
    fn cached_resolution_matches_realpath_of_the_existing_prefix() {
        let tmp = skarn_test_support::TempDir::new("canon");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join("home/.config/real")).unwrap();
        std::fs::write(d.join("home/file"), "").unwrap();
        let ln = |to: &str, at: &str| std::os::unix::fs::symlink(d.join(to), d.join(at)).unwrap();
        ln("home", "homelink");
        ln("home/.config/real", "home/.config/gh");
        ln("homelink/.config/gh", "home/chain");
        ln("nowhere/x", "home/dangling");
        ln("home/file", "home/filelink");
        let mut cache = CanonicalCache::default();
        for rel in [
            "homelink/.ssh",
            "homelink/.config/gh/hosts.yml",
            "homelink/.config/gh",
            "home/chain/token",
            "home/dangling",
            "home/dangling/below",
            "home/file/below",
            "home/filelink",
            "homelink/.config/missing/deeper/x",
            "homelink",
        ] {
            let p = d.join(rel);
            assert_eq!(cache.resolve(&p), reference(&p), "{rel}");
        }
        assert_eq!(cache.resolve(Path::new("/")), Some(PathBuf::from("/")));
        // Following dangling links: where the name would be created.
        let mut follow = CanonicalCache::following_dangling_links();
        let real = std::fs::canonicalize(&d).unwrap();
        assert_eq!(
            follow.resolve(&d.join("home/dangling/below")),
            Some(real.join("nowhere/x/below"))
        );
        ln("home/loop2", "home/loop1");
        ln("home/loop1", "home/loop2");
        // A target with `..` after a missing directory: the part before it.
        std::fs::create_dir_all(d.join("ws")).unwrap();
        ln("ws/a/../awsdir", "home/dotted");
        assert_eq!(
            follow.resolve(&d.join("home/dotted/credentials")),
            Some(real.join("ws/a/credentials"))
        );
        // Also through an existing directory (the command could swap it
        // for a link): the directory itself.
        std::fs::create_dir_all(d.join("ws/b")).unwrap();
        ln("ws/b/../bdir", "home/dotted2");
        assert_eq!(
            follow.resolve(&d.join("home/dotted2/x")),
            Some(real.join("ws/b/x"))
        );
        // A long chain of dangling links does not use up the bound for
        // the next path.
        std::fs::create_dir_all(d.join("chain")).unwrap();
        for i in 1..39 {
            ln(&format!("chain/{}", i + 1), &format!("chain/{i}"));
        }
        ln("nowhere2", "chain/39");
        assert!(follow.resolve(&d.join("chain/1")).is_some());
        assert_eq!(
            follow.resolve(&d.join("home/dangling/below")),
            Some(real.join("nowhere/x/below"))
        );
        // A loop of links is an error (ELOOP), not a hang.
        assert_eq!(follow.resolve(&d.join("home/loop1/x")), None);
    }
}
