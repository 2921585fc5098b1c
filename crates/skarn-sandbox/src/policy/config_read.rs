//! The one reader of configuration and client files (`skarn.toml`, the
//! user's `config.toml`, `.mcp.json`, `.claude/settings.json`, ...), used
//! by `skarn run`, `serve`, `doctor`, `exec`, `trust`, `init` and the hook.
//!
//! While a `skarn run` is alive in a workspace, the protected names that
//! were missing there hold its placeholders (mode-000 sockets, ADR 0004):
//! such a name is **absent** to every reader, whoever runs it (root gets
//! ENXIO from `open`, another user EACCES). The name is looked at first
//! (`lstat`, then the link's target), so no open is tried on a socket; a
//! real permission error on a regular file is still an error.

use std::path::Path;

use super::config_error::ConfigError;

/// Largest configuration file read (a policy file is a few KiB).
pub const MAX_CONFIG_FILE: u64 = 1 << 20;

/// Whether `md` is a socket (never a file anyone could read).
#[cfg(unix)]
fn socket(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_socket()
}

#[cfg(not(unix))]
fn socket(_: &std::fs::Metadata) -> bool {
    false
}

/// Whether a failed look at `path` means "nothing there": not found (or
/// a dangling link), or a directory on the way is a socket (a run's
/// placeholder for a missing `.claude`, `.vscode`, ...: ENOTDIR).
fn not_there(path: &Path, e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
        || (e.kind() == std::io::ErrorKind::NotADirectory
            && path
                .ancestors()
                .skip(1)
                .any(|a| std::fs::metadata(a).is_ok_and(|m| socket(&m))))
}

/// Whether `path` names no readable file: nothing there, a dangling link,
/// or a socket (a live run's placeholder) at it or on the way, links
/// followed.
pub fn is_absent(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(md) => socket(&md),
        Err(e) => not_there(path, &e),
    }
}

/// Whether `path` itself (not followed) is a live run's placeholder: a
/// socket with mode 000. A file must never be written over one: the run
/// covers that name in its sandbox, and replacing the inode on the host
/// would lift that cover (and the run would then leave the new file as
/// the user's).
pub(crate) fn is_run_placeholder(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path)
            .is_ok_and(|m| socket(&m) && m.permissions().mode() & 0o7777 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The nearest of `path` and the directories above it that is a live
/// run's placeholder (see [`is_run_placeholder`]).
pub fn run_placeholder_on_the_way(path: &Path) -> Option<std::path::PathBuf> {
    path.ancestors()
        .find(|a| is_run_placeholder(a))
        .map(Path::to_path_buf)
}

/// The text of the configuration file `path` (links followed), read
/// without ever blocking: `Ok(None)` when it does not exist or is a socket
/// (a run's placeholder); an error when it is another kind of file (a
/// FIFO or a device, which would make a blocking read hang forever: a
/// cloned repository can ship `skarn.toml` as a link to one), unreadable,
/// not UTF-8 or larger than [`MAX_CONFIG_FILE`].
pub fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    use std::io::Read;
    let io = |err: std::io::Error| ConfigError::Io {
        path: path.display().to_string(),
        err,
    };
    // Look before opening: a socket is a placeholder, absent.
    match std::fs::metadata(path) {
        Ok(md) if socket(&md) => return Ok(None),
        Ok(_) => {}
        Err(e) if not_there(path, &e) => return Ok(None),
        Err(e) => return Err(io(e)),
    }
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading would wait for a writer.
        open.custom_flags(libc::O_NONBLOCK);
    }
    let f = match open.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // A run made its placeholder since the look (a socket cannot be
        // opened: ENXIO for root, EACCES for another user at mode 000).
        #[cfg(unix)]
        Err(e)
            if e.raw_os_error() == Some(libc::ENXIO)
                || (e.kind() == std::io::ErrorKind::PermissionDenied
                    && std::fs::metadata(path).is_ok_and(|m| socket(&m))) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(io(e)),
    };
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::other(
            "not a regular file (a FIFO, a device or a directory): refused",
        )));
    }
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(io(std::io::Error::other("larger than 1 MiB: refused")));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| io(std::io::Error::other("not UTF-8 text")))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_absent_and_a_real_denial_is_an_error() {
        use std::os::unix::fs::PermissionsExt;
        let d = skarn_test_support::TempDir::new("config-read");
        let sock = d.path().join("skarn.toml");
        let c = std::ffi::CString::new(sock.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid path; S_IFSOCK needs no capability.
        assert_eq!(unsafe { libc::mknod(c.as_ptr(), libc::S_IFSOCK, 0) }, 0);
        assert!(read_text(&sock).unwrap().is_none());
        assert!(is_absent(&sock));
        assert!(is_run_placeholder(&sock));
        let link = d.path().join("link.toml");
        std::os::unix::fs::symlink(&sock, &link).unwrap();
        assert!(read_text(&link).unwrap().is_none());
        assert!(is_absent(&link));
        assert!(!is_run_placeholder(&link));
        let dangling = d.path().join("dangling.toml");
        std::os::unix::fs::symlink(d.path().join("none"), &dangling).unwrap();
        assert!(read_text(&dangling).unwrap().is_none());
        assert!(is_absent(&dangling));
        let f = d.path().join("real.toml");
        std::fs::write(&f, "[run]\n").unwrap();
        assert!(!is_absent(&f));
        assert_eq!(read_text(&f).unwrap().as_deref(), Some("[run]\n"));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
        // A placeholder for a missing directory: what is under it is absent.
        let under = sock.join("settings.json");
        assert!(read_text(&under).unwrap().is_none());
        assert!(is_absent(&under));
        assert_eq!(run_placeholder_on_the_way(&under).as_deref(), Some(&*sock));
        // Root reads a mode-000 file: the denial is only seen by others.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            let e = read_text(&f).unwrap_err().to_string();
            assert!(e.contains("ermission denied"), "{e}");
        }
    }
}
