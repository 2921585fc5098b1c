//! A cache kept in the workspace's store ([`crate::linux::store`], ADR 0175): an
//! overlayfs with the host's cache read-only below and the store's
//! directory writable above; the store's directory alone where the host
//! has no such cache.

use std::path::Path;

use super::grant::ovl_escape;
use super::{MountError, NEW, Notes, OLD, bind_with, mkdir_p, under};
use crate::linux::sys;

/// Mount the store's layer for the cache at `path`. A failure leaves the
/// cache as the rest of the private home (discarded), with a note: a cache
/// is never a reason to refuse the run.
pub(super) fn store_layer(
    path: &Path,
    upper: &Path,
    work: &Path,
    notes: &mut Notes,
) -> Result<(), MountError> {
    let dst = under(NEW, path);
    let src = under(OLD, path);
    let (u, w) = (under(OLD, upper), under(OLD, work));
    if mkdir_p(&dst).is_err() {
        notes.push(format!(
            "{}: no mount point for the store's layer; what is written there is discarded",
            path.display()
        ));
        return Ok(());
    }
    if !std::fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir()) {
        // No host cache: the store's directory itself.
        return bind_with(&u, &dst, true, false);
    }
    let (Some(lower), Some(ue), Some(we)) = (ovl_escape(&src), ovl_escape(&u), ovl_escape(&w))
    else {
        notes.push(format!(
            "{}: its name cannot be given to overlayfs; the host's cache is read-only",
            path.display()
        ));
        return bind_with(&src, &dst, false, false);
    };
    let base = format!("lowerdir={lower},upperdir={ue},workdir={we}");
    // No redirects and no metadata-only copies: the upper directory holds
    // whole entries, so the host's cache changing between runs is safe.
    // In a user namespace (`userxattr`) overlayfs refuses
    // `redirect_dir=off` and takes `nofollow` (none made, none followed).
    for extra in [
        // Root outside a user namespace (trusted xattrs), then a user
        // namespace, which refuses `redirect_dir=off` for `nofollow`.
        ",redirect_dir=off,metacopy=off,index=off",
        ",userxattr,redirect_dir=nofollow,metacopy=off,index=off",
    ] {
        if sys::mount(
            Some(Path::new("overlay")),
            &dst,
            Some("overlay"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(&format!("{base}{extra}")),
        )
        .is_ok()
        {
            return Ok(());
        }
    }
    notes.push(format!(
        "{}: overlayfs refused the store's layer; the host's cache is read-only for this run",
        path.display()
    ));
    bind_with(&src, &dst, false, false)
}
