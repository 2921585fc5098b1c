//! The objects host git will read once a run's git changes are applied:
//! the run's new packs and loose objects over the repository's own (and
//! its alternates'), read as git reads them ([`super::pack_read`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::commit_walk::Source;
use super::pack_read::{Pack, hex, read_loose, type_name, unhex};

/// The layer's objects over the host's, as host git will read them once
/// the layer is applied.
pub(super) struct Store {
    /// The layer's objects directory.
    pub(super) upper: PathBuf,
    /// The host's objects directories (its own and its alternates).
    host_dirs: Vec<PathBuf>,
    host_packs: Vec<Pack>,
    /// The new packs (once checked).
    pub(super) packs: Vec<Pack>,
    oid_len: usize,
    /// In place (the run wrote the repository itself): a loose object of
    /// the host's directories changed at or after this time is the run's,
    /// not one the host had.
    loose_since: Option<SystemTime>,
}

impl Store {
    /// The layer's git directory `upper` over the host's `host`.
    pub(super) fn open(upper: &Path, host: &Path, oid_len: usize) -> std::io::Result<Store> {
        Store::open_with(upper, host, oid_len, None, &|_| true)
    }

    /// The git directory `git` a run wrote in place: the packs `old`
    /// accepts (by their index's path) and the loose objects older than
    /// `since` are the host's.
    pub(super) fn in_place(
        git: &Path,
        oid_len: usize,
        since: SystemTime,
        old: &dyn Fn(&Path) -> bool,
    ) -> std::io::Result<Store> {
        Store::open_with(git, git, oid_len, Some(since), old)
    }

    fn open_with(
        upper: &Path,
        host: &Path,
        oid_len: usize,
        loose_since: Option<SystemTime>,
        old: &dyn Fn(&Path) -> bool,
    ) -> std::io::Result<Store> {
        let objects = host.join("objects");
        let mut host_dirs = vec![objects.clone()];
        if let Ok(t) = std::fs::read_to_string(objects.join("info/alternates")) {
            for l in t
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
            {
                host_dirs.push(objects.join(l));
            }
        }
        let mut host_packs = Vec::new();
        for d in &host_dirs {
            for e in std::fs::read_dir(d.join("pack"))
                .into_iter()
                .flatten()
                .flatten()
            {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "idx") && old(&p) {
                    host_packs.push(Pack::open(&p, oid_len)?);
                }
            }
        }
        Ok(Store {
            upper: upper.join("objects"),
            host_dirs,
            host_packs,
            packs: Vec::new(),
            oid_len,
            loose_since,
        })
    }

    /// Whether the host's repository holds the object `raw`.
    pub(super) fn on_host(&self, raw: &[u8]) -> bool {
        let h = hex(raw);
        let had = |f: PathBuf| match self.loose_since {
            None => std::fs::symlink_metadata(f).is_ok(),
            Some(t) => {
                std::fs::symlink_metadata(&f).is_ok()
                    && !crate::protect::grant_walk::changed_since(&f, t)
            }
        };
        self.host_packs.iter().any(|p| p.find(raw).is_some())
            || self
                .host_dirs
                .iter()
                .any(|d| had(d.join(&h[..2]).join(&h[2..])))
    }

    /// The loose objects of the layer (hex).
    pub(super) fn upper_loose(&self) -> Vec<String> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(&self.upper)
            .into_iter()
            .flatten()
            .flatten()
        {
            let d = e.file_name().to_string_lossy().into_owned();
            if d.len() != 2 || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            for f in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                let n = f.file_name().to_string_lossy().into_owned();
                if n.len() == self.oid_len * 2 - 2 && n.bytes().all(|b| b.is_ascii_hexdigit()) {
                    v.push(format!("{d}{n}"));
                }
            }
        }
        v
    }

    /// An object (raw id) from any store, for a delta base.
    pub(super) fn read_raw(&mut self, raw: &[u8]) -> Option<(u8, Vec<u8>)> {
        let (k, b) = self.read(&hex(raw))?;
        let t = match k.as_str() {
            "commit" => 1,
            "tree" => 2,
            "blob" => 3,
            "tag" => 4,
            _ => return None,
        };
        Some((t, b))
    }
}

/// The object at `j` of `p` (bases it names by id that `p` lacks are not
/// looked for elsewhere: packs on disk are whole).
fn from_pack(p: &mut Pack, j: usize) -> Option<(String, Vec<u8>)> {
    let mut none = |_: &[u8]| None;
    let (t, b) = p.read(j, &mut none).ok()?;
    Some((type_name(t).to_string(), b.to_vec()))
}

impl Source for Store {
    fn read(&mut self, h: &str) -> Option<(String, Vec<u8>)> {
        let raw = unhex(h)?;
        for p in &mut self.packs {
            if let Some(j) = p.find(&raw) {
                return from_pack(p, j);
            }
        }
        if let Some(o) = read_loose(&self.upper, h) {
            return Some(o);
        }
        for d in &self.host_dirs {
            if let Some(o) = read_loose(d, h) {
                return Some(o);
            }
        }
        for p in &mut self.host_packs {
            if let Some(j) = p.find(&raw) {
                return from_pack(p, j);
            }
        }
        None
    }

    fn oid_len(&self) -> usize {
        self.oid_len
    }
}
