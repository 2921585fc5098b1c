//! Standard descriptors that are files the sandbox keeps unchanged.
//!
//! An open file is reached through the caller's mount of it, not the
//! sandbox's: `/proc/self/fd/0` reopens it with whatever access Landlock
//! grants for its path and the file's mode allow. When the caller redirects
//! from (or to) a file inside a writable grant that the sandbox otherwise
//! keeps read-only (`< .git/config`, a hook, a masked secret, a read-only
//! grant below a writable one, a private cache layer), the command could
//! reopen it for writing past the read-only bind. Such a run is refused
//! before anything starts; the contents can be given through a pipe
//! instead. Re-opening the file through the sandbox's view was not chosen:
//! the new open file would not share its offset with the caller's, so
//! `{ skarn run -- head -1; cat; } < file` would read the same line twice.

use std::path::{Path, PathBuf};

use crate::linux::plan::{Access, FsOp};

/// The path of standard descriptor `fd` when it is a regular file.
fn regular_file_path(fd: libc::c_int) -> Option<PathBuf> {
    // SAFETY: an all-zero stat is a valid value to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes into st; fd is an integer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    p.is_absolute().then_some(p)
}

/// The protective step of `fs` that covers `file` inside a writable grant,
/// if there is one.
fn kept_unchanged<'a>(file: &Path, fs: &'a [FsOp]) -> Option<&'a Path> {
    // Writable through the sandbox's view: a writable bind, or a
    // copy-on-write layer (the workspace's, ADR 0130/0226; the git
    // layer's, ADR 0181), whose host files change only once vetted.
    // `strictly`: another grant than `p`'s own step.
    let writable = |p: &Path, strictly: bool| {
        fs.iter().any(|o| match o {
            FsOp::Bind {
                path,
                access: Access::ReadWrite | Access::Private,
            }
            | FsOp::Layer { path, .. } => p.starts_with(path) && !(strictly && p == path),
            _ => false,
        })
    };
    fs.iter()
        .filter_map(|o| match o {
            FsOp::Protect { path, .. } | FsOp::Mask { path, .. } | FsOp::IdmapBind { path, .. } => {
                Some((path.as_path(), false))
            }
            // A layer inside a writable grant (the git layer over `.git`
            // in the writable workspace): its host files change only once
            // vetted. (The workspace's own layer is no cover by itself: an
            // ordinary file of it may be given either way.)
            FsOp::Layer { path, .. } => Some((path.as_path(), true)),
            FsOp::Bind { path, access } if *access != Access::ReadWrite => {
                Some((path.as_path(), false))
            }
            _ => None,
        })
        .find(|(cover, strictly)| file.starts_with(cover) && writable(cover, *strictly))
        .map(|(cover, _)| cover)
        .or_else(|| in_layer_vetted(file, fs))
}

/// The files a workspace layer leaves writable but vets when applied (a
/// repository's `.git/config`, `.git/modules`, `.gitmodules`): kept
/// unchanged on the host until then, so no standard descriptor either.
fn in_layer_vetted<'a>(file: &Path, fs: &'a [FsOp]) -> Option<&'a Path> {
    fs.iter().find_map(|o| match o {
        FsOp::Layer { path, .. }
            if file.starts_with(path)
                && file
                    .ancestors()
                    .take_while(|a| *a != path.as_path())
                    .any(crate::linux::cow::vet::vetted_in_layer) =>
        {
            Some(path.as_path())
        }
        _ => None,
    })
}

/// Why the run must not start: a standard descriptor is a file that `fs`
/// keeps unchanged inside a writable grant.
pub(super) fn refusal(fs: &[FsOp]) -> Option<String> {
    const NAMES: [&str; 3] = ["standard input", "standard output", "standard error"];
    for (fd, name) in NAMES.iter().enumerate() {
        let Some(file) = regular_file_path(fd as libc::c_int) else {
            continue;
        };
        if let Some(cover) = kept_unchanged(&file, fs) {
            return Some(format!(
                "{name} is {}, which the sandbox keeps unchanged ({}): the command could \
                 reopen it for writing through /proc/self/fd; give it through a pipe instead \
                 (cat FILE | skarn run ...)",
                file.display(),
                cover.display()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(p: &str, access: Access) -> FsOp {
        FsOp::Bind {
            path: p.into(),
            access,
        }
    }

    #[test]
    fn only_files_kept_unchanged_inside_writable_grants_are_refused() {
        let fs = vec![
            bind("/usr", Access::ReadExec),
            bind("/ws", Access::ReadWrite),
            FsOp::Protect {
                path: "/ws/.git/hooks".into(),
                reserve: false,
                reserve_if: Vec::new(),
            },
            bind("/ws/vendor", Access::Read),
            bind("/home/u/.cargo/registry", Access::Private),
            FsOp::Mask {
                path: "/ws/.env.secret".into(),
                reserve: false,
                pin: None,
            },
        ];
        let refused = |p: &str| kept_unchanged(Path::new(p), &fs).is_some();
        assert!(refused("/ws/.git/hooks/pre-commit"));
        assert!(refused("/ws/vendor/lib.rs"));
        assert!(refused("/home/u/.cargo/registry/index/x"));
        assert!(refused("/ws/.env.secret"));
        assert!(!refused("/ws/src/main.rs"), "an ordinary workspace file");
        assert!(!refused("/usr/share/dict/words"), "read-only, not writable");
        assert!(!refused("/ws/.git/hooksx"), "components, not prefixes");
        assert!(!refused("/var/log/build.log"), "outside every grant");
    }

    #[test]
    fn in_a_workspace_layer_protected_and_vetted_files_are_refused() {
        let fs = vec![
            bind("/usr", Access::ReadExec),
            FsOp::Layer {
                path: "/ws".into(),
                upper: "/s/u".into(),
                work: "/s/w".into(),
            },
            FsOp::Protect {
                path: "/ws/.git/hooks".into(),
                reserve: false,
                reserve_if: Vec::new(),
            },
        ];
        let refused = |p: &str| kept_unchanged(Path::new(p), &fs).is_some();
        assert!(refused("/ws/.git/hooks/pre-commit"));
        assert!(refused("/ws/.git/config"), "vetted when applied");
        assert!(refused("/ws/.git/modules/x/config"));
        assert!(refused("/ws/.gitmodules"));
        assert!(!refused("/ws/src/main.rs"), "an ordinary workspace file");
        assert!(!refused("/ws/.gitmodulesx"));
    }
}
