//! Other names of a place through other mounts of its filesystem (a bind
//! mount of the workspace at `/data/code`, a devcontainer volume): the
//! same directory under another path, which a comparison of paths misses
//! (atk27k F18, F18b). Read from `/proc/self/mountinfo`
//! ([`crate::protect::mountinfo::mount_names`]), each name checked to be
//! the same place by directory identity (a mount over the name would
//! show something else there).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::protect::mountinfo::{Mount, mount_names, read_mountinfo};
use crate::protect::trusted::Trusted;

/// The mounts, when any filesystem is mounted more than once (else no
/// place has another name through a mount).
fn aliased_mounts() -> Option<Vec<Mount>> {
    let mounts = read_mountinfo();
    let mut devs: Vec<&str> = mounts.iter().map(Mount::dev).collect();
    devs.sort_unstable();
    let n = devs.len();
    devs.dedup();
    (devs.len() < n).then_some(mounts)
}

/// The (device, inode) of `p`, following links.
fn identity(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `name` is `orig` through another mount: the deepest existing
/// directory above (or at) `orig` and the one at the same depth above
/// `name`, below which both have the same names, are one directory.
fn same_place(name: &Path, orig: &Path) -> bool {
    let (mut a, mut b) = (orig, name);
    loop {
        if let Some(id) = identity(a) {
            return identity(b) == Some(id);
        }
        if a.file_name() != b.file_name() {
            return false;
        }
        match (a.parent(), b.parent()) {
            (Some(pa), Some(pb)) => (a, b) = (pa, pb),
            _ => return false,
        }
    }
}

/// The other names of `paths` (absolute, without links) through other
/// mounts: (other name, the path it names).
pub fn other_names(paths: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let Some(mounts) = aliased_mounts() else {
        return Vec::new();
    };
    mount_names(paths, &mounts)
        .into_iter()
        .filter(|(name, orig)| same_place(name, orig))
        .collect()
}

/// Add to `found` each place's other names through other mounts, as the
/// same place (atk27k F18b: a `PATH` directory that is a bind-mount alias
/// of the workspace's `bin` is kept read-only under the workspace's name,
/// where a run writes it).
pub fn add_other_names(found: &mut Vec<Trusted>) {
    let targets: Vec<PathBuf> = found.iter().map(|t| t.target.clone()).collect();
    for (name, orig) in other_names(&targets) {
        if found.iter().any(|t| t.target == name) {
            continue;
        }
        let Some(t) = found.iter().find(|t| t.target == orig) else {
            continue;
        };
        let alias = Trusted {
            target: name,
            via: format!(
                "{} (the same place as {}, through another mount)",
                t.via,
                orig.display()
            ),
            hops: Vec::new(),
            hop_texts: Vec::new(),
            ..t.clone()
        };
        found.push(alias);
    }
}
