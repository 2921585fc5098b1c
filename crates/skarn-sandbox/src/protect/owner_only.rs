//! Files and directories under granted system directories that their owner
//! made unreadable to others (`/etc/wireguard/*.conf`, private keys under
//! `/etc/pki` or `/etc/ssl/private`, kubeconfigs under `/etc/kubernetes`).
//! A command run as root (with every capability dropped, but still the
//! owner of root's files) could read them; the sandbox hides each one like
//! a secret, so what is closed to others outside stays closed inside.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// System directories walked for owner-only entries, with the depth walked
/// in each: all of each. The walk is root's fallback where the idmapped
/// binds of [`crate::linux::idmap`] cannot be made (a submount that refuses id
/// mapping, a caller in the overflow group) or where a private cache layer
/// sits under one of them: a depth limit there would leave deeper closed
/// files readable, so the walk goes all the way down and, past
/// [`MAX_ENTRIES`], hides every directory it has not walked (fail closed).
/// The package-managed trees (`/usr`, `/lib*`, `/nix/store`) are
/// world-readable by design.
pub(crate) const WALKED: &[(&str, usize)] = &[
    ("/etc", usize::MAX),
    ("/opt", usize::MAX),
    ("/srv", usize::MAX),
];

/// The walked directories (for documentation and the report).
pub const WALKED_DIRS: &[&str] = &["/etc", "/opt", "/srv"];

/// At most this many entries are examined per run; past it the walk stops
/// and the planner says so.
pub const MAX_ENTRIES: usize = 50_000;

/// Result of a walk: owner-only paths, and whether the walk was cut short.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OwnerOnly {
    /// Paths to hide (a directory hides everything below it).
    pub paths: Vec<PathBuf>,
    /// The entry cap was reached.
    pub truncated: bool,
}

fn closed_to_others(mode: u32, is_dir: bool) -> bool {
    if is_dir {
        mode & 0o005 != 0o005
    } else {
        mode & 0o004 == 0
    }
}

/// Walk `dirs` (without following symlinks), skipping the directories in
/// `skip` (writable grants: the command could fill them to exhaust the
/// walk), and list every entry closed to others. When the walk stops at
/// [`MAX_ENTRIES`], every directory not yet walked is listed too, so it is
/// hidden whole (fail closed) rather than left readable.
pub fn find(dirs: &[&str], skip: &[PathBuf]) -> OwnerOnly {
    let walked: Vec<(&str, usize)> = dirs
        .iter()
        .map(|d| {
            let depth = WALKED
                .iter()
                .find(|(w, _)| w == d)
                .map_or(usize::MAX, |(_, n)| *n);
            (*d, depth)
        })
        .collect();
    find_to_depth(&walked, skip)
}

fn find_to_depth(dirs: &[(&str, usize)], skip: &[PathBuf]) -> OwnerOnly {
    let mut out = OwnerOnly::default();
    let mut seen = 0usize;
    let mut stack: Vec<(PathBuf, usize)> =
        dirs.iter().map(|(d, n)| (PathBuf::from(d), *n)).collect();
    while let Some((dir, depth)) = stack.pop() {
        if skip.iter().any(|s| dir.starts_with(s)) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                out.truncated = true;
                out.paths.push(dir.clone());
                out.paths.extend(stack.drain(..).map(|(d, _)| d));
                out.paths.sort();
                return out;
            }
            let Ok(md) = e.metadata() else { continue };
            let ft = md.file_type();
            if ft.is_symlink() {
                continue;
            }
            let p = e.path();
            if closed_to_others(md.permissions().mode(), ft.is_dir()) {
                out.paths.push(p);
            } else if ft.is_dir() && depth > 1 {
                stack.push((p, depth - 1));
            }
        }
    }
    out.paths.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        assert!(closed_to_others(0o600, false));
        assert!(closed_to_others(0o640, false));
        assert!(!closed_to_others(0o644, false));
        assert!(closed_to_others(0o700, true));
        assert!(closed_to_others(0o751, true));
        assert!(!closed_to_others(0o755, true));
    }

    #[test]
    fn finds_owner_only_entries() {
        let tmp = skarn_test_support::TempDir::new("oo");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join("open/closed")).unwrap();
        std::fs::write(d.join("open/key"), "k").unwrap();
        std::fs::write(d.join("open/pub"), "p").unwrap();
        let set = |p: &str, m: u32| {
            std::fs::set_permissions(d.join(p), std::fs::Permissions::from_mode(m)).unwrap()
        };
        set("open/key", 0o600);
        set("open/pub", 0o644);
        set("open/closed", 0o700);
        let s = d.to_str().unwrap();
        let got = find(&[s], &[]);
        assert_eq!(got.paths, vec![d.join("open/closed"), d.join("open/key")]);
        assert!(!got.truncated);
        // A skipped (writable) directory is not walked.
        assert!(find(&[s], &[d.join("open")]).paths.is_empty());
    }
}
