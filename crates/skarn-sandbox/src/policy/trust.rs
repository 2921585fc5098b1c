//! The user's trust in policy files (`skarn trust`, in the spirit of
//! `direnv allow`).
//!
//! A configuration file that is not the user's own
//! (`~/.config/skarn/config.toml`) may come from a cloned repository or
//! have been written by the agent itself. Whatever in it would widen what a
//! sandboxed command (or a downstream server) may do applies only once the
//! user has trusted that exact content: `skarn trust FILE` records the
//! SHA-256 of its bytes together with its resolved path. Any change to the
//! file (one byte) makes it untrusted again; narrowing settings apply
//! either way (see [`crate::policy::untrusted`]).
//!
//! The record is `~/.local/state/skarn/trusted`: skarn's own state
//! directory, a secret path that no sandbox is ever granted (read or
//! write), so no confined command can add to it. One line per file:
//! `sha256-hex<TAB>path`, the path escaped as in [`crate::policy::granted`].

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Lines past which the record is not read further (a bound on a file
/// only the user writes; each `skarn trust` adds one line).
const MAX_BYTES: u64 = 4 << 20;

/// `<home>/.local/state/skarn/trusted` (never under `$XDG_STATE_HOME`,
/// which may name a directory a run can write).
pub fn store_path(home: Option<&Path>) -> Option<PathBuf> {
    Some(home?.join(".local/state/skarn/trusted"))
}

/// The hex SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The hex SHA-256 of the file at `p`, read in pieces (a program may be
/// large); `None` when it cannot be read.
pub fn digest_file(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO named as a program must not make `skarn trust` wait.
        open.custom_flags(libc::O_NONBLOCK);
    }
    let mut f = open.open(p).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The path a file is recorded under: its directory with links resolved,
/// and its own name. A link is not followed: a `skarn.toml` that is a
/// link to a trusted file elsewhere does not borrow its trust (its
/// relative paths would resolve against another directory).
pub fn identity(path: &Path) -> PathBuf {
    let p = crate::policy::config::normalize(
        &std::path::absolute(path).unwrap_or_else(|_| path.into()),
    );
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(p.clone()),
        _ => p,
    }
}

/// The trusted (digest, path) pairs.
#[derive(Debug, Default, Clone)]
pub struct TrustStore {
    entries: Vec<(String, PathBuf)>,
    /// The file it was read from.
    pub file: Option<PathBuf>,
}

impl TrustStore {
    /// The store of `home` (missing or unreadable: empty).
    pub fn for_home(home: Option<&Path>) -> TrustStore {
        store_path(home).map_or_else(TrustStore::default, |f| TrustStore::load(&f))
    }

    /// Read `file` (missing or unreadable: empty; bad lines skipped).
    pub fn load(file: &Path) -> TrustStore {
        use std::io::Read;
        let mut bytes = Vec::new();
        if let Ok(f) = std::fs::File::open(file) {
            let _ = f.take(MAX_BYTES).read_to_end(&mut bytes);
        }
        let entries = bytes
            .split(|b| *b == b'\n')
            .filter_map(|l| {
                let tab = l.iter().position(|b| *b == b'\t')?;
                let d = std::str::from_utf8(&l[..tab]).ok()?;
                let p = crate::policy::granted::unescape(&l[tab + 1..]);
                (d.len() == 64 && p.is_absolute()).then(|| (d.to_owned(), p))
            })
            .collect();
        TrustStore {
            entries,
            file: Some(file.to_path_buf()),
        }
    }

    /// Whether `text`, read from `path`, is trusted.
    pub fn trusts(&self, path: &Path, text: &[u8]) -> bool {
        let (d, p) = (digest(text), identity(path));
        self.entries.iter().any(|(ed, ep)| *ed == d && *ep == p)
    }

    /// Whether content of this `digest` (see [`digest_file`]), read from
    /// `path`, is trusted.
    pub fn trusts_digest(&self, path: &Path, digest: &str) -> bool {
        let p = identity(path);
        self.entries.iter().any(|(ed, ep)| ed == digest && *ep == p)
    }

    /// Record `text` (read from `path`) as trusted in `file`, replacing
    /// earlier digests of the same path.
    pub fn record(file: &Path, path: &Path, text: &[u8]) -> std::io::Result<()> {
        TrustStore::record_digest(file, path, digest(text))
    }

    /// [`TrustStore::record`] for a digest already made.
    pub fn record_digest(file: &Path, path: &Path, digest: String) -> std::io::Result<()> {
        let p = identity(path);
        let mut s = TrustStore::load(file);
        s.entries.retain(|(_, ep)| *ep != p);
        s.entries.push((digest, p));
        s.save(file)
    }

    /// Forget every digest of `path`; true when one was recorded.
    pub fn revoke(file: &Path, path: &Path) -> std::io::Result<bool> {
        let p = identity(path);
        let mut s = TrustStore::load(file);
        let before = s.entries.len();
        s.entries.retain(|(_, ep)| *ep != p);
        if s.entries.len() == before {
            return Ok(false);
        }
        s.save(file).map(|()| true)
    }

    /// The recorded paths.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().map(|(_, p)| p.as_path())
    }

    fn save(&self, file: &Path) -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            crate::policy::granted::create_private_dir(dir)?;
        }
        let mut text = Vec::new();
        for (d, p) in &self.entries {
            text.extend_from_slice(d.as_bytes());
            text.push(b'\t');
            text.extend(crate::policy::granted::escape(p));
            text.push(b'\n');
        }
        let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let _ = std::fs::remove_file(&tmp);
        let mut f = o.open(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_content_and_path_only() {
        let t = skarn_test_support::TempDir::new("trust");
        let store = t.path().join("state/trusted");
        let f = t.path().join("skarn.toml");
        std::fs::write(&f, "[run]\nnet = \"all\"\n").unwrap();
        let text = std::fs::read(&f).unwrap();
        assert!(!TrustStore::load(&store).trusts(&f, &text));
        TrustStore::record(&store, &f, &text).unwrap();
        let s = TrustStore::load(&store);
        assert!(s.trusts(&f, &text));
        assert!(!s.trusts(&f, b"[run]\nnet = \"all\" \n"), "one byte more");
        assert!(!s.trusts(&t.path().join("other.toml"), &text), "other path");
        #[cfg(unix)]
        {
            // A link to the trusted file elsewhere does not borrow its
            // trust; a linked directory leading to it is the same file.
            let l = t.path().join("link.toml");
            std::os::unix::fs::symlink(&f, &l).unwrap();
            assert!(!s.trusts(&l, &text));
            let d = t.path().join("dirlink");
            std::os::unix::fs::symlink(t.path(), &d).unwrap();
            assert!(s.trusts(&d.join("skarn.toml"), &text));
        }
        assert_eq!(digest_file(&f).unwrap(), digest(&text));
        assert!(s.trusts_digest(&f, &digest(&text)));
        assert!(TrustStore::revoke(&store, &f).unwrap());
        assert!(!TrustStore::load(&store).trusts(&f, &text));
        assert!(!TrustStore::revoke(&store, &f).unwrap());
    }
}
