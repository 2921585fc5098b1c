//! Canonical paths on this host, even for names that do not exist yet:
//! links followed, the longest existing prefix resolved (used by grant
//! resolution and by every protection that decides by what a path is).

use std::path::{Component, Path, PathBuf};

#[cfg(not(unix))]
use self::plain as facts;
#[cfg(unix)]
use crate::policy::link_facts as facts;

/// The canonical form of `p` even when its last components do not exist:
/// the longest existing prefix is resolved (symlinks followed) and the
/// missing rest appended. `None` when `p` is relative or a component
/// cannot be examined for another reason than absence.
pub fn canonical_lossy(p: &Path) -> Option<PathBuf> {
    CanonicalCache::default().resolve(p)
}

/// [`canonical_lossy`] for many paths: the resolved directories are
/// remembered, so paths sharing parents (the secret paths of one home)
/// cost one `lstat` each instead of a full `realpath` per path.
#[derive(Default)]
pub struct CanonicalCache {
    dirs: std::collections::HashMap<PathBuf, Option<PathBuf>>,
    /// Follow dangling links to where the name would be created.
    follow_dangling: bool,
    /// Dangling links followed so far (a bound against link loops).
    hops: u32,
}

impl CanonicalCache {
    /// A cache that also follows a dangling link to the place it names: a
    /// secret reached through `~/.aws -> /work/ws/aws` (missing) would be
    /// created at `/work/ws/aws`, so that is the name to deny and reserve.
    pub fn following_dangling_links() -> CanonicalCache {
        CanonicalCache {
            follow_dangling: true,
            ..CanonicalCache::default()
        }
    }

    /// [`canonical_lossy`] of `p`.
    pub fn resolve(&mut self, p: &Path) -> Option<PathBuf> {
        // The bound on dangling links followed is per path asked for.
        self.hops = 0;
        self.resolve_from(p)
    }

    /// A dangling link's target with `..` in it: where `dir/..` leads
    /// depends on what `dir` is when the name is opened, and the command
    /// may replace anything inside its writable grants (a symlink instead
    /// of a directory), so the name taken is the part before the first
    /// `..`: denied and reserved, it keeps the link where it points now.
    fn resolve_dotdot(&mut self, to: &Path) -> Option<PathBuf> {
        let upto: PathBuf = to
            .components()
            .take_while(|c| *c != std::path::Component::ParentDir)
            .collect();
        self.resolve_from(&upto)
    }

    fn resolve_from(&mut self, p: &Path) -> Option<PathBuf> {
        if !p.is_absolute() {
            return None;
        }
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            // The root, or a path ending in `..`: the kernel's answer.
            return match std::fs::canonicalize(p) {
                Ok(real) => Some(real),
                Err(_) if p.parent().is_none() => Some(p.to_path_buf()),
                Err(_) => None,
            };
        };
        let real_parent = match self.dirs.get(parent) {
            Some(r) => r.clone(),
            None => {
                let r = self.resolve_from(parent);
                self.dirs.insert(parent.to_path_buf(), r.clone());
                r
            }
        }?;
        let candidate = real_parent.join(name);
        match facts::kind(&candidate) {
            // A link: followed as the kernel follows it (and any link it
            // leads to).
            Ok(facts::Kind::Link) => match facts::canonicalize(&candidate) {
                Ok(real) => Some(real),
                // A dangling link: the longest existing prefix is the
                // link's own directory, unless asked to follow it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if !self.follow_dangling || self.hops >= 40 {
                        return Some(candidate);
                    }
                    self.hops += 1;
                    let to = real_parent.join(facts::read_link(&candidate).ok()?);
                    self.resolve_dotdot(&to)
                }
                Err(_) => None,
            },
            Ok(_) => Some(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(candidate),
            Err(_) => None,
        }
    }
}

/// Whether `p` is or passes through a symbolic link (on this host, now).
pub fn passes_through_symlink(p: &Path) -> bool {
    first_symlink(p).is_some()
}

/// The first component of `p` that is a symbolic link, if any.
pub fn first_symlink(p: &Path) -> Option<PathBuf> {
    let mut acc = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => acc.push("/"),
            Component::Normal(n) => {
                acc.push(n);
                match facts::kind(&acc) {
                    Ok(facts::Kind::Link) => return Some(acc),
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
            _ => {}
        }
    }
    None
}

/// Outside Unix: the kernel's answers, each time.
#[cfg(not(unix))]
mod plain {
    use std::path::{Path, PathBuf};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        Link,
        Other,
    }

    pub fn kind(p: &Path) -> std::io::Result<Kind> {
        let m = std::fs::symlink_metadata(p)?;
        Ok(if m.file_type().is_symlink() {
            Kind::Link
        } else {
            Kind::Other
        })
    }

    pub fn canonicalize(p: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(p)
    }

    pub fn read_link(p: &Path) -> std::io::Result<PathBuf> {
        std::fs::read_link(p)
    }
}
