//! `PATH` directories inside a writable grant that do not exist before a
//! run (direnv's `PATH_add node_modules/.bin`, `bin`, `.venv/bin` of a
//! fresh checkout). Reserving them would stop the tools that make them
//! (`npm install` could not create `node_modules`), so the run may create
//! them, and after it each new program there whose name is also a program
//! of a later `PATH` directory (`ls`, `git`: what the host's next command
//! by that name would run instead) is set aside. A name found nowhere else
//! on `PATH` runs only when the user asks for that tool by name.

use std::path::{Path, PathBuf};

/// Entries looked at per directory, at most.
const MAX_ENTRIES: usize = 4096;

/// After the run: in each of `dirs` (a missing `PATH` directory, with the
/// `PATH` directories after it), set aside every entry whose name is a
/// program of a later directory, or a name the host's configuration runs
/// through `PATH` (`configured`, see
/// [`crate::protect::configured_programs`]); one line per directory with
/// any.
pub fn set_aside_shadows(
    dirs: &[(PathBuf, Vec<PathBuf>)],
    roots: &[PathBuf],
    configured: &[String],
) -> Vec<String> {
    set_aside_shadows_since(dirs, roots, None, configured)
}

/// Whether a program named `name` in a `PATH` directory would run instead
/// of a host program: one of a later directory (`later`), or one the
/// host's configuration runs by that name (`configured`: `core.pager =
/// delta` with no delta installed).
pub fn shadows(name: &std::ffi::OsStr, later: &[PathBuf], configured: &[String]) -> bool {
    configured.iter().any(|c| std::ffi::OsStr::new(c) == name)
        || dispatched(name)
        || later.iter().any(|l| is_program(&l.join(name)))
}

/// Tools that run `<tool>-<word>` found on `PATH` for any `<tool> <word>`
/// the user types (or their configuration names), with the reason: a
/// program by such a name is a command of the host's tool, installed or
/// not.
pub const DISPATCHERS: &[(&str, &str)] = &[
    (
        "git-",
        "git runs git-<word> for `git <word>`, a `<word>::` remote (git-remote-<word>) \
         and its credential helpers",
    ),
    ("cargo-", "cargo runs cargo-<word> for `cargo <word>`"),
    ("kubectl-", "kubectl runs its plugins kubectl-<word>"),
    ("oc-", "oc runs its plugins oc-<word>"),
    ("brew-", "brew runs external commands brew-<word>"),
];

/// Whether `name` is a command a host tool finds on `PATH` by its prefix
/// ([`DISPATCHERS`]).
pub fn dispatched(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    DISPATCHERS
        .iter()
        .any(|(p, _)| n.len() > p.len() && n.starts_with(p))
}

/// As [`set_aside_shadows`], for `PATH` directories that existed before
/// the run (a relative entry of a start-up file, atk22d F9): only entries
/// changed since `since` (their status change time) are looked at, so the
/// project's own programs stay.
pub fn set_aside_shadows_since(
    dirs: &[(PathBuf, Vec<PathBuf>)],
    roots: &[PathBuf],
    since: Option<std::time::SystemTime>,
    configured: &[String],
) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let changed = |e: &std::fs::DirEntry| match since {
        None => true,
        Some(t) => e.metadata().is_ok_and(|m| {
            let at = std::time::UNIX_EPOCH
                + std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().max(0) as u32);
            at >= t
        }),
    };
    let mut out = Vec::new();
    for (named, later) in dirs {
        // Where the name leads now, through whatever links the run made:
        // only inside a writable grant (never a host directory a link
        // points to).
        let Ok(dir) = std::fs::canonicalize(named) else {
            continue;
        };
        if !roots.iter().any(|r| dir.starts_with(r)) {
            if dir != *named {
                out.push(format!(
                    "{} is on your PATH and the run made it lead to {}: check it before \
                     running programs from it",
                    named.display(),
                    dir.display()
                ));
            }
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut moved = Vec::new();
        let mut kept = Vec::new();
        for e in rd.flatten().take(MAX_ENTRIES) {
            let name = e.file_name();
            let n = name.to_string_lossy();
            if n.contains(".skarn-set-aside-") || !shadows(&name, later, configured) || !changed(&e)
            {
                continue;
            }
            match crate::protect::set_aside::set_aside(&e.path(), "skarn-set-aside") {
                crate::protect::set_aside::Aside::Moved(_) => moved.push(n.into_owned()),
                crate::protect::set_aside::Aside::Removed => moved.push(format!("{n} (removed)")),
                crate::protect::set_aside::Aside::Left(_) => kept.push(n.into_owned()),
            }
        }
        if !moved.is_empty() || !kept.is_empty() {
            out.push(format!(
                "{} is on your PATH and {} during the run; programs in it named like \
                 programs later on PATH (or that your configuration runs by name) would run \
                 instead of them: {}{}",
                named.display(),
                if since.is_some() {
                    "changed"
                } else {
                    "was created"
                },
                if moved.is_empty() {
                    String::new()
                } else {
                    format!(
                        "set aside as <name>.skarn-set-aside-<random>: {}",
                        moved.join(", ")
                    )
                },
                if kept.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; could not be set aside (remove them): {}",
                        kept.join(", ")
                    )
                }
            ));
        }
    }
    out
}

pub fn is_program(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_that_shadow_a_later_program_are_set_aside() {
        let tmp = skarn_test_support::TempDir::new("path-shadow");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (new, sys) = (d.join("ws/bin"), d.join("sys"));
        std::fs::create_dir_all(&new).unwrap();
        std::fs::create_dir_all(&sys).unwrap();
        for (dir, n) in [(&sys, "ls"), (&new, "ls"), (&new, "jest")] {
            std::fs::write(dir.join(n), "#!/bin/sh\n").unwrap();
            let mut p = std::fs::metadata(dir.join(n)).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
            std::fs::set_permissions(dir.join(n), p).unwrap();
        }
        std::fs::write(new.join("delta"), "#!/bin/sh\n").unwrap();
        std::fs::write(new.join("git-sync"), "#!/bin/sh\n").unwrap();
        let w = set_aside_shadows(
            &[(new.clone(), vec![sys.clone()])],
            std::slice::from_ref(&d),
            &["delta".to_string()],
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(!new.join("ls").exists());
        assert!(
            !new.join("delta").exists(),
            "a configured name is set aside"
        );
        assert!(std::fs::read_dir(&new).unwrap().flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("ls.skarn-set-aside-")
        }));
        assert!(
            !new.join("git-sync").exists(),
            "a command git finds by its prefix is set aside"
        );
        assert!(new.join("jest").exists());
    }
}
