//! Files and directories only the current user can read, per platform.
//!
//! Unix: directories are created 0700 and checked to be owned by the
//! effective uid (group/other bits are removed if found); files are created
//! 0600. Windows: the store lives under the user's profile
//! (`%LOCALAPPDATA%`), whose inherited ACL already admits only that user,
//! SYSTEM and administrators; no further check is made there.

use std::fs;
use std::io;
use std::path::Path;

/// Create `dir` (and its parents) private to the user.
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Check that an existing directory is the user's own and private; makes
/// it private when only its mode is too open. `Err` says why not.
#[cfg(unix)]
pub(crate) fn check_dir(dir: &Path, meta: &fs::Metadata) -> Result<(), CheckError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(CheckError::NotOwned(format!(
            "owned by uid {}, not {me}",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(CheckError::Io)?;
    }
    Ok(())
}

/// See the module documentation: the profile's ACL is relied upon.
#[cfg(not(unix))]
pub(crate) fn check_dir(_dir: &Path, _meta: &fs::Metadata) -> Result<(), CheckError> {
    Ok(())
}

/// Why a directory is not acceptable (never, off unix).
#[derive(Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) enum CheckError {
    /// Someone else's directory (the reason, for the error message).
    NotOwned(String),
    Io(io::Error),
}

/// Options that create a new file (never an existing one, never through a
/// symlink) only the user can read.
pub(crate) fn new_file_options() -> fs::OpenOptions {
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o
}
