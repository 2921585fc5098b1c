//! Files a test plants in the system's directories (`/etc`, `/opt`,
//! `/usr/local`), removed again when the test ends.

use std::path::{Path, PathBuf};

/// Files and directories a test put in the system's directories: removed
/// when dropped, also when the test fails.
pub struct Planted(pub Vec<PathBuf>);

impl Planted {
    /// Writes `text` at `p` when nothing is there (a host's own file is
    /// never replaced); whether it was written.
    pub fn file(&mut self, p: &Path, text: &str) -> bool {
        if std::fs::symlink_metadata(p).is_ok() {
            return false;
        }
        let mut top = p.to_path_buf();
        while let Some(parent) = top.parent() {
            if parent.exists() {
                break;
            }
            top = parent.to_path_buf();
        }
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        if !self.0.contains(&top) {
            self.0.push(top);
        }
        true
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        for p in self.0.iter().rev() {
            let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
        }
    }
}
