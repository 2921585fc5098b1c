//! Protected places' inodes, and the files below protected directories
//! that have other names (hard links).

use std::collections::HashMap;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
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

    /// Record the place number `idx` by its known device and inode.
    pub fn add_id(&mut self, (dev, ino): (u64, u64), idx: usize) {
        self.by_ino.entry(ino).or_default().push((dev, idx));
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
    add_files_below_with(places, from, &mut Below::default())
}

/// How [`add_files_below_with`] looks (issue 30: the statx per entry of
/// the protected directories was about 2,000 calls a run).
#[derive(Debug, Default)]
pub struct Below {
    /// Only the secret places are looked below (the caller walks no
    /// directory for the other places' names: only the secret ones'
    /// link counts are asked).
    pub secret_only: bool,
    /// Record the entries below the other (protected, not secret) places
    /// by their device and directory-entry inode, every non-directory,
    /// without a `stat` each: the number in `places` with its (device,
    /// inode), for [`Inodes::add_id`]. (What the walk compares is the
    /// same pair, so a file with one link simply never matches; one
    /// another mount shows matches too.) Only on file systems whose
    /// directory entries carry the inode `stat` gives ([`d_ino_is_st_ino`]);
    /// elsewhere, and for links, as before.
    pub by_entry: Option<HashMap<usize, (u64, u64)>>,
}

/// [`add_files_below`], looking as `how` says.
pub fn add_files_below_with(
    places: &mut Vec<(PathBuf, bool)>,
    from: usize,
    how: &mut Below,
) -> bool {
    let mut seen = 0usize;
    let mut complete = true;
    let dirs: Vec<(PathBuf, bool, u64)> = places[from..]
        .iter()
        .filter(|(_, secret)| *secret || !how.secret_only)
        .filter_map(|(p, secret)| {
            let m = std::fs::metadata(p).ok().filter(|m| m.is_dir())?;
            Some((p.clone(), *secret, m.dev()))
        })
        .collect();
    for (dir, secret, dev) in dirs {
        let deep = secret && !skarn_state(&dir);
        let (levels, each_max) = if deep {
            (BELOW_LEVELS, usize::MAX)
        } else {
            SHALLOW
        };
        // (Each directory goes with its device and whether its entries'
        // inode numbers are `stat`'s.)
        let by_entry = !secret && how.by_entry.is_some();
        let trusted = by_entry && d_ino_is_st_ino(&dir);
        let mut each = 0usize;
        let mut stack = vec![(dir, 0usize, dev, trusted)];
        'dir: while let Some((d, level, dev, trusted)) = stack.pop() {
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
                let kind = e.file_type().ok();
                let link = kind.is_some_and(|t| t.is_symlink());
                if trusted && let Some(kind) = kind.filter(|_| !link) {
                    if kind.is_dir() {
                        if level + 1 < levels {
                            // (A mount point below: its own device and
                            // file system.)
                            let Ok(m) = std::fs::symlink_metadata(&p) else {
                                continue;
                            };
                            let t = m.dev() == dev || d_ino_is_st_ino(&p);
                            stack.push((p, level + 1, m.dev(), t));
                        }
                    } else if let Some(ids) = how.by_entry.as_mut() {
                        ids.insert(places.len(), (dev, e.ino()));
                        places.push((p, secret));
                    }
                    continue;
                }
                let Ok(m) = std::fs::metadata(&p) else {
                    continue;
                };
                if m.is_dir() {
                    if level + 1 < levels && !link {
                        let t = by_entry && (m.dev() == dev && trusted || d_ino_is_st_ino(&p));
                        stack.push((p, level + 1, m.dev(), t));
                    }
                } else if m.nlink() > 1 {
                    places.push((p, secret));
                }
            }
        }
    }
    complete
}

/// Whether the directory entries of the file system `dir` is on carry the
/// inode number `stat` reports (ext4, xfs, btrfs, tmpfs); not overlayfs
/// (a lower layer's entries may not), network or FUSE file systems.
#[cfg(target_os = "linux")]
fn d_ino_is_st_ino(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: an all-zero statfs is a valid value to be filled.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a NUL-terminated path, st a valid out pointer.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    const EXT: u32 = 0xEF53;
    const XFS: u32 = 0x5846_5342;
    const BTRFS: u32 = 0x9123_683E;
    const TMPFS: u32 = 0x0102_1994;
    // (The magic numbers are 32 bits; the field is wider on 64-bit.)
    matches!(st.f_type as u32, EXT | XFS | BTRFS | TMPFS)
}

#[cfg(not(target_os = "linux"))]
fn d_ino_is_st_ino(_dir: &Path) -> bool {
    false
}
