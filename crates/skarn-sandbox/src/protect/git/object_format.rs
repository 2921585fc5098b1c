//! The object format (hash) of a repository, as git reads it: the last
//! `extensions.objectFormat` of the repository's own configuration (in
//! its common directory), SHA-1 when absent. The index, packs and loose
//! objects are read with this length: guessing it from the file (trying
//! SHA-1, then SHA-256) let a file parse one way here and another way in
//! git.

use std::path::{Path, PathBuf};

/// Bytes of an object id under SHA-1.
pub const SHA1_LEN: usize = 20;
/// Bytes of an object id under SHA-256.
pub const SHA256_LEN: usize = 32;

/// The directory holding the repository's `config`: `git` itself, or
/// what its `commondir` file names (a linked worktree's git directory).
fn common_dir(git: &Path) -> PathBuf {
    match crate::protect::small_file::read_bytes(&git.join("commondir")) {
        Ok(Some(b)) => {
            let named = super::git_vet::commondir_target(&b);
            if named.is_absolute() {
                named.to_path_buf()
            } else {
                git.join(named)
            }
        }
        _ => git.to_path_buf(),
    }
}

/// The length of an object id of the repository whose git directory is
/// `git`: [`SHA256_LEN`] when its configuration says `sha256`, else
/// [`SHA1_LEN`] (git's default; an unreadable configuration is git's
/// failure to start, not another format).
pub fn oid_len(git: &Path) -> usize {
    let Ok(Some(text)) = super::gitconfig::read_file(&common_dir(git).join("config")) else {
        return SHA1_LEN;
    };
    let format = super::gitconfig::parse(&text)
        .items
        .into_iter()
        .filter(|i| i.section == "extensions" && i.sub.is_none() && i.name == "objectformat")
        .filter_map(|i| i.value)
        .next_back();
    match format {
        Some(v) if v.eq_ignore_ascii_case("sha256") => SHA256_LEN,
        _ => SHA1_LEN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_object_format_of_the_common_config_counts() {
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("repo.git");
        std::fs::create_dir_all(g.join("worktrees/w")).unwrap();
        assert_eq!(oid_len(&g), SHA1_LEN);
        std::fs::write(
            g.join("config"),
            "[extensions]\n\tobjectFormat = sha1\n# objectformat=sha256\n[extensions]\nobjectformat = SHA256\n",
        )
        .unwrap();
        assert_eq!(oid_len(&g), SHA256_LEN);
        std::fs::write(g.join("worktrees/w/commondir"), "../..\n").unwrap();
        assert_eq!(oid_len(&g.join("worktrees/w")), SHA256_LEN);
        std::fs::write(
            g.join("config"),
            "[core]\n\tobjectformat = sha256\n; extensions.objectformat=sha256\n",
        )
        .unwrap();
        assert_eq!(oid_len(&g), SHA1_LEN);
    }
}
