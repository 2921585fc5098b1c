//! Entries git never makes in a git directory: symbolic links, FIFOs and
//! device nodes (ADR 0055).
//!
//! Host git writes many files of its git directory by name, following
//! symbolic links: reflogs (`open(O_APPEND|O_CREAT)`, which also creates a
//! dangling link's target), `COMMIT_EDITMSG`, `FETCH_HEAD`, `ORIG_HEAD`.
//! A link planted there by a sandboxed command would make the user's next
//! `git commit` write outside the workspace; a FIFO would hang it. Git
//! itself creates none of these (a symlinked `HEAD` needs the obsolete
//! `core.preferSymlinkRefs`, and is treated as hostile), so a staged
//! repository holding one is refused (the staging of a new repository), and after every
//! run the git directories under the writable grants are swept: what was
//! not there before the run (same path, inode and, for a link, target) is
//! removed and named.
//!
//! The walk never follows a link: it lists a directory only after `lstat`
//! said it is one, and it runs when every sandboxed process is gone (the
//! PID namespace died with its init), so nothing can swap a directory for a
//! link behind it. In `objects/<sub>/` (loose objects, packs: many files)
//! only the type `readdir` reports is looked at, and `lstat` runs only on
//! what is not a regular file or directory; a FIFO there hangs host git.
//! Sockets are left alone: git's fsmonitor daemon makes one, open(2) on a
//! socket fails at once, and the run's placeholders are sockets.

use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What an odd entry is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// A symbolic link, with its target.
    Symlink(PathBuf),
    /// A named pipe.
    Fifo,
    /// A character or block device node.
    Device,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Symlink(t) => write!(f, "a symbolic link to {}", t.display()),
            Kind::Fifo => f.write_str("a FIFO"),
            Kind::Device => f.write_str("a device node"),
        }
    }
}

/// One entry git never makes, with the inode it had when found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Odd {
    /// Its path.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
    dev: u64,
    ino: u64,
}

fn kind_of(path: &Path, md: &std::fs::Metadata) -> Option<Kind> {
    let ft = md.file_type();
    if ft.is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        Some(Kind::Symlink(target))
    } else if ft.is_fifo() {
        Some(Kind::Fifo)
    } else if ft.is_char_device() || ft.is_block_device() {
        Some(Kind::Device)
    } else {
        None
    }
}

/// `path` as an odd entry, if it is one (never followed).
fn odd_at(path: PathBuf) -> Option<Odd> {
    let m = std::fs::symlink_metadata(&path).ok()?;
    let kind = kind_of(&path, &m)?;
    Some(Odd {
        dev: m.dev(),
        ino: m.ino(),
        path,
        kind,
    })
}

