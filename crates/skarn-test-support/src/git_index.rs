//! Git's own reading of a repository's index, for differential tests and
//! fuzz targets of `skarn_sandbox::protect::git::index_vet`.

use std::path::Path;
use std::process::Command;

/// Stage-0 entries: path, mode, object id (hex).
pub type Entries = Vec<(Vec<u8>, u32, String)>;

/// Git's stage-0 entries of the index at `.git/index` of `repo`
/// (`git ls-files -s -z`, one loading thread, no system or global
/// configuration), or `None` when git refuses it or cannot run.
pub fn git_ls_files(repo: &Path) -> Option<Entries> {
    let o = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "index.threads=1", "ls-files", "-s", "-z"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_DIR")
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let mut v = Vec::new();
    for rec in o.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let tab = rec.iter().position(|b| *b == b'\t')?;
        let head = String::from_utf8_lossy(&rec[..tab]).into_owned();
        let mut f = head.split(' ');
        let (mode, oid, stage) = (f.next()?, f.next()?, f.next()?);
        if stage == "0" {
            v.push((
                rec[tab + 1..].to_vec(),
                u32::from_str_radix(mode, 8).ok()?,
                oid.to_string(),
            ));
        }
    }
    Some(v)
}
