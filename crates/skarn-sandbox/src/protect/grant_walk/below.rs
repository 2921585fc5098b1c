//! Protected places' inodes, and the files below protected directories
//! that have other names (hard links).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Inodes of protected places, looked for under other names.
#[derive(Debug, Default)]
pub struct Inodes {
    by_ino: HashMap<u64, Vec<(u64, usize)>>,
}

impl Inodes {
    /// Record `path`'s inode as number `idx` (with `follow`, of the place
    /// its links lead to; else nothing for a link).
    pub fn add(&mut self, path: &Path, idx: usize, follow: bool) {
        let m = if follow {
            std::fs::metadata(path)
        } else {
            std::fs::symlink_metadata(path)
        };
        if let Ok(m) = m
            && !m.file_type().is_symlink()
        {
            self.by_ino.entry(m.ino()).or_default().push((m.dev(), idx));
        }
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.by_ino.is_empty()
    }

    /// The recorded place `path` (whose entry gave inode `ino`) is, if any.
    pub(super) fn hit(&self, ino: u64, path: &Path) -> Option<usize> {
        let cands = self.by_ino.get(&ino)?;
        let m = std::fs::symlink_metadata(path).ok()?;
        cands
            .iter()
            .find(|(dev, _)| *dev == m.dev() && m.ino() == ino)
            .map(|(_, i)| *i)
    }
}

/// Entries [`add_files_below`] looks at below the secret directories,
/// in all.
pub const MAX_BELOW_ENTRIES: usize = 50_000;
/// Levels [`add_files_below`] goes down in a secret directory.
const BELOW_LEVELS: usize = 8;
/// Levels and entries per directory looked at below the other places
/// (protected, not secret) and skarn's own state.
const SHALLOW: (usize, usize) = (3, 128);

/// skarn's own state (stores, records, servers' directories): written by
/// skarn and by the sandboxed side, never a place the user links a
/// credential from; looked at shallowly.
fn skarn_state(dir: &Path) -> bool {
    dir.ends_with(".local/state/skarn") || dir.ends_with(".local/state/skarn-servers")
}

/// Files below each directory of `places[from..]` (path, secret) that
/// have another name (a non-directory whose link count, links followed
/// as host programs follow them, is above one), added to `places`, so
/// that a hard link of one (`~/.aws/credentials` when `~/.aws` is
/// listed) is found too. A file with one link has no other name: only
/// those with more are recorded. A secret directory is looked at 8
/// levels down, [`MAX_BELOW_ENTRIES`] entries in all (a month of gcloud's
/// logs beside its `legacy_credentials` is a few hundred: attack atk22i
/// F3); the other places and skarn's own state 3 levels down, 128 entries
/// each. Returns false when the bound of the secret directories stopped
/// it (the caller says so).
pub fn add_files_below(places: &mut Vec<(PathBuf, bool)>, from: usize) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut seen = 0usize;
    let mut complete = true;
    let dirs: Vec<(PathBuf, bool)> = places[from..]
        .iter()
        .filter(|(p, _)| p.is_dir())
        .cloned()
        .collect();
    for (dir, secret) in dirs {
        let deep = secret && !skarn_state(&dir);
        let (levels, each_max) = if deep {
            (BELOW_LEVELS, usize::MAX)
        } else {
            SHALLOW
        };
        let mut each = 0usize;
        let mut stack = vec![(dir, 0usize)];
        'dir: while let Some((d, level)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                if each >= each_max {
                    break 'dir;
                }
                if deep && seen >= MAX_BELOW_ENTRIES {
                    complete = false;
                    break 'dir;
                }
                each += 1;
                if deep {
                    seen += 1;
                }
                let p = e.path();
                let link = e.file_type().is_ok_and(|t| t.is_symlink());
                let Ok(m) = std::fs::metadata(&p) else {
                    continue;
                };
                if m.is_dir() {
                    if level + 1 < levels && !link {
                        stack.push((p, level + 1));
                    }
                } else if m.nlink() > 1 {
                    places.push((p, secret));
                }
            }
        }
    }
    complete
}
