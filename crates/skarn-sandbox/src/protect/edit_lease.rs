//! Pending edits of the agent's own file tools (ADR 0244, attack atk24j
//! F7). The hook's file guard allows a Write/Edit, then the agent's
//! unconfined process writes seconds later (after the user approved the
//! edit, or while a parallel subagent works), following whatever links
//! are there then. A sandboxed run that *starts* in between could swap the
//! name for a link to `~/.bashrc`. So the guard records a lease for each
//! path it allowed, and every run prepared while the lease is pending
//! keeps those paths (and the directories on their way) as they are.
//!
//! Leases live in `~/.local/state/skarn/edits/` (never under
//! `$XDG_STATE_HOME`, which may name a directory a run can write:
//! `~/.local/state/skarn` is a secret path no run is granted). One file per
//! allowed target, `<16 hex>.lease`, JSON `{"expires": SECS, "paths": [..]}`.
//! A lease only ever narrows a run: a missing, corrupt, oversized or
//! expired one holds nothing, and a hostile one can at most keep more
//! paths read-only.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The lease directory under a home.
pub const DIR: &str = ".local/state/skarn/edits";
/// Lease files looked at, at most (a full directory refuses new leases).
pub const MAX_LEASES: usize = 256;
/// Largest lease file read.
pub const MAX_FILE: usize = 64 * 1024;
/// Paths one lease holds, at most.
pub const MAX_PATHS: usize = 64;
/// Paths held for one run, at most (the rest are dropped, said in the
/// report by the planner).
pub const MAX_HELD: usize = 1024;
/// Longest path held (bytes).
const MAX_PATH: usize = 4096;

/// Why a lease could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The lease directory or file could not be written.
    #[error("cannot record the pending edit in {dir}: {source}")]
    Io {
        /// The lease directory.
        dir: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Too many leases are pending.
    #[error(
        "{MAX_LEASES} edits of the agent's file tools are already pending in {0} (each waits \
         for its write, or for its lease to expire)"
    )]
    Full(PathBuf),
}

#[derive(Serialize, Deserialize)]
struct Lease {
    /// Seconds since the epoch after which the lease holds nothing.
    expires: u64,
    /// The paths held.
    paths: Vec<PathBuf>,
}

/// The lease directory of `home`.
pub fn dir(home: &Path) -> PathBuf {
    home.join(DIR)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The file name of the lease keyed `key` (the tool call's id and target).
fn file_name(key: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(key.as_bytes());
    let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{hex}.lease")
}

/// A path a lease may hold: absolute, without `.`/`..`, not too long.
fn plain(p: &Path) -> bool {
    p.is_absolute()
        && p.as_os_str().len() <= MAX_PATH
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && p.components().count() > 1
}

/// Record a lease keyed `key` holding `paths` for `ttl`; expired leases
/// are removed on the way.
pub fn record(home: &Path, key: &str, paths: &[PathBuf], ttl: Duration) -> Result<(), LeaseError> {
    let d = dir(home);
    let io = |source| LeaseError::Io {
        dir: d.clone(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .map_err(io)?;
    let md = std::fs::symlink_metadata(&d).map_err(io)?;
    if !md.is_dir() {
        return Err(io(std::io::Error::other("not a directory")));
    }
    let name = file_name(key);
    let mut count = 0;
    for e in std::fs::read_dir(&d)
        .map_err(io)?
        .flatten()
        .take(4 * MAX_LEASES)
    {
        let n = e.file_name();
        let Some(n) = n.to_str() else { continue };
        if !n.ends_with(".lease") || n == name {
            continue;
        }
        match read(&e.path()) {
            Some(l) if l.expires > now() => count += 1,
            _ => {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    if count >= MAX_LEASES {
        return Err(LeaseError::Full(d));
    }
    let lease = Lease {
        expires: now().saturating_add(ttl.as_secs().max(1)),
        paths: paths
            .iter()
            .filter(|p| plain(p))
            .take(MAX_PATHS)
            .cloned()
            .collect(),
    };
    let bytes = serde_json::to_vec(&lease).map_err(|e| io(std::io::Error::other(e)))?;
    let tmp = d.join(format!(".tmp-{}-{}", std::process::id(), name));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    let done = f
        .write_all(&bytes)
        .and_then(|()| std::fs::rename(&tmp, d.join(&name)));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// Drop the lease keyed `key` (the write it waited for is done).
pub fn release(home: &Path, key: &str) {
    let _ = std::fs::remove_file(dir(home).join(file_name(key)));
}

fn read(p: &Path) -> Option<Lease> {
    let bytes = crate::protect::small_file::read_bytes(p).ok()??;
    if bytes.len() > MAX_FILE {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// The paths every pending, unexpired lease of `home` holds (plain
/// absolute paths only, at most [`MAX_HELD`]), and whether some were left
/// out for the bound.
pub fn pending(home: &Path) -> (Vec<PathBuf>, bool) {
    pending_in(&dir(home))
}

/// [`pending`] for the lease directory `d`.
pub fn pending_in(d: &Path) -> (Vec<PathBuf>, bool) {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut cut = false;
    let Ok(rd) = std::fs::read_dir(d) else {
        return (out, false);
    };
    let t = now();
    for e in rd.flatten().take(4 * MAX_LEASES) {
        if !e
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(".lease"))
        {
            continue;
        }
        let Some(l) = read(&e.path()) else { continue };
        if l.expires <= t {
            continue;
        }
        for p in l.paths.into_iter().take(MAX_PATHS).filter(|p| plain(p)) {
            if out.contains(&p) {
                continue;
            }
            if out.len() == MAX_HELD {
                cut = true;
                break;
            }
            out.push(p);
        }
    }
    out.sort();
    (out, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_hold_until_released_or_expired_and_junk_holds_nothing() {
        let t = tempfile::tempdir().unwrap();
        let h = t.path();
        let a = PathBuf::from("/w/notes.md");
        record(
            h,
            "id1\0/w/notes.md",
            &[a.clone(), "rel".into(), "/w/../x".into()],
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(pending(h).0, vec![a.clone()]);
        release(h, "id1\0/w/notes.md");
        assert!(pending(h).0.is_empty());
        record(h, "k", std::slice::from_ref(&a), Duration::from_secs(60)).unwrap();
        // Corrupt and expired files hold nothing.
        std::fs::write(dir(h).join("00.lease"), b"{not json").unwrap();
        std::fs::write(
            dir(h).join("01.lease"),
            br#"{"expires": 1, "paths": ["/w/old"]}"#,
        )
        .unwrap();
        assert_eq!(pending(h).0, vec![a]);
    }
}
