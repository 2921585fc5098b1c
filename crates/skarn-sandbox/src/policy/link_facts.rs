//! What each name on the host is (a link and its text, or not a link),
//! looked at once while one command is prepared (ADR 0247, issue 30).
//!
//! Preparing a run resolves the same names many times over: every home
//! link, `PATH` link, toolchain link and secret alias is made canonical,
//! and each scan used its own cache or `realpath(3)`, which reads every
//! component again (`/usr` and `/usr/bin` several hundred times per run).
//! Inside a [`Scope`] the answers of `lstat` and `readlink` are kept, per
//! thread, until the scope ends, so each name costs one system call per
//! preparation; outside a scope every call goes to the kernel as before.
//!
//! A scope covers one preparation only: it is never open while a command
//! of the run can change the host (the checks after the run and every
//! long-lived caller look again), and skarn's own writes during it make
//! directories and files, never links, so no answer kept can be one of
//! skarn's making. A name's answer is the one the first look got; before
//! this cache each scan looked at a slightly different moment, and any of
//! those moments was as valid.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::path::{Component, Path, PathBuf};

/// What `lstat` said of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A symbolic link.
    Link,
    /// A directory.
    Dir,
    /// Anything else that exists.
    Other,
}

#[derive(Default)]
struct Memo {
    kinds: HashMap<PathBuf, Result<Kind, io::ErrorKind>>,
    links: HashMap<PathBuf, Result<PathBuf, io::ErrorKind>>,
    /// System calls made through the memo (for tests and benchmarks).
    asked: usize,
}

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// While alive (the outermost one of a thread), names' answers are kept.
#[must_use = "the answers are kept only while the scope lives"]
pub struct Scope {
    outer: bool,
}

impl Scope {
    /// Start keeping answers (a scope inside another changes nothing).
    pub fn enter() -> Scope {
        let outer = MEMO.with(|m| {
            let mut m = m.borrow_mut();
            let outer = m.is_none();
            if outer {
                *m = Some(Memo::default());
            }
            outer
        });
        Scope { outer }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if self.outer {
            MEMO.with(|m| *m.borrow_mut() = None);
        }
    }
}

/// System calls made through the open scope so far (`None` outside one).
pub fn asked() -> Option<usize> {
    MEMO.with(|m| m.borrow().as_ref().map(|m| m.asked))
}

fn kind_now(p: &Path) -> io::Result<Kind> {
    let m = std::fs::symlink_metadata(p)?;
    let t = m.file_type();
    Ok(if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Dir
    } else {
        Kind::Other
    })
}

/// What `p` is, not following a last link (`lstat`).
pub fn kind(p: &Path) -> io::Result<Kind> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let Some(m) = m.as_mut() else {
            return kind_now(p);
        };
        if let Some(k) = m.kinds.get(p) {
            return k.map_err(io::Error::from);
        }
        m.asked += 1;
        let k = kind_now(p).map_err(|e| e.kind());
        m.kinds.insert(p.to_path_buf(), k);
        k.map_err(io::Error::from)
    })
}

/// The text of the link `p` (`readlink`).
pub fn read_link(p: &Path) -> io::Result<PathBuf> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let Some(m) = m.as_mut() else {
            return std::fs::read_link(p);
        };
        if let Some(t) = m.links.get(p) {
            return t.clone().map_err(io::Error::from);
        }
        m.asked += 1;
        let t = std::fs::read_link(p).map_err(|e| e.kind());
        m.links.insert(p.to_path_buf(), t.clone());
        t.map_err(io::Error::from)
    })
}

/// Links followed at most while resolving one path (the kernel's bound).
const MAX_LINKS: usize = 40;

/// The canonical path of the existing `p`, as `realpath(3)` gives it
/// (every link followed, `.` and `..` taken physically), through the
/// memo. Outside a scope (or for a relative `p`) it is `realpath(3)`.
pub fn canonicalize(p: &Path) -> io::Result<PathBuf> {
    if asked().is_none() || !p.is_absolute() {
        return std::fs::canonicalize(p);
    }
    let mut done = PathBuf::from("/");
    let mut rest: Vec<std::ffi::OsString> = Vec::new(); // reversed: next last
    push_front(&mut rest, p);
    let mut links = 0;
    while let Some(c) = rest.pop() {
        if c == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&c);
        match kind(&next)? {
            Kind::Link => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(too_many_links());
                }
                let t = read_link(&next)?;
                if t.is_absolute() {
                    done = PathBuf::from("/");
                }
                push_front(&mut rest, &t);
            }
            Kind::Dir => done = next,
            Kind::Other if rest.is_empty() => done = next,
            // `file/more`: the kernel's answer (`ENOTDIR`).
            Kind::Other => return Err(not_a_directory()),
        }
    }
    Ok(done)
}

/// Put the components of `p` before those left in `rest` (kept reversed).
fn push_front(rest: &mut Vec<std::ffi::OsString>, p: &Path) {
    let parts: Vec<std::ffi::OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    rest.extend(parts.into_iter().rev());
}

/// The error the kernel gives for too many levels of links.
fn too_many_links() -> io::Error {
    #[cfg(unix)]
    return io::Error::from_raw_os_error(libc::ELOOP);
    #[cfg(not(unix))]
    return io::Error::other("too many levels of symbolic links");
}

/// The error the kernel gives for a file where a directory is needed.
fn not_a_directory() -> io::Error {
    #[cfg(unix)]
    return io::Error::from_raw_os_error(libc::ENOTDIR);
    #[cfg(not(unix))]
    return io::Error::other("not a directory");
}

#[cfg(test)]
#[path = "link_facts_tests.rs"]
mod tests;
