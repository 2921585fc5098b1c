//! Secrets a run probed for (ADR 0314, atk27o F8, F9): a piece of a
//! secret's real value found where only the sandboxed side could have put
//! it (a request the proxy was asked to send, a file of the workspace at
//! the start-up check) is someone guessing at the value, and every answer
//! (the echo scrubbed or not, the run refused or not) is a bit of it. So
//! the first such find is recorded here, and every later run granted that
//! secret (with that value) refuses to start until the user clears it
//! (`skarn secrets clear-exposed NAME`): one answer ever, not one per
//! request or per run.
//!
//! - The record is `~/.local/state/skarn/exposed/NAME.HASH`, HASH a keyed
//!   hash of the name and value (the value checks' key, ADR 0230): a
//!   rotated value is a new secret; nothing there tells the value.
//! - The record's text says what held the piece and when: the details the
//!   sandboxed side is never told (its refusal names no file or request).
//! - skarn's state is hidden from every run, so a run can neither read
//!   nor remove a record.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Where the records are kept, below the user's home.
pub const DIR: &str = ".local/state/skarn/exposed";

/// `name` as a file name: itself when plain, else its hex.
fn file_name(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        name.to_string()
    } else {
        let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
        format!("x{hex}")
    }
}

/// The record of secret `name` with `value` below `home` (its directory
/// made, 0700); `None` when the place cannot be made.
pub fn mark(home: &Path, name: &str, value: &[u8]) -> Option<PathBuf> {
    if !home.is_dir() {
        return None;
    }
    let key = super::value_cache::key(home)?;
    let dir = home.join(DIR);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    let mut h = Sha256::new();
    h.update(b"skarn exposed 1");
    h.update(key);
    h.update((name.len() as u64).to_le_bytes());
    h.update(name.as_bytes());
    h.update(value);
    let hash: String = h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Some(dir.join(format!("{}.{hash}", file_name(name))))
}

/// Whether `mark` records an exposure.
pub fn is_marked(mark: &Path) -> bool {
    std::fs::symlink_metadata(mark).is_ok_and(|m| m.is_file())
}

/// Record an exposure in `mark`, with `detail` (appended, 0600).
pub fn record(mark: &Path, detail: &str) -> std::io::Result<()> {
    let when = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(mark)?;
    writeln!(f, "{when} {detail}")
}

/// Remove every record of secret `name` below `home`; the records
/// removed.
pub fn clear(home: &Path, name: &str) -> std::io::Result<Vec<PathBuf>> {
    let dir = home.join(DIR);
    let prefix = format!("{}.", file_name(name));
    let mut gone = Vec::new();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(gone),
        Err(e) => return Err(e),
    };
    for e in rd.flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) && !n[prefix.len()..].contains('.') {
            std::fs::remove_file(e.path())?;
            gone.push(e.path());
        }
    }
    Ok(gone)
}

/// The refusal for a run granted `names`, recorded as exposed in `marks`.
pub fn refusal(names: &[String], marks: &[PathBuf]) -> String {
    let shown: Vec<String> = marks.iter().map(|m| m.display().to_string()).collect();
    format!(
        "secret {} was recorded as exposed: a piece of its real value was found where only \
         a sandboxed command could have put it (a request, or a file it can write), which is \
         how a command guesses a value piece by piece; no run granted it starts until you \
         have read the record ({}), removed the piece, rotated the secret if you did not put \
         it there yourself, and run `skarn secrets clear-exposed {}`",
        names.join(", "),
        shown.join(", "),
        names.first().map_or("NAME", String::as_str)
    )
}

#[cfg(test)]
mod tests;
