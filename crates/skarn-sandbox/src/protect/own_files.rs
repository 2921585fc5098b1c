//! The placeholder copies skarn writes into a gateway server's state
//! directory at every start (`FsOp::StateFile`, ADR 0252: `.npmrc`,
//! `.netrc`, git's stored credentials holding a granted secret's
//! placeholder), listed with the digest of their text in the checks after
//! the run (`AfterRun::own_files`). Before those checks (after the run,
//! or at the catch-up of a killed one), each copy that still holds exactly
//! the text skarn wrote is removed: it is skarn's own file, written again
//! at the next start, and the checks would otherwise set it aside as one
//! the run made (a `.npmrc` is read by host tools in any directory), one
//! more `.npmrc.skarn-quarantine-<hex>` per start (atk27k F6). A copy the
//! server changed, replaced, linked or gave another name is left to the
//! checks.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::Digest;

/// The digest recorded for a text skarn writes (SHA-256, hex).
pub fn digest(text: &str) -> String {
    hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// Remove each of `files` (path, [`digest`] of skarn's text) that still
/// holds that text. Called once no sandboxed process is left.
pub fn drop_unchanged(files: &[(PathBuf, String)]) {
    for (path, sum) in files {
        if unchanged(path, sum) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Most bytes of a copy read (dotfiles are small).
const MAX: u64 = 1 << 20;

/// Whether `path` is a plain file (one name, no link on the way: its
/// directory is its own real path) whose text has digest `sum`.
fn unchanged(path: &Path, sum: &str) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    if std::fs::canonicalize(dir).ok().as_deref() != Some(dir) {
        return false;
    }
    let Ok(md) = std::fs::symlink_metadata(path) else {
        return false;
    };
    md.is_file()
        && md.nlink() == 1
        && md.len() <= MAX
        && std::fs::read(path).is_ok_and(|b| hex(&sha2::Sha256::digest(&b)) == sum)
}

/// Lower-case hex of `b`.
fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only an unchanged plain copy is removed: a changed one, one
    /// replaced by a link and one with another name stay for the checks.
    #[test]
    fn only_skarns_own_unchanged_copies_are_removed() {
        let t = skarn_test_support::TempDir::new("own_files");
        let d = std::fs::canonicalize(t.path()).unwrap();
        let own = |n: &str| (d.join(n), digest(&format!("token={n}\n")));
        std::fs::write(d.join("same"), "token=same\n").unwrap();
        std::fs::write(d.join("changed"), "token=changed\nscript-shell=/x\n").unwrap();
        std::fs::write(d.join("target"), "token=linked\n").unwrap();
        std::os::unix::fs::symlink(d.join("target"), d.join("linked")).unwrap();
        std::fs::write(d.join("twice"), "token=twice\n").unwrap();
        std::fs::hard_link(d.join("twice"), d.join("other-name")).unwrap();
        drop_unchanged(&[own("same"), own("changed"), own("linked"), own("twice")]);
        assert!(!d.join("same").exists());
        for n in ["changed", "linked", "target", "twice", "other-name"] {
            assert!(std::fs::symlink_metadata(d.join(n)).is_ok(), "{n} removed");
        }
    }
}
