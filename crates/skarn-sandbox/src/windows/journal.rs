//! The journal of one run's ACL changes, written before the first change
//! and removed after the last revert, so a run killed in between (Ctrl-C
//! twice, a crash, a power cut) is repaired by the next run: every
//! explicit ACE of the recorded container SID is removed from the recorded
//! paths, the recorded placeholders are removed when still empty, and the
//! git files that must not appear ([`Journal::remove_after`]) are removed.
//!
//! One journal and one lock file per container profile, in
//! `%LOCALAPPDATA%\skarn\appcontainer`. A run holds the lock for its whole
//! duration (runs of one workspace take turns); the operating system
//! releases it when the process ends however it ends, so a journal whose
//! lock can be taken belongs to a run that is over.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::winpath;

/// Format version of the journal.
pub const VERSION: u32 = 1;

/// What one run changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// [`VERSION`].
    pub version: u32,
    /// Container profile name.
    pub profile: String,
    /// Container SID (string form), whose ACEs are removed.
    pub sid: String,
    /// Paths that received ACEs.
    pub paths: Vec<String>,
    /// Placeholders created (removed if still empty directories).
    pub placeholders: Vec<String>,
    /// Paths missing before the run, removed if the command created them.
    #[serde(default)]
    pub remove_after: Vec<String>,
}

/// Why a journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// I/O on the journal or its lock.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A journal that does not parse (left as is; named in the error).
    #[error("{path}: not a skarn ACL journal: {source}")]
    Parse {
        /// File concerned.
        path: PathBuf,
        /// Cause.
        source: serde_json::Error,
    },
}

/// The directory holding journals and locks.
pub fn dir(local_app_data: &str) -> PathBuf {
    PathBuf::from(winpath::join(local_app_data, "skarn\\appcontainer"))
}

/// Journal file of a profile.
pub fn journal_path(dir: &Path, profile: &str) -> PathBuf {
    dir.join(format!("{profile}.json"))
}

/// Lock file of a profile.
pub fn lock_path(dir: &Path, profile: &str) -> PathBuf {
    dir.join(format!("{profile}.lock"))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Write the journal durably (a temporary file renamed over the old one).
pub fn write(path: &Path, j: &Journal) -> Result<(), JournalError> {
    use std::io::Write;
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(j).map_err(|source| JournalError::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(&text).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// Read a journal; `None` when there is none.
pub fn read(path: &Path) -> Result<Option<Journal>, JournalError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|source| JournalError::Parse {
                path: path.to_path_buf(),
                source,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Remove a journal (absent is fine).
pub fn remove(path: &Path) -> Result<(), JournalError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(path)(e)),
        _ => Ok(()),
    }
}

/// Open (creating) a profile's lock file and take it exclusively, waiting
/// for another run of the same workspace to finish.
pub fn lock(path: &Path) -> Result<std::fs::File, JournalError> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(path))?;
    match f.try_lock() {
        Ok(()) => return Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("skarn: waiting for another run in this workspace to finish");
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(path)(e)),
    }
    f.lock().map_err(io(path))?;
    Ok(f)
}

/// Take a profile's lock only if free (a finished or crashed run's).
pub fn try_lock(path: &Path) -> Result<Option<std::fs::File>, JournalError> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(path))?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(io(path)(e)),
    }
}

/// Profiles with a journal in `dir` (left by runs that did not finish, or
/// by a run in progress).
pub fn pending(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".json").map(str::to_string)
        })
        .filter(|n| super::profile_name::is_valid(n))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_lock_and_pending() {
        let d = std::env::temp_dir().join(format!("skarn-journal-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let j = Journal {
            version: VERSION,
            profile: "skarn.0123456789abcdef".into(),
            sid: "S-1-15-2-1-2-3-4-5-6-7".into(),
            paths: vec!["C:\\w".into()],
            placeholders: vec!["C:\\w\\.envrc".into()],
            remove_after: vec!["C:\\w\\.git\\commondir".into()],
        };
        let p = journal_path(&d, &j.profile);
        assert_eq!(read(&p).unwrap(), None);
        write(&p, &j).unwrap();
        assert_eq!(read(&p).unwrap(), Some(j.clone()));
        assert_eq!(pending(&d), std::slice::from_ref(&j.profile));
        let held = lock(&lock_path(&d, &j.profile)).unwrap();
        // A second handle cannot take it while the first holds it.
        assert!(try_lock(&lock_path(&d, &j.profile)).unwrap().is_none());
        drop(held);
        assert!(try_lock(&lock_path(&d, &j.profile)).unwrap().is_some());
        remove(&p).unwrap();
        remove(&p).unwrap();
        assert!(pending(&d).is_empty());
        std::fs::write(&p, "not json").unwrap();
        assert!(matches!(read(&p), Err(JournalError::Parse { .. })));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
