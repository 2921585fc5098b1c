//! The recall store: full raw output behind every compressed text.
//!
//! Entries live in the user's state directory (`$XDG_STATE_HOME/skarn/recall`
//! or `~/.local/state/skarn/recall`), never inside the workspace, in a
//! directory only the user can enter (0700), as files only the user can read
//! (0600) created with `O_EXCL` (a planted symlink makes saving fail rather
//! than write elsewhere). Each entry is capped in size (head and tail kept,
//! the middle replaced by one marker line), and every save prunes entries
//! older than the maximum age and the oldest ones beyond the total cap.

use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::StoreError;
use crate::private_fs::{self, CheckError};

/// Default age after which saved output is pruned.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Default cap on one saved output.
pub const DEFAULT_MAX_ENTRY_BYTES: u64 = 16 * 1024 * 1024;
/// Default cap on the whole store.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// Where and how much to keep.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub dir: PathBuf,
    pub max_age: Duration,
    pub max_entry_bytes: u64,
    pub max_total_bytes: u64,
}

impl StoreConfig {
    /// Defaults in the user's state directory.
    pub fn with_dir(dir: PathBuf) -> Self {
        Self {
            dir,
            max_age: DEFAULT_MAX_AGE,
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
        }
    }

    /// `$XDG_STATE_HOME/skarn/recall`, else `$HOME/.local/state/skarn/recall`;
    /// on Windows `%LOCALAPPDATA%\skarn\recall`.
    pub fn default_dir() -> Result<PathBuf, StoreError> {
        if cfg!(windows) {
            return match std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
                Some(d) => Ok(PathBuf::from(d).join("skarn").join("recall")),
                None => Err(StoreError::NoStateDir),
            };
        }
        if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            let p = PathBuf::from(x);
            if p.is_absolute() {
                return Ok(p.join("skarn").join("recall"));
            }
        }
        // Never under a HOME that does not exist: the store would create it.
        match std::env::var_os("HOME").filter(|v| !v.is_empty() && Path::new(v).is_dir()) {
            Some(h) => Ok(PathBuf::from(h).join(".local/state/skarn/recall")),
            None => Err(StoreError::NoStateDir),
        }
    }
}

