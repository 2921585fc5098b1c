//! lint-staged's configuration kept in `package.json` (its
//! `"lint-staged"` key): host git's pre-commit hook (husky, lefthook,
//! simple-git-hooks running `npx lint-staged`) runs the commands it names
//! on the user's next commit. The file itself cannot be read-only (npm
//! writes it), so a run may change it but not that key: the layer refuses
//! such a `package.json` (copy-on-write), and the direct mode puts the
//! host's file back after the run and sets the run's aside. The
//! configuration files of their own names are persistence entries.

use std::path::{Path, PathBuf};

/// Bytes of one `package.json` read at most (past it: judged unsafe).
const MAX_BYTES: u64 = 4 << 20;

/// The `"lint-staged"` value of the `package.json` text `bytes`: `Ok(None)`
/// without one; `Err` when the text cannot be read as JSON at all, or is
/// longer than [`MAX_BYTES`] (judged unsafe: lint-staged's reader, V8's
/// `JSON.parse`, has no depth limit and decodes escapes such as
/// `"lint\u002dstaged"`, so a text serde_json refuses may still hold the
/// key; atk22k F11).
fn key(bytes: &[u8]) -> Result<Option<serde_json::Value>, ()> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(());
    }
    serde_json::from_slice::<serde_json::Value>(bytes)
        .map(|v| v.get("lint-staged").cloned())
        .map_err(|_| ())
}

/// The text of `p`, one byte past [`MAX_BYTES`] at most (so an over-long
/// file is told apart).
fn read(p: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    let mut b = Vec::new();
    f.take(MAX_BYTES + 1).read_to_end(&mut b).ok()?;
    Some(b)
}

/// Whether `new` (a `package.json` a run wrote) sets lint-staged's
/// configuration otherwise than `old` (the host's; missing: none).
pub fn changes_lint_staged(new: &Path, old: &Path) -> bool {
    let Some(n) = read(new) else { return false };
    let o = read(old).unwrap_or_default();
    if n == o && (n.len() as u64) <= MAX_BYTES {
        return false;
    }
    match (key(&n), key(&o)) {
        (Err(()), _) => true,
        (Ok(a), Ok(b)) => a != b,
        (Ok(a), Err(())) => a.is_some(),
    }
}

/// What the direct mode saves before a run: each `package.json` at the
/// top of `roots` with its text.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

/// Save the `package.json` at the top of each of `roots`.
pub fn before(roots: &[PathBuf]) -> Saved {
    Saved {
        files: roots
            .iter()
            .take(64)
            .map(|r| {
                let p = r.join("package.json");
                let text = std::fs::symlink_metadata(&p)
                    .is_ok_and(|m| m.is_file())
                    .then(|| read(&p))
                    .flatten();
                (p, text)
            })
            .collect(),
    }
}

/// After a direct run: a `package.json` whose lint-staged configuration
/// changed is set aside and the host's text put back (made without one:
/// set aside); one line each.
pub fn after(saved: &Saved) -> Vec<String> {
    let mut out = Vec::new();
    for (p, old) in &saved.files {
        let Ok(md) = std::fs::symlink_metadata(p) else {
            continue;
        };
        // Anything but a file in its place (a link lint-staged follows and
        // reads whole as its configuration, atk22k F12) is a change.
        let changed = if md.is_file() {
            let Some(new) = read(p) else { continue };
            if old.as_deref() == Some(new.as_slice()) && new.len() as u64 <= MAX_BYTES {
                continue;
            }
            match (key(&new), old.as_deref().map(key)) {
                (Err(()), _) => true,
                (Ok(a), Some(Ok(b))) => a != b,
                (Ok(a), Some(Err(()))) | (Ok(a), None) => a.is_some(),
            }
        } else {
            true
        };
        if !changed {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
        let back = match old {
            Some(text) if text.len() as u64 > MAX_BYTES => {
                "; the host's file, longer than skarn reads, could not be put back".to_string()
            }
            Some(text) => match put_back(p, text) {
                Ok(()) => "; the host's file was put back".to_string(),
                Err(e) => format!("; the host's file could not be put back ({e})"),
            },
            None => String::new(),
        };
        out.push(format!(
            "{} was written during the run with another lint-staged configuration (host git \
             hooks run the commands it names on the next commit): {}{back}",
            p.display(),
            aside.describe("the run's other changes to it are there")
        ));
    }
    out
}

/// Write `text` at `p` (made anew: never through a link).
fn put_back(p: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)?;
    f.write_all(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lint_staged_key_is_compared_not_the_rest() {
        let t = skarn_test_support::TempDir::new("package-json");
        let old = t.file(
            "old.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*.js\":\"eslint\"}}",
        );
        let same = t.file(
            "same.json",
            "{\n  \"name\": \"p\",\n  \"dependencies\": {\"x\": \"1\"},\n  \"lint-staged\": {\"*.js\": \"eslint\"}\n}",
        );
        let other = t.file(
            "other.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*\":\"touch x\"}}",
        );
        let broken = t.file("broken.json", "{\"lint-staged\": {\"*\": \"x\"");
        // Past serde_json's depth, with the key spelled through an escape
        // (atk22k F11): still a change.
        let deep = format!(
            "{{\"name\":\"p\",\"x\":{}{},\"lint\\u002dstaged\":{{\"*.js\":\"touch x\"}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let deep = t.file("deep.json", &deep);
        assert!(changes_lint_staged(&deep, &old));
        assert!(changes_lint_staged(&deep, &t.join("missing.json")));
        assert!(!changes_lint_staged(&old, &old));
        assert!(!changes_lint_staged(&same, &old));
        assert!(changes_lint_staged(&other, &old));
        assert!(changes_lint_staged(&broken, &old));
        assert!(changes_lint_staged(&other, &t.join("missing.json")));
    }
}
