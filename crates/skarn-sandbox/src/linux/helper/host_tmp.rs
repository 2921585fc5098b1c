//! The planned private temporary directory on the host
//! ([`crate::linux::plan::HostTmp`]), for runs without a mount namespace.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::linux::plan::HostTmp;

/// Make the directory from the plan's template (None on failure: the
/// command then keeps the inherited TMPDIR, and no rule is added).
pub(super) fn make(t: &HostTmp) -> Option<PathBuf> {
    let mut buf = t.template.as_os_str().as_bytes().to_vec();
    buf.push(0);
    // SAFETY: buf is a writable NUL-terminated template.
    let r = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
    if r.is_null() {
        return None;
    }
    buf.pop();
    Some(PathBuf::from(OsString::from_vec(buf)))
}

/// Remove it after the run.
pub(super) fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}
