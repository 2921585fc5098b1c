//! Files init writes into the new root (the run CA bundle, default files,
//! convenience links) without following a symlink on the way.
//!
//! Some of these paths lie in directories the sandboxed side can write and
//! that persist between starts (a gateway server's state directory is its
//! HOME). A link left there by an earlier start — `run-ca.pem ->
//! /oldroot/home/u/.bashrc`, or a linked `.cache` directory — would make a
//! plain `write(2)` by init land on a host file, since the host tree is
//! mounted at `/oldroot` while init works. Every component is therefore
//! opened with `O_NOFOLLOW` from the new root down (a link is refused, a
//! missing directory is made), and the file itself is made with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` after the old name is unlinked: what is
//! written is always a fresh inode in the directory that was checked.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Component, Path};

use crate::linux::sys::{check, cstr};

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    let fd = check(fd)?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_dir_at(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: dir is open, c a valid name; O_NOFOLLOW refuses a link (ELOOP).
    owned(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    })
}

/// The directory `rel` below `root` (a descriptor), made where missing,
/// refusing any symlink component.
fn dirs_beneath(root: OwnedFd, rel: &Path) -> io::Result<OwnedFd> {
    let mut dir = root;
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            if matches!(comp, Component::RootDir | Component::CurDir) {
                continue;
            }
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "path has a `..` component",
            ));
        };
        dir = match open_dir_at(&dir, name) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                let c = cstr(name)?;
                // SAFETY: dir is open, c a valid name.
                let r = unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) };
                if r != 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                }
                open_dir_at(&dir, name)?
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is a symlink or not a directory; nothing is written through it",
                        name.to_string_lossy()
                    ),
                ));
            }
            Err(e) => return Err(e),
        };
    }
    Ok(dir)
}

fn parent_and_name(root: &Path, path: &Path) -> io::Result<(OwnedFd, std::ffi::OsString)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let rel = path.parent().unwrap_or(Path::new("/"));
    let root_fd = crate::linux::fdmount::open_nofollow(root)?;
    Ok((dirs_beneath(root_fd, rel)?, name.to_os_string()))
}

/// Write `data` at `path` (a path inside the sandbox) below `root`: a
/// fresh file (mode 0644) replacing whatever had the name, a link included.
pub(crate) fn replace_file(root: &Path, path: &Path, data: &[u8]) -> io::Result<()> {
    replace_file_mode(root, path, data, 0o644)
}

/// [`replace_file`] with the new file's `mode`.
pub(crate) fn replace_file_mode(
    root: &Path,
    path: &Path,
    data: &[u8],
    mode: u32,
) -> io::Result<()> {
    let (dir, name) = parent_and_name(root, path)?;
    let c = cstr(&name)?;
    // SAFETY: dir is open, c a valid name. Removing a link removes the
    // link, never its target.
    let r = unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) {
            return Err(e);
        }
    }
    create_new(&dir, &c, data, mode)
}

/// Write `data` at `path` below `root` only when nothing has that name
/// (an existing entry, a dangling link included, is left alone), owner
/// only: the private home's copies of the user's credential files
/// (`~/.netrc`, which Python's `netrc` refuses when others may read it).
pub(crate) fn create_file_if_missing(root: &Path, path: &Path, data: &[u8]) -> io::Result<()> {
    let (dir, name) = parent_and_name(root, path)?;
    let c = cstr(&name)?;
    match create_new(&dir, &c, data, 0o600) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        r => r,
    }
}

/// Make the symlink `path -> target` below `root` when nothing has that
/// name, its parent reached without following a link.
pub(crate) fn symlink_if_missing(root: &Path, path: &Path, target: &Path) -> io::Result<()> {
    let (dir, name) = parent_and_name(root, path)?;
    let c = cstr(&name)?;
    let t = cstr(target.as_os_str())?;
    // SAFETY: dir is open; t and c are valid C strings.
    let r = unsafe { libc::symlinkat(t.as_ptr(), dir.as_raw_fd(), c.as_ptr()) };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    Ok(())
}

fn create_new(dir: &OwnedFd, name: &std::ffi::CStr, data: &[u8], mode: u32) -> io::Result<()> {
    // SAFETY: dir is open, name a valid C string; O_EXCL with O_CREAT never
    // follows a link at the last component.
    let fd = owned(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    std::fs::File::from(fd).write_all(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_name_is_replaced_not_written_through() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("state/.cache")).unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "ORIGINAL").unwrap();
        std::os::unix::fs::symlink(&victim, root.join("state/.cache/run-ca.pem")).unwrap();
        replace_file(&root, Path::new("/state/.cache/run-ca.pem"), b"PEM").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ORIGINAL");
        let md = std::fs::symlink_metadata(root.join("state/.cache/run-ca.pem")).unwrap();
        assert!(md.file_type().is_file());
        assert_eq!(
            std::fs::read(root.join("state/.cache/run-ca.pem")).unwrap(),
            b"PEM"
        );
    }

    #[test]
    fn a_linked_directory_on_the_way_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(root.join("state")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("state/.cache")).unwrap();
        let e = replace_file(&root, Path::new("/state/.cache/skarn-run/ca.pem"), b"x").unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
        let e = create_file_if_missing(&root, Path::new("/state/.cache/f"), b"x").unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        assert!(symlink_if_missing(&root, Path::new("/state/.cache/l"), Path::new("/x")).is_err());
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    }

    #[test]
    fn missing_directories_are_made_and_existing_files_kept() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        create_file_if_missing(&root, Path::new("/a/b/c.txt"), b"one").unwrap();
        create_file_if_missing(&root, Path::new("/a/b/c.txt"), b"two").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"one");
        symlink_if_missing(&root, Path::new("/a/l"), Path::new("b")).unwrap();
        symlink_if_missing(&root, Path::new("/a/l"), Path::new("b")).unwrap();
        assert_eq!(
            std::fs::read_link(root.join("a/l")).unwrap(),
            Path::new("b")
        );
    }
}
