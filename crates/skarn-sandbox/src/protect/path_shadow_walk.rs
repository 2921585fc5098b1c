//! Relative `PATH` entries in every directory of the writable grants
//! (atk22d F9, subdirectories). A shell whose `PATH` holds `bin`,
//! `./node_modules/.bin` or an empty entry searches it in whatever
//! directory the user is in, so in `<project>/sub` it runs
//! `<project>/sub/bin/ls`. After the run one walk of the writable grants
//! finds each directory such an entry can name there (its path ends with
//! the entry; `.` names every directory) holding a program changed during
//! the run whose name is also a program of a later `PATH` directory; those
//! are set aside as [`crate::protect::path_shadow`] does for the grant's
//! top.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Entries looked at in the walk, at most.
const MAX_WALK_ENTRIES: usize = 400_000;
/// Time the walk may take, at most.
const MAX_WALK_TIME: Duration = Duration::from_secs(3);
/// Program names read from the later `PATH` directories, at most.
const MAX_NAMES: usize = 100_000;
/// Directories with shadowing programs handled, at most.
const MAX_DIRS: usize = 256;

/// The components an entry must end a directory's path with (`..` and `.`
/// dropped: `../bin` may name any `bin`); empty for `.` (every directory).
fn suffix(rel: &str) -> Vec<String> {
    Path::new(rel)
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

fn ends_with(dir: &Path, suffix: &[String]) -> bool {
    let comps: Vec<_> = dir.components().collect();
    suffix.len() <= comps.len()
        && comps[comps.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(c, s)| c.as_os_str() == s.as_str())
}

/// Whether one of the relative entries `rels` names `dir` when the user
/// is in some directory of the grant.
pub fn named_by(dir: &Path, rels: &[String]) -> bool {
    rels.iter().any(|r| ends_with(dir, &suffix(r)))
}

/// Whether a link at `link` would stand for a directory one of the
/// relative entries `rels` names, or for one of its parents (`node_modules
/// -> nm` for `./node_modules/.bin`), when the user is in some directory
/// of the grant: the shell would run what the link leads to (attack
/// atk22i F7).
pub fn link_on_the_way(link: &Path, rels: &[String]) -> bool {
    rels.iter().any(|r| {
        let s = suffix(r);
        (1..=s.len()).any(|k| ends_with(link, &s[..k]))
    })
}

/// Names of programs in `later` (the `PATH` directories a relative entry
/// comes before).
fn program_names(later: &[PathBuf]) -> HashSet<std::ffi::OsString> {
    let mut names = HashSet::new();
    for d in later {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for e in rd.flatten() {
            if names.len() >= MAX_NAMES {
                return names;
            }
            let n = e.file_name();
            if !names.contains(&n) && crate::protect::path_shadow::is_program(&e.path()) {
                names.insert(n);
            }
        }
    }
    names
}

fn changed_since(p: &Path, since: SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).is_ok_and(|m| {
        let at = std::time::UNIX_EPOCH
            + Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().max(0) as u32);
        at >= since
    })
}

/// The directories under `roots` (not `skip`) a relative entry of `rels`
/// can name that hold a program changed since `since` named like one of
/// `later`; and a line when the walk was cut short.
pub fn shadowing_dirs(
    rels: &[String],
    later: &[PathBuf],
    roots: &[PathBuf],
    skip: &[PathBuf],
    since: SystemTime,
    configured: &[String],
) -> (Vec<PathBuf>, Option<String>) {
    let suffixes: Vec<Vec<String>> = rels.iter().map(|r| suffix(r)).collect();
    if suffixes.is_empty() {
        return (Vec::new(), None);
    }
    let mut names = program_names(later);
    names.extend(configured.iter().map(std::ffi::OsString::from));
    if names.is_empty() {
        return (Vec::new(), None);
    }
    let (start, mut seen, mut out) = (Instant::now(), 0usize, Vec::new());
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let named = !skip.contains(&dir) && suffixes.iter().any(|s| ends_with(&dir, s));
        let mut hit = false;
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_WALK_ENTRIES || start.elapsed() > MAX_WALK_TIME {
                return (
                    out,
                    Some(format!(
                        "your shell's PATH has relative entries ({}) and the check of the \
                         writable directories for programs the run put there was cut short \
                         (more than {MAX_WALK_ENTRIES} entries or {}s); check for programs \
                         named like system ones before running commands in subdirectories",
                        rels.join(", "),
                        MAX_WALK_TIME.as_secs()
                    )),
                );
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if named
                && !hit
                && names.contains(&e.file_name())
                && !e
                    .file_name()
                    .to_string_lossy()
                    .contains(".skarn-set-aside-")
                && changed_since(&e.path(), since)
            {
                hit = true;
            }
        }
        if hit && out.len() < MAX_DIRS {
            out.push(dir);
        }
    }
    (out, None)
}

/// After the run: [`shadowing_dirs`] (names of `later` and `configured`),
/// each set aside as
/// [`crate::protect::path_shadow::set_aside_shadows_since`] does.
pub fn set_aside(
    rels: &[String],
    later: &[PathBuf],
    roots: &[PathBuf],
    skip: &[PathBuf],
    since: Option<SystemTime>,
    configured: &[String],
) -> Vec<String> {
    let Some(since) = since else {
        return Vec::new();
    };
    let (dirs, cut) = shadowing_dirs(rels, later, roots, skip, since, configured);
    let pairs: Vec<(PathBuf, Vec<PathBuf>)> =
        dirs.into_iter().map(|d| (d, later.to_vec())).collect();
    let mut out = crate::protect::path_shadow::set_aside_shadows_since(
        &pairs,
        roots,
        Some(since),
        configured,
    );
    out.extend(cut);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        let mut m = std::fs::metadata(p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut m, 0o755);
        std::fs::set_permissions(p, m).unwrap();
    }

    #[test]
    fn entries_name_directories_by_their_last_components() {
        assert!(ends_with(
            Path::new("/w/a/node_modules/.bin"),
            &suffix("./node_modules/.bin")
        ));
        assert!(ends_with(Path::new("/w/a/bin"), &suffix("../bin")));
        assert!(!ends_with(Path::new("/w/a/sbin"), &suffix("bin")));
        assert!(ends_with(Path::new("/w/a"), &suffix(".")));
    }

    #[test]
    fn a_program_changed_in_a_named_subdirectory_is_set_aside() {
        let tmp = skarn_test_support::TempDir::new("path-shadow-walk");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (ws, sys) = (d.join("ws"), d.join("sys"));
        program(&sys.join("ls"));
        program(&ws.join("old/bin/ls")); // the project's own, before the run
        std::thread::sleep(Duration::from_millis(20));
        let since = SystemTime::now();
        std::thread::sleep(Duration::from_millis(20));
        program(&ws.join("a/b/bin/ls"));
        program(&ws.join("a/b/bin/jest"));
        program(&ws.join("a/b/tools/ls")); // not named by the entry
        let w = set_aside(
            &["bin".into()],
            &[sys],
            std::slice::from_ref(&ws),
            &[],
            Some(since),
            &[],
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(!ws.join("a/b/bin/ls").exists());
        assert!(ws.join("a/b/bin/jest").exists());
        assert!(ws.join("a/b/tools/ls").exists());
        assert!(ws.join("old/bin/ls").exists());
    }
}
