//! Whether one file holds a granted secret's value, and which names are
//! those of files tools read credentials from: the pieces the check of
//! the credential places ([`super::stored_values`]) and the scan of whole
//! grants ([`super::value_scan`]) share.

use std::path::Path;

use super::egress_secrets::RunSecrets;

/// Files tools read credentials from, relative to a project directory.
pub(crate) const PLACES: &[&str] = &[
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".cargo/config.toml",
    ".cargo/config",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".docker/config.json",
    ".gem/credentials",
    ".config/gh/hosts.yml",
    ".config/git/credentials",
    ".git-credentials",
    ".aws/credentials",
    ".kube/config",
    ".m2/settings.xml",
    ".pgpass",
    "auth.json",
    "gradle.properties",
    ".condarc",
];

/// Most bytes of one file looked at; a longer file counts as holding a
/// value (it cannot be ruled out).
pub(crate) const MAX_FILE: u64 = 4 << 20;

/// Names of files tools read credentials from, wherever they lie.
const CREDENTIAL_NAMES: &[&str] = &[
    "npmrc",
    ".npmrc",
    "gitconfig",
    ".gitconfig",
    ".git-credentials",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    ".condarc",
    "condarc",
    ".netrc",
    "_netrc",
    ".pgpass",
    "settings.xml",
    "gradle.properties",
    "auth.json",
    "hosts.yml",
    "credentials",
    "credentials.toml",
    "config.json",
    "config.toml",
    ".yarnrc",
    ".yarnrc.yml",
];

/// Whether `p` is named like a file tools read credentials from.
pub(crate) fn is_credential_name(p: &Path) -> bool {
    let Some(n) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    n.starts_with(".env") || CREDENTIAL_NAMES.contains(&n)
}

/// Whether `f`'s name is that of a credential place (its last part, or
/// a `.env*` file).
pub(crate) fn is_place_name(f: &Path) -> bool {
    let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name.starts_with(".env")
        || PLACES.iter().any(|p| p.rsplit('/').next() == Some(name))
        || is_credential_name(f)
}

/// `f` opened for reading without blocking: a FIFO or a device named
/// like a credential file (a run can make one) never stalls the check
/// (atk27g F10); the caller keeps regular files only.
pub(crate) fn open_nonblocking(f: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(f)
}

/// Whether the regular file `f` holds a granted value (past [`MAX_FILE`]:
/// `big_holds`).
pub(crate) fn holds(secrets: &RunSecrets, f: &Path, big_holds: bool) -> bool {
    use std::io::Read;
    let Ok(file) = open_nonblocking(f) else {
        return false;
    };
    let Ok(md) = file.metadata() else {
        return false;
    };
    if !md.is_file() {
        return false;
    }
    // Past the bound the value cannot be ruled out: counted as holding it
    // (a run could pad the user's file to hide it; atk24e F6).
    if md.len() > MAX_FILE {
        return big_holds;
    }
    let mut text = Vec::new();
    if file.take(MAX_FILE).read_to_end(&mut text).is_err() {
        return false;
    }
    secrets.holds_value(&text)
}
