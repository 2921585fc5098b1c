//! Which state directory (its HOME) a sandboxed server gets, and clearing
//! what killed runs leave in it.
//!
//! A server's state is keyed by what the server is: the configuration file
//! that declares it, its alias and its command. Two projects that both
//! declare `[servers.notes]` get two directories, so project B's server
//! never reads the token project A's stored (and a server never gets
//! another's directory by choosing the same alias). The directory is
//! `<alias>-<16 hex digits of SHA-256(file, alias, command)>` under
//! `skarn-servers`; the alias keeps it recognisable.
//!
//! A run's helper removes its placeholders and moves a repository staged
//! under `.git/.skarn-stage-<pid>` into place when it ends; when the
//! helper is killed with the gateway, nothing does. So before a server
//! starts and when the gateway shuts down, [`sweep`] clears them, under an
//! exclusive lock on the directory that no live run holds (runs hold it
//! shared).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// The state directory's name for this server.
pub fn dir_name(config_file: Option<&Path>, alias: &str, command: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        config_file.map_or(&b""[..], |p| p.as_os_str().as_encoded_bytes()),
        alias.as_bytes(),
        command.as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let digest = h.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let shown: String = alias
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("{shown}-{hex}")
}

/// State directories this gateway used (swept again at shutdown).
static USED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Note `dir` for [`sweep_used`].
pub fn note_used(dir: &Path) {
    let mut used = USED.lock().unwrap_or_else(|e| e.into_inner());
    if !used.iter().any(|d| d == dir) {
        used.push(dir.to_path_buf());
    }
}

/// [`sweep`] every state directory this gateway used.
pub fn sweep_used() {
    let used = USED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for d in used {
        sweep(&d);
    }
}

/// Most entries looked at per sweep, and how deep.
#[cfg(target_os = "linux")]
const MAX_ENTRIES: usize = 20_000;
#[cfg(target_os = "linux")]
const MAX_DEPTH: usize = 8;

/// Remove the placeholders and stages killed runs left in `dir`, if no run
/// uses it now; what a stage holds is vetted and moved into `.git` as the
/// helper would have.
#[cfg(target_os = "linux")]
pub fn sweep(dir: &Path) {
    use std::os::fd::AsRawFd;
    let Ok(f) = std::fs::File::open(dir) else {
        return;
    };
    // SAFETY: `f` is an open descriptor we own; a non-blocking attempt.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return; // a run is using it; it cleans up after itself
    }
    let mut budget = MAX_ENTRIES;
    remove_placeholders(dir, 0, &mut budget);
    let git = dir.join(".git");
    // Only a real directory: the server may have made `.git` a link.
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return;
    }
    if let Ok(rd) = std::fs::read_dir(&git) {
        for e in rd.flatten() {
            let name = e.file_name();
            // Under the exclusive lock no run is live: every stage is a
            // killed run's (its pid may still be a zombie).
            let stage = name
                .to_str()
                .is_some_and(|n| n.starts_with(skarn_sandbox::linux::staging::STAGE_PREFIX));
            if stage
                && e.file_type().is_ok_and(|t| t.is_dir())
                && let Some(msg) = skarn_sandbox::linux::staging::finalize(dir, &e.path(), true)
            {
                tracing::info!("{msg}");
            }
        }
    }
    if std::fs::read_dir(&git).is_ok_and(|mut r| r.next().is_none()) {
        let _ = std::fs::remove_dir(&git);
    }
    drop(f); // releases the lock
}

/// No placeholders off Linux.
#[cfg(not(target_os = "linux"))]
pub fn sweep(_dir: &Path) {}

#[cfg(target_os = "linux")]
fn remove_placeholders(dir: &Path, depth: usize, budget: &mut usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = e.path();
        if skarn_sandbox::protect::placeholder::is_placeholder(&path).is_some() {
            let _ = std::fs::remove_file(&path);
        } else if depth < MAX_DEPTH && e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_placeholders(&path, depth + 1, budget);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::dir_name;
    use std::path::Path;

    #[test]
    fn the_name_depends_on_file_alias_and_command() {
        let a = dir_name(Some(Path::new("/p/a/skarn.toml")), "notes", "notes-mcp");
        let b = dir_name(Some(Path::new("/p/b/skarn.toml")), "notes", "notes-mcp");
        let c = dir_name(Some(Path::new("/p/a/skarn.toml")), "notes", "other");
        let d = dir_name(Some(Path::new("/p/a/skarn.toml")), "note", "snotes-mcp");
        assert!(a.starts_with("notes-"), "{a}");
        assert_eq!(a.len(), "notes-".len() + 16);
        assert!(a != b && a != c && a != d && b != c);
        assert_eq!(
            a,
            dir_name(Some(Path::new("/p/a/skarn.toml")), "notes", "notes-mcp")
        );
        assert!(dir_name(None, "../x", "c").starts_with("___x-"));
    }
}
