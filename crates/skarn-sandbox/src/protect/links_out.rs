//! Links out of the writable grants that a run leaves behind (attack
//! atk22g F8). A run makes `target/debug` a link to `~/.local/bin`; the
//! host's next plain `cargo build` (which runs nothing of the project)
//! writes the crate's binary, named `git`, through it, and the host's
//! next `git` runs it. Any tool with a fixed output directory (`dist/`,
//! `build/`, `.next/`, a venv's `bin`) writes the same way. The rule, for
//! a symbolic link the run made in a writable grant: when it leads to an
//! existing DIRECTORY outside the grants that the host user can write,
//! it is set aside after the run (direct layer) or refused when the layer
//! is applied (copy-on-write layer). So is a link to a FILE the user can
//! write outside the grants (`package-lock.json -> ~/.bashrc`: host npm
//! rewrites it; atk22h F26). Links to the system's files
//! (`.venv/bin/python -> /usr/bin/python3`) and to what the user cannot
//! write stay: a host writer cannot write there through them. The same
//! walk sets aside the FIFOs the run made (host readers would hang).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Directories walked at most after the run.
pub const MAX_DIRS: usize = 1_000_000;
/// Time the walk after the run may take at most.
pub const MAX_TIME: Duration = Duration::from_secs(60);

/// Where the link `link` leads when that is a directory outside every
/// root of `roots` which this process may write; `None` otherwise.
pub fn leads_out(link: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    let target = std::fs::canonicalize(link).ok()?;
    if roots.iter().any(|r| target.starts_with(r)) {
        return None;
    }
    let m = std::fs::metadata(&target).ok()?;
    // A FILE too: most writers open an existing name with O_TRUNC and
    // follow the link (npm's lockfile, `>`, `cp`, editors: attack atk22h
    // F26). The system's programs and libraries (`.venv/bin/python ->
    // /usr/bin/python3`) stay even for root, who can write them: host
    // tools replace files there only through their own package manager.
    // Programs are left too (a venv's `python3 -> ~/.pyenv/versions/
    // 3.11/bin/python3`, a uv-managed interpreter): host writers that
    // truncate a name write data files, not programs.
    use std::os::unix::fs::PermissionsExt;
    let program = m.permissions().mode() & 0o111 != 0;
    let file_out = m.is_file() && !program && !system_file(&target);
    if !m.is_dir() && !file_out {
        return None;
    }
    writable(&target).then_some(target)
}

/// Whether `p` lies where the system keeps programs and libraries (the
/// system directories every run may read and run, but `/etc`, whose files
/// are data; and `/snap`).
fn system_file(p: &Path) -> bool {
    crate::policy::SYSTEM_EXEC_DIRS
        .iter()
        .filter(|d| **d != "/etc")
        .chain(&["/snap"])
        .any(|s| p.starts_with(s))
}

fn writable(d: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(d.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path; access(2) only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Walk `roots` (every directory, build and dependency trees included;
/// links not followed) for links made since `since` that lead out
/// ([`leads_out`]), set each aside, and say so; past the bounds, say the
/// check is incomplete.
pub fn set_aside(roots: &[PathBuf], since: SystemTime) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    let start = Instant::now();
    // To the nanosecond: both times come from the file system's clock
    // (`since` is a fresh file's change time), so a link made before the
    // run, even in the same second, is older; only one of the same clock
    // tick counts as the run's (the run may have made it).
    let since_s = since
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| (d.as_secs() as i64, i64::from(d.subsec_nanos())))
        .unwrap_or((0, 0));
    let mut todo: Vec<PathBuf> = roots.to_vec();
    let mut dirs = 0usize;
    while let Some(d) = todo.pop() {
        dirs += 1;
        if dirs > MAX_DIRS || start.elapsed() > MAX_TIME {
            found.push(format!(
                "the check for links out of the writable grants stopped after {} directories: \
                 links made by the run below them were not checked",
                dirs - 1
            ));
            break;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                todo.push(p);
                continue;
            }
            if std::os::unix::fs::FileTypeExt::is_fifo(&ft) {
                found.extend(fifo_made(&p, since_s));
                continue;
            }
            if !ft.is_symlink() {
                continue;
            }
            // A link's change time is when it was made (links are never
            // modified in place); the run cannot set it back.
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if (m.ctime(), m.ctime_nsec()) < since_s {
                continue;
            }
            let Some(target) = leads_out(&p, roots) else {
                continue;
            };
            let aside = crate::protect::set_aside::set_aside(&p, "skarn-link-out");
            found.push(format!(
                "{} is a link the run made to {} outside the writable grants (host tools would \
                 write through it): {}",
                p.display(),
                target.display(),
                aside.describe("check where it points before renaming it back")
            ));
        }
    }
    found
}

