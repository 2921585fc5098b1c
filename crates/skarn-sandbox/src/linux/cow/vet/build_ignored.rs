//! Whether git might ignore a file the run left in a repository (for
//! [`super::build_outputs`]): the ignore files git reads for it — every
//! `.gitignore` from the repository's top down to the file's directory,
//! the repository's `info/exclude` and the user's global ignore file
//! (`$XDG_CONFIG_HOME/git/ignore`, `~/.config/git/ignore`) — matched the
//! cautious way ([`crate::protect::ignore_match`]: more paths taken as
//! ignored than git does, never fewer). An ignore file that cannot be
//! read counts as ignoring everything (the file is dated: one more
//! rebuild).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Whether a pattern might ignore `rel` (relative to the work tree
/// `top`, whose git directory is `git`).
pub(super) fn might_be_ignored(top: &Path, git: &Path, rel: &Path) -> bool {
    let names: Vec<&[u8]> = rel.iter().map(|c| c.as_bytes()).collect();
    let Some((_, dirs)) = names.split_last() else {
        return false;
    };
    let matches = |p: &Path, base: &[&[u8]]| match crate::protect::small_file::read_bytes(p) {
        Ok(None) => false,
        Ok(Some(text)) => crate::protect::ignore_match::might_ignore(&text, base, &names),
        Err(_) => true,
    };
    for k in 0..=dirs.len() {
        let mut d = top.to_path_buf();
        d.extend(rel.iter().take(k));
        if matches(&d.join(".gitignore"), &names[..k]) {
            return true;
        }
    }
    let global: Vec<PathBuf> = [
        std::env::var_os("XDG_CONFIG_HOME").map(|x| PathBuf::from(x).join("git/ignore")),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/git/ignore")),
    ]
    .into_iter()
    .flatten()
    .filter(|p| p.is_absolute())
    .collect();
    std::iter::once(git.join("info/exclude"))
        .chain(global)
        .any(|p| matches(&p, &[]))
}
