//! Version-control metadata directories (attack atk22l F2 for git, atk22m
//! F5 for the others): the configuration, hooks and stores host tools
//! read when they work in the project above. A workspace that is such a
//! directory, or lies in one, would let a run write `.hg/hgrc` hooks,
//! `.jj/repo/config.toml` programs or `.git/config` as if they were the
//! work tree's files, where no rule of a work tree looks.

use std::path::{Path, PathBuf};

/// The metadata directories of version-control systems, by name, with the
/// system's name. Each runs what its configuration names (hooks, pagers,
/// fix tools, merge tools, post-hooks) when the host's tool works in the
/// directory above.
pub(crate) const METADATA_DIRS: &[(&str, &str)] = &[
    (".git", "git"),
    (".hg", "Mercurial"),
    (".jj", "Jujutsu"),
    (".sl", "Sapling"),
    (".svn", "Subversion"),
    (".bzr", "Bazaar"),
    ("_darcs", "Darcs"),
    (".pijul", "Pijul"),
];

/// A metadata directory `ws` is or lies in: the directory and the name of
/// its system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetadataDir {
    /// The metadata directory (a prefix of `ws`, or `ws` itself).
    pub dir: PathBuf,
    /// The system (`git`, `Mercurial`, ...).
    pub system: &'static str,
}

/// The outermost metadata directory `ws` (canonical) is or lies in: a
/// component named like one of [`METADATA_DIRS`] (the last one too), or,
/// for git, a directory git takes for a bare repository or a separate git
/// directory (`HEAD`, `objects` and `refs`) at `ws` or above it.
pub(crate) fn holding(ws: &Path) -> Option<MetadataDir> {
    let mut acc = PathBuf::new();
    for c in ws.components() {
        acc.push(c);
        if let Some((_, system)) = METADATA_DIRS.iter().find(|(n, _)| c.as_os_str() == *n) {
            return Some(MetadataDir { dir: acc, system });
        }
    }
    git_by_content(ws).map(|dir| MetadataDir { dir, system: "git" })
}

/// `ws` or the nearest ancestor git takes for a git directory by what it
/// holds (a bare repository, `git --separate-git-dir`).
fn git_by_content(ws: &Path) -> Option<PathBuf> {
    ws.ancestors().find_map(|a| {
        let bare = ["HEAD", "objects", "refs"]
            .iter()
            .all(|n| std::fs::symlink_metadata(a.join(n)).is_ok());
        bare.then(|| a.to_path_buf())
    })
}

/// Whether `dir` holds a work tree's metadata directory of a system whose
/// root the default workspace climbs to (`--workspace-root repo`): git's
/// `.git` (any kind), Mercurial's, Jujutsu's and Sapling's directories.
pub(crate) fn is_repository_top(dir: &Path) -> bool {
    if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
        return true;
    }
    [".hg", ".jj", ".sl"]
        .iter()
        .any(|n| std::fs::symlink_metadata(dir.join(n)).is_ok_and(|m| m.is_dir()))
}