/// A FIFO the run made (changed since `since_s`) is set aside: a host
/// program opening its name to read (an agent's file tool, an editor,
/// `npm install` reading a lockfile) would hang. The copy-on-write layer
/// refuses them (attack atk22h F37); this is the direct mode's and the
/// other grants' check.
fn fifo_made(p: &Path, since_s: (i64, i64)) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).ok()?;
    if (m.ctime(), m.ctime_nsec()) < since_s {
        return None;
    }
    let aside = crate::protect::set_aside::set_aside(p, "skarn-fifo");
    Some(format!(
        "{} is a FIFO the run made (host programs opening it would hang): {}",
        p.display(),
        aside.describe("remove it unless you made it")
    ))
}

/// The copy-on-write check of one new link `upper` (in the layer) at
/// `abs` (its place in the workspace `ws`): `Err` when it leads to a
/// writable directory outside the workspace.
pub fn check_layer_link(ws: &Path, abs: &Path, upper: &Path) -> Result<(), String> {
    let Ok(t) = std::fs::read_link(upper) else {
        return Ok(());
    };
    check_link_text(ws, abs, &t)
}

/// [`check_layer_link`] for the link text `t` of a link that would be
/// made at `abs`: one a commit or the index stages (host `git checkout`
/// makes it; attack atk22h F21).
pub fn check_link_text(ws: &Path, abs: &Path, t: &Path) -> Result<(), String> {
    // `dir/..` is resolved by the kernel after `dir`, which may be a link
    // (this layer's or the host's): the lexical place says nothing of
    // where it leads (attack atk22h F10).
    if climbs_after_a_name(t) {
        return Err(format!(
            "a link whose target `{}` climbs back out of a directory it names (the kernel \
             follows that directory first, which may itself be a link)",
            t.display()
        ));
    }
    let base = abs.parent().unwrap_or(ws);
    let lexical = crate::policy::config::normalize(&base.join(t));
    // As the kernel resolves it on the host: links already there on the
    // way (`shared -> ../shared`, then `out -> shared/bin`) are followed.
    let real = crate::policy::canonical::canonical_lossy(&lexical).unwrap_or(lexical.clone());
    if lexical.starts_with(ws) && real.starts_with(ws) {
        // Inside (links through other new links are resolved when the
        // layer's entries reach the workspace one by one).
        return Ok(());
    }
    match leads_out(&real, &[ws.to_path_buf()]) {
        Some(target) => Err(format!(
            "a link to {} outside the workspace (host tools would write through it)",
            target.display()
        )),
        None => Ok(()),
    }
}

/// Whether the link text `t` has a `..` after a named component.
fn climbs_after_a_name(t: &Path) -> bool {
    use std::path::Component;
    let mut named = false;
    for c in t.components() {
        match c {
            Component::Normal(_) => named = true,
            Component::ParentDir if named => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_climb_after_a_name_is_told_from_leading_climbs() {
        assert!(climbs_after_a_name(Path::new("up/../u/.local/bin")));
        assert!(climbs_after_a_name(Path::new("/a/b/../c")));
        assert!(!climbs_after_a_name(Path::new("../../lib/x")));
        assert!(!climbs_after_a_name(Path::new("./a/b")));
        assert!(!climbs_after_a_name(Path::new("/usr/bin/python3")));
    }

    /// A link made before the run started, in the same second, is the
    /// user's (the check compared whole seconds and set aside a
    /// workspace's own `.git` link made just before a fast run); one made
    /// after is the run's.
    #[test]
    fn a_link_older_than_the_run_in_the_same_second_is_left() {
        let t = skarn_test_support::TempDir::new("links_out_same_second");
        let ws = t.dir("ws");
        let out = t.dir("out");
        std::os::unix::fs::symlink(&out, ws.join("old")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let since = SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::os::unix::fs::symlink(&out, ws.join("new")).unwrap();
        let found = set_aside(std::slice::from_ref(&ws), since);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("/new is a link"), "{found:?}");
        assert!(ws.join("old").is_symlink());
        assert!(!ws.join("new").is_symlink());
    }
}
