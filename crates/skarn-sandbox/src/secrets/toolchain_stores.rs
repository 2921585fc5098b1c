//! Home-style credential stores outside the home (atk27r F4): a service
//! user's or a CI runner's directory under `/opt` (or any tree the walk
//! reads) holds the same stores a home does — `.ssh`, `.docker/config.json`,
//! `.kube/config`, `.aws`, `.config/gcloud`, `.netrc`, ... — and a
//! self-hosted runner's key and token files. One list for both: the
//! home's well-known stores ([`HOME_SECRET_PATHS`]) are looked up in every
//! directory the toolchain walk lists (by the name of an entry it met,
//! so nothing is looked up twice) and in every passwd home a run reads;
//! each is hidden whole. And a walk cut short (past its budget or depth)
//! hides the directories it did not list ([`masks`], atk27r F9).

use std::path::{Path, PathBuf};

use crate::policy::HOME_SECRET_PATHS;

/// A self-hosted CI runner's key and token files (its directory, or its
/// user's home).
const AGENT_FILES: &[&str] = &[".credentials", ".credentials_rsaparams", ".runner"];

/// Most passwd entries read.
const MAX_USERS: usize = 4096;

/// Most directories hidden for one walk cut short; past it they are
/// gathered into their parents.
pub(super) const MAX_MASKS: usize = 64;

/// The stores under `dir` beginning with its entry `name` (those that
/// exist).
pub(super) fn stores(dir: &Path, name: &str) -> Vec<PathBuf> {
    if !name.starts_with('.') {
        return Vec::new();
    }
    let rels = AGENT_FILES.iter().chain(HOME_SECRET_PATHS);
    rels.filter(|rel| rel.split('/').next() == Some(name))
        .map(|rel| dir.join(rel))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect()
}

/// Every store of every passwd home lying in `readable` (not the
/// caller's `own`, not in `writable`).
pub(super) fn passwd_stores(
    readable: &[PathBuf],
    writable: &[PathBuf],
    own: Option<&Path>,
) -> Vec<PathBuf> {
    let text = std::fs::read("/etc/passwd").unwrap_or_default();
    let text = String::from_utf8_lossy(&text[..text.len().min(1 << 20)]).into_owned();
    let mut homes: Vec<PathBuf> = Vec::new();
    for line in text.lines().take(MAX_USERS) {
        let Some(h) = line.split(':').nth(5).filter(|h| h.starts_with('/')) else {
            continue;
        };
        let h = std::fs::canonicalize(h).unwrap_or_else(|_| PathBuf::from(h));
        let inside = readable.iter().any(|r| h.starts_with(r));
        let open = !writable
            .iter()
            .any(|w| h.starts_with(w) || w.starts_with(&h));
        if inside && open && Some(h.as_path()) != own && !homes.contains(&h) {
            homes.push(h);
        }
    }
    let mut out = Vec::new();
    for h in homes {
        for rel in AGENT_FILES.iter().chain(HOME_SECRET_PATHS) {
            let p = h.join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                out.push(p);
            }
        }
    }
    out
}

/// The directories to hide for a walk of `root` cut short, `unlisted`
/// being the directories it did not list: each, or past [`MAX_MASKS`]
/// their parents (never above `root`, never one holding a place in
/// `writable`: a directory whose parent holds one stays itself). The
/// second list: those that cannot be hidden (they hold a writable
/// place): looked at only at the tools' fixed places.
pub(super) fn masks(
    root: &Path,
    unlisted: Vec<PathBuf>,
    writable: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let holds_writable = |d: &Path| writable.iter().any(|w| w.starts_with(d));
    let (mut keep, open): (Vec<PathBuf>, Vec<PathBuf>) =
        unlisted.into_iter().partition(|d| !holds_writable(d));
    let mut stay: Vec<PathBuf> = Vec::new();
    loop {
        outermost(&mut keep);
        if keep.is_empty() || keep.len() + stay.len() <= MAX_MASKS {
            break;
        }
        let mut up = Vec::new();
        for d in keep.drain(..) {
            match d.parent().filter(|p| p.starts_with(root)) {
                Some(p) if !holds_writable(p) => up.push(p.to_path_buf()),
                _ => stay.push(d),
            }
        }
        keep = up;
    }
    keep.extend(stay);
    outermost(&mut keep);
    (keep, open)
}

/// `dirs` sorted, without duplicates or a directory below another.
fn outermost(dirs: &mut Vec<PathBuf>) {
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|a| a != d && d.starts_with(a)));
}
