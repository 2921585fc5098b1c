//! Setting an entry aside after a run (ADR 0146): the entry is renamed
//! to `<name>.<tag>-<32 hex digits>`, a random 128-bit suffix nobody can
//! guess in advance, with a rename that never replaces an existing name
//! (`renameat2(RENAME_NOREPLACE)` on Linux), retried with a fresh suffix.
//! A sandboxed command that fills the directory with names it expects
//! (`.git.skarn-quarantine-<pid>`) cannot make the rename fail any more;
//! when a rename still fails, the entry is removed instead (never kept
//! with only a warning), and only when that fails too is the entry left
//! in place: [`left_in_place`] then says so, and the run exits non-zero.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Suffixes tried before the entry is removed instead.
const TRIES: usize = 8;

/// Entries left in place by this process (neither renamed nor removed).
static LEFT: AtomicUsize = AtomicUsize::new(0);

/// What became of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aside {
    /// Renamed to this path.
    Moved(PathBuf),
    /// It could not be renamed, so it was removed.
    Removed,
    /// Neither: it is still in place (the reason).
    Left(String),
}

impl Aside {
    /// The end of a user message: where the entry went (`review` says
    /// what to do before renaming it back).
    pub fn describe(&self, review: &str) -> String {
        match self {
            Aside::Moved(p) => format!("set aside as {} ({review})", p.display()),
            Aside::Removed => "it could not be set aside, so it was removed".into(),
            Aside::Left(why) => format!(
                "it could neither be set aside nor removed ({why}): it is still in place; \
                 {review}"
            ),
        }
    }
}

/// How many entries this process had to leave in place.
pub fn left_in_place() -> usize {
    LEFT.load(Ordering::Relaxed)
}

/// 32 random hex digits (128 bits from the kernel).
pub(crate) fn random_suffix() -> String {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(target_os = "linux")]
fn fill_random(b: &mut [u8]) {
    let mut got = 0;
    while got < b.len() {
        // SAFETY: the pointer and length describe the unfilled part of b.
        let n = unsafe { libc::getrandom(b[got..].as_mut_ptr().cast(), b.len() - got, 0) };
        if n > 0 {
            got += n as usize;
        } else if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    if got < b.len() {
        fill_from_urandom(b);
    }
}

#[cfg(not(target_os = "linux"))]
fn fill_random(b: &mut [u8]) {
    fill_from_urandom(b);
}

fn fill_from_urandom(b: &mut [u8]) {
    use std::io::Read;
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(b));
    if ok.is_err() {
        // No randomness at all: the clock and the PID (weak, but the
        // rename still never replaces an existing name).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            ^ u128::from(std::process::id()) << 64;
        b.copy_from_slice(&t.to_le_bytes()[..b.len().min(16)]);
    }
}

/// Rename `from` to `to` unless `to` exists.
#[cfg(target_os = "linux")]
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let f = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let t = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two valid C strings, AT_FDCWD.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
    }
    std::fs::rename(from, to)
}

/// The name `p` gets when set aside with `tag` (`skarn-quarantine`,
/// `skarn-set-aside`) and a fresh random suffix.
pub(crate) fn aside_name(p: &Path, tag: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(format!(".{tag}-{}", random_suffix()));
    PathBuf::from(s)
}

/// Set `p` aside under a fresh unguessable name beside it; remove it when
/// that fails; [`Aside::Left`] (counted by [`left_in_place`]) only when
/// both fail.
pub fn set_aside(p: &Path, tag: &str) -> Aside {
    set_aside_as(p, p, tag)
}

/// [`set_aside`] with the new name made from `base` instead of `p`
/// (`base.<tag>-<suffix>`, in `base`'s directory).
pub(crate) fn set_aside_as(p: &Path, base: &Path, tag: &str) -> Aside {
    let why = match renames(p, base, tag) {
        Ok(a) => return a,
        Err(why) => why,
    };
    // The command took write permission away from the directory (it
    // owns it as the user does): given back for the move, then restored.
    let unlocked = unlock_parent(p);
    let got = match renames(p, base, tag) {
        Ok(a) => a,
        Err(_) => match remove(p) {
            Ok(()) => Aside::Removed,
            Err(e) => {
                LEFT.fetch_add(1, Ordering::Relaxed);
                Aside::Left(format!("rename: {why}; remove: {e}"))
            }
        },
    };
    #[cfg(unix)]
    if let Some((dir, mode)) = unlocked {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = unlocked;
    got
}

/// Give `p`'s directory write and search permission for its owner when it
/// lacks them; the directory and its mode before, to put back.
#[cfg(not(unix))]
fn unlock_parent(_: &Path) -> Option<(&Path, u32)> {
    None
}

/// Give `p`'s directory write and search permission for its owner when it
/// lacks them (unix); the directory and its mode before, to put back.
#[cfg(unix)]
fn unlock_parent(p: &Path) -> Option<(&Path, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty())?;
    let md = std::fs::symlink_metadata(dir).ok()?;
    let mode = md.permissions().mode() & 0o7777;
    if !md.is_dir() || mode & 0o300 == 0o300 {
        return None;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700)).ok()?;
    Some((dir, mode))
}

/// Renames with fresh names ([`Aside::Moved`], or [`Aside::Removed`] when
/// the entry is gone); the last error when none worked.
fn renames(p: &Path, base: &Path, tag: &str) -> Result<Aside, String> {
    let mut last = None;
    for _ in 0..TRIES {
        let to = aside_name(base, tag);
        match rename_noreplace(p, &to) {
            Ok(()) => return Ok(Aside::Moved(to)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Gone already (or its directory is): nothing is left.
                if std::fs::symlink_metadata(p).is_err() {
                    return Ok(Aside::Removed);
                }
                last = Some(e);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.map(|e| e.to_string()).unwrap_or_default())
}

/// Remove `p` (a directory with its contents; links are removed, never
/// followed).
fn remove(p: &Path) -> std::io::Result<()> {
    let md = std::fs::symlink_metadata(p)?;
    if md.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unguessable_and_existing_names_never_block() {
        let t = skarn_test_support::TempDir::new("set_aside");
        let d = t.path().to_path_buf();
        let a = random_suffix();
        assert_eq!(a.len(), 32);
        assert_ne!(a, random_suffix());
        std::fs::create_dir_all(d.join("repo/.git/hooks")).unwrap();
        std::fs::write(d.join("repo/.git/hooks/pre-commit"), "x").unwrap();
        let got = set_aside(&d.join("repo/.git"), "skarn-quarantine");
        let Aside::Moved(to) = &got else {
            panic!("{got:?}")
        };
        assert!(!d.join("repo/.git").exists() && to.join("hooks/pre-commit").exists());
        let n = to.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            n.starts_with(".git.skarn-quarantine-") && n.len() == 22 + 32,
            "{n}"
        );
        assert!(got.describe("review it").contains("set aside as"));
    }

    #[test]
    fn an_entry_that_cannot_be_renamed_is_removed() {
        let t = skarn_test_support::TempDir::new("set_aside_rm");
        let d = t.path().to_path_buf();
        std::fs::create_dir_all(d.join("x")).unwrap();
        std::fs::write(d.join("x/f"), "x").unwrap();
        // A tag with a slash names a directory that does not exist: every
        // rename fails, so the entry goes.
        assert_eq!(set_aside(&d.join("x"), "no/such"), Aside::Removed);
        assert!(!d.join("x").exists());
        assert_eq!(left_in_place(), 0);
    }
}
