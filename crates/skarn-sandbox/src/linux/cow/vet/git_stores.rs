//! Stores that tools beside git keep inside a git directory and trust
//! without checking (attack atk22k F15, F15b): Git LFS's local objects
//! (`lfs/objects/ab/cd/<sha256>`: host `git lfs` smudges one into the
//! checkout by its name, checking its size only) and git-crypt's keys
//! (`git-crypt/keys/<name>`: host git-crypt encrypts what is committed
//! and decrypts what is checked out with them), and git-annex's objects
//! of the same kind (`annex/objects/../KEY/KEY`: the work tree's links
//! lead there, read as they are). In the workspace's repository, nested
//! ones and submodules' git directories alike.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;

use sha2::Digest;

/// Why the run's file at `inner` (names below a git directory; `modules`:
/// it lies in a submodule's git directory, `modules/<name>/...`) may not
/// be applied; `upper` is the file in the layer.
pub(super) fn refused(inner: &[&OsStr], modules: bool, upper: &Path) -> Option<String> {
    let at = |name: &str, next: Option<&str>| {
        (0..inner.len()).find(|i| {
            (*i == 0 || modules)
                && inner[*i] == name
                && next.is_none_or(|x| inner.get(i + 1).is_some_and(|n| *n == x))
        })
    };
    if at("git-crypt", None).is_some() {
        return Some(
            "git-crypt state (host git-crypt encrypts your commits and decrypts the checkout \
             with the keys there)"
                .into(),
        );
    }
    if let Some(i) = at("annex", Some("objects")) {
        return annex_object(&inner[i + 2..], upper);
    }
    let i = at("lfs", Some("objects"))?;
    match &inner[i + 2..] {
        [a, b, oid] if lfs_name_ok(a, b, oid) && sha256_of(upper).as_deref() == oid.to_str() => {
            None
        }
        _ => Some(
            "a Git LFS object whose content is not the object it names (host git lfs would \
             check it out in place of the committed file)"
                .into(),
        ),
    }
}

/// Why git-annex's object at `rest` (names below `annex/objects`) may not
/// be applied: its key must name a SHA-256 or SHA-512 of the file's
/// content (keys of other backends carry no hash skarn checks).
fn annex_object(rest: &[&OsStr], upper: &Path) -> Option<String> {
    let key = match rest {
        [.., dir, file] if dir == file => file.to_str(),
        _ => None,
    };
    let ok = key.and_then(|k| {
        let (backend, tail) = k.split_once('-')?;
        let (_, name) = tail.split_once("--")?;
        let hex = name.split('.').next()?;
        let sum = match backend {
            "SHA256" | "SHA256E" => sha256_of(upper),
            "SHA512" | "SHA512E" => digest_of::<sha2::Sha512>(upper),
            _ => None,
        }?;
        Some(sum == hex)
    });
    if ok == Some(true) {
        return None;
    }
    Some(
        "a git-annex object whose content is not the hash its key names (the work tree's \
         links lead to it: host programs would read it as the annexed file)"
            .into(),
    )
}

/// Whether `a/b/oid` is where Git LFS keeps the object `oid`.
fn lfs_name_ok(a: &OsStr, b: &OsStr, oid: &OsStr) -> bool {
    let (Some(a), Some(b), Some(oid)) = (a.to_str(), b.to_str(), oid.to_str()) else {
        return false;
    };
    oid.len() == 64
        && oid
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        && oid.get(..2) == Some(a)
        && oid.get(2..4) == Some(b)
}

/// The SHA-256 of the file `p` in lower-case hex (never through a link).
fn sha256_of(p: &Path) -> Option<String> {
    digest_of::<sha2::Sha256>(p)
}

/// The digest `D` of the file `p` in lower-case hex (never through a
/// link).
fn digest_of<D: Digest>(p: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)
        .ok()?;
    let mut h = D::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => h.update(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