/// An opened, checked store directory.
#[derive(Debug, Clone)]
pub struct Store {
    cfg: StoreConfig,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Is `id` a well-formed recall id (12 lowercase hex digits)?
pub fn valid_id(id: &str) -> bool {
    id.len() == 12
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Store {
    /// Create (0700) and check the directory. `workspace` is the directory
    /// the command ran in: the store may not live inside it (unless it is
    /// the home directory itself, where the default state dir lives).
    pub fn open(cfg: StoreConfig, workspace: Option<&Path>) -> Result<Self, StoreError> {
        let dir = &cfg.dir;
        if !dir.is_absolute() {
            return Err(StoreError::Unsafe {
                path: dir.clone(),
                why: "not an absolute path".into(),
            });
        }
        private_fs::create_dir(dir).map_err(io(dir))?;
        let meta = fs::symlink_metadata(dir).map_err(io(dir))?;
        if !meta.is_dir() {
            return Err(StoreError::Unsafe {
                path: dir.clone(),
                why: "not a directory (a symlink?)".into(),
            });
        }
        match private_fs::check_dir(dir, &meta) {
            Ok(()) => {}
            Err(CheckError::NotOwned(why)) => {
                return Err(StoreError::Unsafe {
                    path: dir.clone(),
                    why,
                });
            }
            Err(CheckError::Io(e)) => return Err(io(dir)(e)),
        }
        if let Some(ws) = workspace {
            let real_dir = fs::canonicalize(dir).map_err(io(dir))?;
            if let Ok(real_ws) = fs::canonicalize(ws) {
                let home = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .and_then(|h| fs::canonicalize(h).ok());
                let ws_is_home = home.as_deref() == Some(real_ws.as_path());
                let ws_is_root = real_ws.parent().is_none();
                if real_dir.starts_with(&real_ws) && !ws_is_home && !ws_is_root {
                    return Err(StoreError::InsideWorkspace(real_dir));
                }
            }
        }
        Ok(Self { cfg })
    }

    /// The directory entries are kept in.
    pub fn dir(&self) -> &Path {
        &self.cfg.dir
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.cfg.dir.join(format!("{id}.log"))
    }

    /// Save raw output; returns its id. Prunes old entries first.
    pub fn save(&self, raw: &[u8]) -> Result<String, StoreError> {
        let _ = self.prune();
        let capped = cap(raw, self.cfg.max_entry_bytes);
        for _ in 0..8 {
            let id = new_id(raw.len());
            let path = self.path_of(&id);
            match private_fs::new_file_options().open(&path) {
                Ok(mut f) => {
                    f.write_all(&capped).map_err(io(&path))?;
                    return Ok(id);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(&path)(e)),
            }
        }
        Err(StoreError::Io {
            path: self.cfg.dir.clone(),
            source: std::io::Error::other("could not pick a fresh id"),
        })
    }

    /// The saved raw output of `id`.
    pub fn load(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::BadId(id.to_string()));
        }
        let path = self.path_of(id);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(id.to_string()));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        if !meta.is_file() {
            return Err(StoreError::Unsafe {
                path,
                why: "not a regular file".into(),
            });
        }
        fs::read(&path).map_err(io(&path))
    }

    /// Remove entries older than the maximum age, then the oldest entries
    /// until the store fits its total cap. Returns how many were removed.
    pub fn prune(&self) -> Result<usize, StoreError> {
        let dir = &self.cfg.dir;
        let now = SystemTime::now();
        let mut entries = Vec::new();
        for e in fs::read_dir(dir).map_err(io(dir))? {
            let Ok(e) = e else { continue };
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(id) = name.strip_suffix(".log") else {
                continue;
            };
            if !valid_id(id) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let mtime = meta.modified().unwrap_or(now);
            entries.push((mtime, meta.len(), e.path()));
        }
        let mut removed = 0;
        entries.sort();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        for (mtime, len, path) in entries {
            let old = now.duration_since(mtime).unwrap_or_default() > self.cfg.max_age;
            if old || total > self.cfg.max_total_bytes {
                if fs::remove_file(&path).is_ok() {
                    removed += 1;
                }
                total = total.saturating_sub(len);
            }
        }
        Ok(removed)
    }
}

/// Keep head and tail of an over-long output, one marker line between.
fn cap(raw: &[u8], max: u64) -> Vec<u8> {
    let max = usize::try_from(max).unwrap_or(usize::MAX).max(1024);
    if raw.len() <= max {
        return raw.to_vec();
    }
    let half = max / 2;
    let mut v = Vec::with_capacity(max + 128);
    v.extend_from_slice(&raw[..half]);
    let cut = raw.len() - 2 * half;
    v.extend_from_slice(
        format!("\n[skarn: {cut} bytes omitted here: output larger than the recall cap]\n")
            .as_bytes(),
    );
    v.extend_from_slice(&raw[raw.len() - half..]);
    v
}

fn new_id(salt: usize) -> String {
    // RandomState is seeded from the OS per process; mixing in time, pid
    // and a counter makes ids unique across processes and calls.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(salt);
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    if let Ok(d) = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_validated() {
        assert!(valid_id("0123456789ab"));
        for bad in [
            "",
            "../../etc/pa",
            "0123456789AB",
            "0123456789abc",
            "0123456789a/",
        ] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert!(valid_id(&new_id(3)));
    }

    #[test]
    fn cap_keeps_head_and_tail() {
        let raw: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let c = cap(&raw, 2048);
        assert!(c.starts_with(&raw[..1024]));
        assert!(c.ends_with(&raw[raw.len() - 1024..]));
        assert!(String::from_utf8_lossy(&c).contains("7952 bytes omitted"));
        assert_eq!(cap(b"short", 2048), b"short");
    }
}