/// Every odd entry under `dir` (the entry `dir` itself included). With
/// `full`, everything is walked; otherwise the contents of `objects/*/`
/// below `dir` are not (see the module documentation), nor those of
/// `modules/` (submodules' git directories, read-only during a run).
pub fn scan(dir: &Path, full: bool) -> Vec<Odd> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0u8)];
    // Depth markers: 0 = a git directory's top, 1 = its `objects`,
    // 2 = an entry of `objects` (not walked unless `info`), 3 = elsewhere.
    while let Some((p, depth)) = stack.pop() {
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if let Some(kind) = kind_of(&p, &md) {
            out.push(Odd {
                path: p,
                kind,
                dev: md.dev(),
                ino: md.ino(),
            });
            continue;
        }
        if !md.is_dir() {
            continue;
        }
        let name = p.file_name().unwrap_or_default();
        let Ok(rd) = std::fs::read_dir(&p) else {
            continue;
        };
        if !full && depth == 2 && name != "info" {
            // Loose objects and packs: many regular files, so only the
            // type readdir gives is looked at (no lstat each); a FIFO
            // there would hang host git, a link be written through.
            for e in rd.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_file() => {}
                    Ok(t) if t.is_dir() => stack.push((e.path(), 3)),
                    _ => out.extend(odd_at(e.path())),
                }
            }
            continue;
        }
        for e in rd.flatten() {
            let n = e.file_name();
            let next = match depth {
                0 if n == "objects" => 1,
                0 if n == "modules" && !full => {
                    // The entry itself only.
                    out.extend(odd_at(e.path()));
                    continue;
                }
                1 => 2,
                _ => 3,
            };
            stack.push((e.path(), next));
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The odd entries present before the run (a person's own links, e.g. a
/// hook linked from the tree), kept when unchanged.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Before {
    dirs: Vec<PathBuf>,
    /// Path, inode and kind (a link's target included: a link replaced by
    /// one to elsewhere may get the same inode back).
    known: HashSet<(PathBuf, u64, u64, Kind)>,
}

impl Before {
    /// The git directories to sweep after the run.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
}

/// The git directories of the workspace's repository (git and common
/// directory, which holds a linked worktree's) and of the nested
/// repositories found before the run (`nested`: `.git` entries and bare
/// repositories), those inside `roots` (the writable grants; the others
/// are read-only during the run).
pub fn git_dirs(ws: &Path, nested: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    let layout = |l: crate::protect::git::git_vet::Layout| [l.git_dir, l.common_dir];
    let mut all: Vec<PathBuf> = crate::protect::git::git_vet::discover(ws)
        .into_iter()
        .flat_map(layout)
        .collect();
    // The repository at the top of each writable grant (a `--write`
    // directory that is a checkout: attack atk22h F2, F3).
    for r in roots {
        all.extend(
            crate::protect::git::git_vet::discover(r)
                .filter(|l| &l.top == r)
                .into_iter()
                .flat_map(layout),
        );
    }
    for g in nested {
        match g
            .parent()
            .filter(|_| g.file_name().is_some_and(|n| n == ".git"))
        {
            // A `.git` directory or gitdir link: its repository's layout.
            Some(top) => all.extend(
                crate::protect::git::git_vet::discover(top)
                    .filter(|l| l.top == top)
                    .into_iter()
                    .flat_map(layout),
            ),
            // A bare repository.
            None => all.push(g.clone()),
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in all {
        if !dirs.contains(&d)
            && roots.iter().any(|r| d.starts_with(r))
            && !roots.contains(&d)
            && std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir())
        {
            dirs.push(d);
        }
    }
    dirs
}

/// [`git_dirs`] of the writable grants other than the workspace (which a
/// copy-on-write layer vets itself).
pub fn git_dirs_of_grants(nested: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    // (Each root's own repository is looked up by `git_dirs` itself.)
    match roots.first() {
        Some(first) => git_dirs(first, nested, roots),
        None => Vec::new(),
    }
}

/// Record the odd entries of `dirs` before the run.
pub fn before(dirs: Vec<PathBuf>) -> Before {
    let known = dirs
        .iter()
        .flat_map(|d| scan(d, false))
        .map(|o| (o.path, o.dev, o.ino, o.kind))
        .collect();
    Before { dirs, known }
}

/// After the run: remove each odd entry of `dirs` that was not there
/// (same path and inode) before; one line per entry.
pub fn sweep(before: &Before, dirs: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for d in dirs {
        for o in scan(d, false) {
            if before
                .known
                .contains(&(o.path.clone(), o.dev, o.ino, o.kind.clone()))
            {
                continue;
            }
            let outcome = match std::fs::remove_file(&o.path) {
                Ok(()) => "removed".to_string(),
                Err(e) => format!("it could not be removed ({e}): remove it before running git"),
            };
            out.push(format!(
                "{} was made {} during the run (host git would write through it or hang on it); \
                 {outcome}",
                o.path.display(),
                o.kind
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn new_links_and_fifos_are_removed_old_ones_kept() {
        let tmp = skarn_test_support::TempDir::new("gitsweep");
        let d = tmp.path().to_path_buf();
        let g = d.join(".git");
        for s in [
            "objects/ab",
            "objects/info",
            "refs/heads/x",
            "logs",
            "hooks",
        ] {
            std::fs::create_dir_all(g.join(s)).unwrap();
        }
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        symlink("../../tools/pre-commit", g.join("hooks/pre-commit")).unwrap();
        let b = before(git_dirs(&d, &[], std::slice::from_ref(&d)));
        assert_eq!(b.dirs(), std::slice::from_ref(&g));
        // During the run.
        symlink("/root/.bashrc", g.join("logs/HEAD")).unwrap();
        symlink("/etc/x", g.join("refs/heads/x/y")).unwrap();
        symlink("/etc/alt", g.join("objects/info/alternates")).unwrap();
        symlink("/elsewhere", g.join("objects/pack")).unwrap();
        symlink("/obj", g.join("objects/ab/cdef")).unwrap();
        std::fs::write(g.join("objects/ab/0123"), "a loose object").unwrap();
        mkfifo(&g.join("COMMIT_EDITMSG"));
        mkfifo(&g.join("objects/ab/4567"));
        let w = sweep(&b, b.dirs());
        assert_eq!(w.len(), 7, "{w:?}");
        assert!(
            w.iter()
                .any(|l| l.contains("logs/HEAD") && l.contains("/root/.bashrc"))
        );
        assert!(
            w.iter()
                .any(|l| l.contains("COMMIT_EDITMSG") && l.contains("FIFO"))
        );
        for gone in [
            "logs/HEAD",
            "refs/heads/x/y",
            "objects/info/alternates",
            "objects/pack",
            "objects/ab/cdef",
            "objects/ab/4567",
            "COMMIT_EDITMSG",
        ] {
            assert!(std::fs::symlink_metadata(g.join(gone)).is_err(), "{gone}");
        }
        assert!(std::fs::symlink_metadata(g.join("hooks/pre-commit")).is_ok());
        assert!(g.join("objects/ab/0123").is_file());
        // A link that existed before, moved elsewhere, is new there.
        std::fs::rename(g.join("hooks/pre-commit"), g.join("ORIG_HEAD")).unwrap();
        assert_eq!(sweep(&b, b.dirs()).len(), 1);
        // One pointed elsewhere is new, whatever its inode.
        let b = before(vec![g.clone()]);
        symlink("../../tools/x", g.join("logs/HEAD")).unwrap();
        let b2 = before(vec![g.clone()]);
        assert!(sweep(&b2, b2.dirs()).is_empty());
        let mut known = b2.known.clone();
        let (p, dev, ino, _) = known
            .iter()
            .find(|k| k.0.ends_with("logs/HEAD"))
            .cloned()
            .unwrap();
        known.clear();
        known.insert((p, dev, ino, Kind::Symlink(PathBuf::from("/elsewhere"))));
        let retargeted = Before {
            dirs: vec![g.clone()],
            known,
        };
        assert_eq!(sweep(&retargeted, retargeted.dirs()).len(), 1);
        drop(b);
        // A full scan (staging) sees inside objects too.
        symlink("/obj", g.join("objects/ab/cdef")).unwrap();
        assert!(
            scan(&g, true)
                .iter()
                .any(|o| o.path.ends_with("objects/ab/cdef"))
        );
    }

    #[test]
    fn nested_and_outside_git_dirs() {
        let tmp = skarn_test_support::TempDir::new("gitsweep-dirs");
        let d = tmp.path().to_path_buf();
        let ws = d.join("ws");
        for s in [
            "ws/sub/.git/objects",
            "ws/bare/objects",
            "main/.git/objects",
        ] {
            std::fs::create_dir_all(d.join(s)).unwrap();
        }
        for s in ["ws/sub/.git/HEAD", "ws/bare/HEAD", "main/.git/HEAD"] {
            std::fs::write(d.join(s), "ref: refs/heads/main\n").unwrap();
        }
        std::fs::write(
            ws.join(".git"),
            format!("gitdir: {}\n", d.join("main/.git").display()),
        )
        .unwrap();
        let nested = [ws.join("sub/.git"), ws.join("bare")];
        let only_ws = git_dirs(&ws, &nested, std::slice::from_ref(&ws));
        assert_eq!(only_ws, [ws.join("sub/.git"), ws.join("bare")]);
        let all = git_dirs(&ws, &nested, std::slice::from_ref(&d));
        assert_eq!(all[0], d.join("main/.git"));
    }
}
