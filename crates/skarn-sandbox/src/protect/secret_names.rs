//! Other names of hidden files inside a run's grants (attacks atk27i F2,
//! atk22g F6), for every run, granted a secret or not.
//!
//! A hidden file (a home secret path and the files of a secret directory
//! to a small depth, a configured secret's `file` source, a `--deny-read`
//! path, a secret file a variable or git names) is reachable under another
//! name in two ways:
//! - a hard link: only a file whose link count is above one has one; the
//!   read grants are then walked (bounded) for its `(st_dev, st_ino)`.
//!   The writable grants are walked for them by the reservation step
//!   before every run ([`crate::protect::grant_walk`]);
//! - a bind mount: another mount of the same filesystem whose root lies
//!   inside the hidden place, or which shows the hidden place below it
//!   (read from `/proc/self/mountinfo`, no walk).
//!
//! Each such name inside a grant is hidden like the file itself.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::linux::host::HostFacts;
use crate::policy::Policy;

/// What [`find`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// Other names to hide, each with the hidden place it names.
    pub hide: Vec<(PathBuf, PathBuf)>,
    /// The walk of the read grants stopped at a bound: why.
    pub cut: Option<String>,
}

/// The other names of `policy`'s hidden places inside its grants.
pub fn find(policy: &Policy, host: &HostFacts) -> Found {
    let (hidden, complete) = hidden_places(policy, host);
    let grants = grant_roots(policy);
    let mut found = Found::default();
    if !complete {
        found.cut = Some(format!(
            "the hidden directories hold more than {} entries: files past them were not looked \
             at for other names (hard links) in the read grants",
            crate::protect::grant_walk::MAX_BELOW_ENTRIES
        ));
    }
    for (m, orig) in crate::protect::mountinfo::mount_names(
        &hidden,
        &crate::protect::mountinfo::read_mountinfo(),
    ) {
        if inside_any(&m, &grants) && !covered(&m, &hidden) {
            found.hide.push((m, orig));
        }
    }
    // Hard links: only files with more than one name.
    let mut inodes = crate::protect::grant_walk::Inodes::default();
    let mut linked: Vec<(u64, u64, usize)> = Vec::new();
    for (i, p) in hidden.iter().enumerate() {
        if let Ok(m) = std::fs::metadata(p)
            && m.is_file()
            && m.nlink() > 1
        {
            inodes.add(p, i, true);
            linked.push((m.dev(), m.ino(), i));
        }
    }
    if linked.is_empty() {
        return found;
    }
    let writable = writable_roots(policy);
    let mut roots: Vec<PathBuf> = Vec::new();
    for g in policy
        .read
        .iter()
        .chain(&policy.exec)
        .chain(&policy.overlay)
    {
        let p = &g.path;
        if crate::secrets::value_scope::is_system(p)
            || crate::secrets::value_scope::is_toolchain(g)
            || writable.iter().any(|w| p.starts_with(w))
        {
            continue;
        }
        // A granted file: looked at itself.
        if let Ok(m) = std::fs::metadata(p)
            && !m.is_dir()
        {
            if let Some((_, _, i)) = linked
                .iter()
                .find(|(d, n, _)| *d == m.dev() && *n == m.ino())
            {
                found.hide.push((p.clone(), hidden[*i].clone()));
            }
            continue;
        }
        roots.push(p.clone());
    }
    roots.sort();
    roots.dedup();
    if roots.is_empty() {
        return found;
    }
    let bounds = crate::protect::git::nested_git::before_bounds(policy.walk_max_dirs);
    let w = crate::protect::grant_walk::walk(&roots, bounds, true, &inodes);
    let capped = w.aliases.len() >= crate::protect::grant_walk::MAX_FOUND;
    for (alias, i) in w.aliases {
        if !covered(&alias, &hidden) {
            found.hide.push((alias, hidden[i].clone()));
        }
    }
    if w.truncated || w.truncated_late || capped {
        found.cut = Some(format!(
            "a hidden file has other names (hard links), and the walk of the read grants for \
             them stopped at its bound ({} directories, {} ms): other names past it are not \
             hidden; raise it with --walk-max-dirs or [run] walk_max_dirs",
            bounds.dirs,
            bounds.time.as_millis()
        ));
    }
    found
}

/// The hidden places, canonical, with the files of hidden directories.
fn hidden_places(policy: &Policy, host: &HostFacts) -> (Vec<PathBuf>, bool) {
    let mut named: Vec<PathBuf> = crate::policy::default_secret_paths(host.home.as_deref());
    named.extend(host.secret_aliases.iter().cloned());
    named.extend(
        host.trusted
            .iter()
            .filter(|t| t.secret)
            .map(|t| t.target.clone()),
    );
    named.extend(policy.deny_read.iter().map(|g| g.path.clone()));
    let mut places: Vec<(PathBuf, bool)> = named
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .map(|p| (p, true))
        .collect();
    let complete = crate::protect::grant_walk::add_files_below(&mut places, 0);
    let mut out: Vec<PathBuf> = places.into_iter().map(|(p, _)| p).collect();
    out.sort();
    out.dedup();
    (out, complete)
}

/// Whether `p` is hidden anyway (a hidden place or below one).
fn covered(p: &Path, hidden: &[PathBuf]) -> bool {
    hidden.iter().any(|h| p.starts_with(h))
}

fn writable_roots(policy: &Policy) -> Vec<PathBuf> {
    std::iter::once(policy.workspace.clone())
        .chain(policy.write.iter().map(|g| g.path.clone()))
        .collect()
}

/// Every grant's path (read, write, exec, overlay, the workspace).
fn grant_roots(policy: &Policy) -> Vec<PathBuf> {
    let mut v = writable_roots(policy);
    for g in policy
        .read
        .iter()
        .chain(&policy.exec)
        .chain(&policy.overlay)
    {
        v.push(g.path.clone());
    }
    v
}

fn inside_any(p: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| p.starts_with(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protect::mountinfo::{mount_names, parse_mountinfo};

    #[test]
    fn bind_mounts_of_and_around_a_secret_directory_are_other_names() {
        let text = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    2 1 8:1 /home/u/.ssh /srv/rd/ssh rw - ext4 /dev/sda1 rw\n\
                    3 1 8:1 /home /mnt/home\\040copy rw - ext4 /dev/sda1 rw\n\
                    4 1 8:2 /home/u/.ssh /srv/other rw - ext4 /dev/sdb1 rw\n\
                    5 1 8:1 /srv/kube /home/u/.kube rw - ext4 /dev/sda1 rw\n";
        let mounts = parse_mountinfo(text);
        let hidden = [
            PathBuf::from("/home/u/.ssh"),
            PathBuf::from("/home/u/.kube"),
        ];
        let names: Vec<PathBuf> = mount_names(&hidden, &mounts)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.contains(&PathBuf::from("/srv/rd/ssh")), "{names:?}");
        assert!(
            names.contains(&PathBuf::from("/mnt/home copy/u/.ssh")),
            "{names:?}"
        );
        assert!(!names.contains(&PathBuf::from("/srv/other")), "{names:?}");
        // The source of a bind mount onto a secret is another name of it.
        assert!(names.contains(&PathBuf::from("/srv/kube")), "{names:?}");
    }
}
