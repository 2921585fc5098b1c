//! One temporary-directory helper with cleanup on drop.

use std::path::{Path, PathBuf};

/// A fresh directory named `skarn-test-<tag>-<random>` under the system
/// temp dir (`TMPDIR`) or a parent of the test's choosing, mode 0755 so that a sandboxed or unprivileged
/// process can use it too; removed with its contents on drop.
#[derive(Debug)]
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    /// A new, empty directory; `tag` says which test made it.
    pub fn new(tag: &str) -> TempDir {
        TempDir::new_in(std::env::temp_dir(), tag)
    }

    /// A new, empty directory inside `parent` instead of the system temp
    /// dir (a test that needs files under `/etc` or `/opt`, say), named,
    /// made and removed the same way.
    pub fn new_in(parent: impl AsRef<Path>, tag: &str) -> TempDir {
        let parent = parent.as_ref();
        let prefix = format!("skarn-test-{tag}-");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o755));
        }
        let dir = b.tempdir_in(parent).unwrap_or_else(|e| {
            panic!(
                "cannot create a temporary directory in {}: {e}",
                parent.display()
            )
        });
        TempDir(dir)
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// `rel` inside the directory (nothing is created).
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.0.path().join(rel)
    }

    /// `rel` inside the directory as a string, for command lines and
    /// configuration text.
    pub fn s(&self, rel: impl AsRef<Path>) -> String {
        self.join(rel).display().to_string()
    }

    /// The directory `rel` inside this one, created with its parents.
    pub fn dir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let p = self.join(rel);
        std::fs::create_dir_all(&p)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
        p
    }

    /// The file `rel` inside this one, written with `contents` (parents
    /// created).
    pub fn file(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&p, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
        p
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

#[cfg(test)]
mod tests {
    use super::TempDir;

    #[test]
    fn made_readable_and_removed_on_drop() {
        let t = TempDir::new("self");
        let root = t.path().to_path_buf();
        let f = t.file("a/b.txt", "x");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
        assert!(t.dir("c/d").is_dir());
        let name = root.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("skarn-test-self-"), "{name}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&root).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        drop(t);
        assert!(!root.exists(), "{} was left behind", root.display());
    }

    #[test]
    fn made_in_the_given_parent() {
        let outer = TempDir::new("outer");
        let inner = TempDir::new_in(outer.path(), "inner");
        assert_eq!(inner.path().parent(), Some(outer.path()));
        let name = inner
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("skarn-test-inner-"), "{name}");
        let root = inner.path().to_path_buf();
        drop(inner);
        assert!(!root.exists(), "{} was left behind", root.display());
    }

    #[test]
    fn two_directories_never_collide() {
        let (a, b) = (TempDir::new("same"), TempDir::new("same"));
        assert_ne!(a.path(), b.path());
    }
}
