//! One directory under two names (a bind mount, an NFS or container
//! volume): compared by (device, inode), not by path text (attack atk22c
//! F5, ADR 0206).

use std::path::{Path, PathBuf};

/// (device, inode) of `p` (links followed), on unix.
pub fn id_of(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

/// `p` and its ancestors, nearest first (at most 64).
fn self_and_ancestors(p: &Path) -> impl Iterator<Item = &Path> {
    p.ancestors().take(64)
}

/// Where `p` lies in `home` when one of `p`'s directories (itself or an
/// ancestor) is the home's directory by identity although its path is
/// not the home's: the same place written below the home's own name.
/// `None` when `p` is not reached through such a second name.
pub(crate) fn through_home_alias(p: &Path, home: &Path) -> Option<PathBuf> {
    let hid = id_of(home)?;
    let home_real = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    for a in self_and_ancestors(p) {
        if a == home || a == home_real {
            return None;
        }
        if id_of(a) == Some(hid) {
            let rel = p.strip_prefix(a).ok()?;
            return Some(home.join(rel));
        }
    }
    None
}

/// Whether the directory `dir` is the home or one of its ancestors by
/// identity (it holds the home under some name).
pub(crate) fn holds_home(dir: &Path, home: &Path) -> bool {
    let Some(did) = id_of(dir) else {
        return false;
    };
    self_and_ancestors(home)
        .filter(|a| a.parent().is_some())
        .any(|a| id_of(a) == Some(did))
}

/// The home place (a top-level dot directory of `home`, or one of the
/// program directories) that `p` or one of its ancestors is by identity
/// while its path is not under the home: `~/.config` bound elsewhere
/// (attack atk22g F15). At most 256 of the home's entries are compared.
pub(crate) fn in_home_place_by_identity(
    p: &Path,
    home: &Path,
    program_dirs: &[&str],
) -> Option<PathBuf> {
    let home_real = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    if p.starts_with(home) || p.starts_with(&home_real) {
        // Judged by the path (`home_place`).
        return None;
    }
    let mut places: Vec<((u64, u64), PathBuf)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(home) {
        for e in rd.flatten().take(256) {
            let n = e.file_name();
            if n.to_string_lossy().starts_with('.') {
                let path = e.path();
                if let Some(id) = id_of(&path).filter(|_| path.is_dir()) {
                    places.push((id, path));
                }
            }
        }
    }
    for d in program_dirs {
        let path = home.join(d);
        if let Some(id) = id_of(&path).filter(|_| path.is_dir()) {
            places.push((id, path));
        }
    }
    if places.is_empty() {
        return None;
    }
    for a in self_and_ancestors(p) {
        if let Some(id) = id_of(a)
            && let Some((_, place)) = places.iter().find(|(pid, _)| *pid == id)
        {
            return Some(place.clone());
        }
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_is_no_alias() {
        let t = std::env::temp_dir().join(format!("skarn-dirid-{}", std::process::id()));
        let h = t.join("h");
        std::fs::create_dir_all(h.join("p")).unwrap();
        assert_eq!(through_home_alias(&h.join("p"), &h), None);
        assert!(holds_home(&h, &h));
        assert!(holds_home(&t, &h));
        assert!(!holds_home(&h.join("p"), &h));
        std::fs::remove_dir_all(&t).unwrap();
    }
}
