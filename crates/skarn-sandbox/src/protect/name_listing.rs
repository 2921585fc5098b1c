//! Which protected names of a workspace exist at all, from the listings
//! of their directories (issue 30): [`super::linked_targets::of`] asked
//! every persistence name (about 370) with `lstat` and `stat` each,
//! though almost all are missing. One listing of each directory on the
//! way (read now, never kept across runs) answers "missing, no link on
//! the way" and "there, no link on the way" exactly, the entry's type
//! coming with the listing; only a name with a link (or an unknown type)
//! on the way is resolved as before. A directory with more than
//! [`MAX_LISTED`] entries, or one that cannot be listed, is not listed:
//! its names are asked one by one as before.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Entries of one directory listed at most.
const MAX_LISTED: usize = 4096;

/// What a name below the top is, as far as the listings tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// It or a directory on the way is missing (or a file stands where a
    /// directory is needed), and no link is on the way.
    Missing,
    /// A real directory, no link on the way.
    Dir,
    /// Anything else that exists, no link on the way.
    Other,
    /// A link on the way or at the end, or the listings cannot tell:
    /// resolve it.
    Ask,
}

/// Entry kinds of a listed directory (`None`: not listed).
type Listing = Option<HashMap<OsString, Look>>;

/// Listings of the directories below one top (a canonical path).
pub struct Names {
    top: PathBuf,
    lists: HashMap<PathBuf, Listing>,
}

impl Names {
    pub fn new(top: &Path) -> Names {
        Names {
            top: top.to_path_buf(),
            lists: HashMap::new(),
        }
    }

    /// What `rel` (relative to the top, plain names only) is.
    pub fn look(&mut self, rel: &Path) -> Look {
        let mut dir = self.top.clone();
        let parts: Vec<&std::ffi::OsStr> = match rel
            .components()
            .map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
        {
            Some(p) if !p.is_empty() => p,
            _ => return Look::Ask,
        };
        for (i, name) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            let kind = match self.list(&dir) {
                None => return Look::Ask,
                Some(l) => l.get(*name).copied().unwrap_or(Look::Missing),
            };
            match kind {
                Look::Missing => return Look::Missing,
                Look::Ask => return Look::Ask,
                Look::Dir if !last => dir.push(name),
                Look::Other if !last => return Look::Missing,
                k => return k,
            }
        }
        Look::Ask
    }

    fn list(&mut self, dir: &Path) -> Option<&HashMap<OsString, Look>> {
        if !self.lists.contains_key(dir) {
            let l = read(dir);
            self.lists.insert(dir.to_path_buf(), l);
        }
        self.lists.get(dir)?.as_ref()
    }
}

/// The entries of `dir` with their kinds (a link, or a type the listing
/// does not give, is [`Look::Ask`]).
fn read(dir: &Path) -> Listing {
    let mut out = HashMap::new();
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        if out.len() >= MAX_LISTED {
            return None;
        }
        let k = match e.file_type() {
            Ok(t) if t.is_symlink() => Look::Ask,
            Ok(t) if t.is_dir() => Look::Dir,
            Ok(_) => Look::Other,
            Err(_) => Look::Ask,
        };
        out.insert(e.file_name(), k);
    }
    Some(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn listings_tell_what_lstat_tells_and_links_are_asked() {
        let t = skarn_test_support::TempDir::new("name-listing");
        let p = t.dir("p");
        t.dir("p/.git/hooks");
        t.file("p/.envrc", "x\n");
        t.dir("p/real");
        std::os::unix::fs::symlink("real", p.join(".vscode")).unwrap();
        std::os::unix::fs::symlink("nowhere", p.join(".npmrc")).unwrap();
        let top = std::fs::canonicalize(&p).unwrap();
        let mut n = Names::new(&top);
        assert_eq!(n.look(Path::new(".git/hooks")), Look::Dir);
        assert_eq!(n.look(Path::new(".git/hooks/pre-commit")), Look::Missing);
        assert_eq!(n.look(Path::new(".envrc")), Look::Other);
        assert_eq!(n.look(Path::new(".envrc/x")), Look::Missing);
        assert_eq!(n.look(Path::new(".vscode/settings.json")), Look::Ask);
        assert_eq!(n.look(Path::new(".npmrc")), Look::Ask);
        assert_eq!(n.look(Path::new(".cargo/config.toml")), Look::Missing);
        assert_eq!(n.look(Path::new("../x")), Look::Ask);
    }
}
