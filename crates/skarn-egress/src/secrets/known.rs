//! The values of every configured secret, granted or not, that can be
//! read without running anything (`file` and `from_env` sources; a
//! `command` or `keyring` source may prompt or take time): a variable
//! holding one under another name (`.envrc`'s `export GITLAB_PAT=$(cat
//! ~/.secrets/gl)` next to `[secrets.gl] file = "~/.secrets/gl"`) is kept
//! from every sandboxed run and server (atk27j F2, F7).

use std::path::Path;

use zeroize::Zeroizing;

use super::config::{SecretConfig, SecretsConfig};

/// The readable values of the configured secrets, with their names.
pub struct KnownValues {
    each: Vec<(String, crate::ValueFinder, Zeroizing<String>)>,
    sources: Vec<(String, String)>,
}

impl SecretsConfig {
    /// [`KnownValues`] of this configuration (a source that cannot be
    /// read is left out: it cannot be in a variable either).
    pub fn known_values(&self, home: Option<&Path>) -> KnownValues {
        let mut each = Vec::new();
        let mut sources = Vec::new();
        for (name, c) in &self.secrets {
            if let Some(v) = &c.from_env {
                sources.push((v.clone(), name.clone()));
            }
            if let Some(value) = cheap_value(c, home) {
                each.push((
                    name.clone(),
                    crate::ValueFinder::for_values([value.as_str()]),
                    value,
                ));
            }
        }
        KnownValues { each, sources }
    }
}

impl KnownValues {
    /// The secret whose value `text` holds (in any form the echo
    /// scrubber knows), if any.
    pub fn holding(&self, text: &[u8]) -> Option<&str> {
        self.each
            .iter()
            .find(|(_, f, _)| f.found_in(text))
            .map(|(n, _, _)| n.as_str())
    }

    /// The secret whose whole value `text` holds (verbatim, hex or
    /// base64: [`whole_found`]), if any. For
    /// text the sandboxed side chooses (a command's arguments): an answer
    /// about a whole value tells nothing of it to someone who does not
    /// hold it already, where one about a piece (in [`Self::holding`]'s
    /// windows) would be an oracle, guess by guess (ADR 0314).
    pub fn holding_whole(&self, text: &[u8]) -> Option<&str> {
        self.each
            .iter()
            .find(|(_, _, v)| whole_found(v.as_bytes(), text))
            .map(|(n, _, _)| n.as_str())
    }

    /// The secret whose `from_env` source is the variable `var`, if any.
    pub fn source_of(&self, var: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(v, _)| v == var)
            .map(|(_, n)| n.as_str())
    }

    /// The secret the variable `var` is a source of, or whose value the
    /// variable holds in this process's environment.
    pub fn variable(&self, var: &str) -> Option<&str> {
        if let Some(n) = self.source_of(var) {
            return Some(n);
        }
        let v = std::env::var_os(var)?;
        self.holding(v.as_encoded_bytes())
    }
}

/// Most entries of a source's directory looked at for copies.
const BESIDE_MAX: usize = 256;
/// Largest file looked at for a copy.
const COPY_MAX: u64 = 1 << 20;

/// The regular files beside the `file` source `f` (of `c`) that hold its
/// value in any form the echo scrubber knows (an editor's backup, a
/// rotated copy); none when the directory is large.
pub(super) fn copies_beside(
    c: &SecretConfig,
    f: &Path,
    home: Option<&Path>,
) -> Vec<std::path::PathBuf> {
    let Some(value) = cheap_value(c, home) else {
        return Vec::new();
    };
    // Beside the configured name and beside the file a link there leads
    // to (`~/.secrets/gh -> ~/sync/keys/gh` with `gh.bak` next to the
    // target, atk27k F10).
    let real = std::fs::canonicalize(f).ok();
    let mut dirs: Vec<&Path> = f.parent().into_iter().collect();
    if let Some(d) = real.as_deref().and_then(Path::parent)
        && !dirs.contains(&d)
    {
        dirs.push(d);
    }
    let mut out = Vec::new();
    for dir in dirs {
        out.extend(copies_in(dir, f, real.as_deref(), &value));
    }
    out
}

/// The regular files in `dir` (not `f` nor its target `real`) holding
/// `value`; none when the directory is large.
fn copies_in(dir: &Path, f: &Path, real: Option<&Path>, value: &str) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let entries: Vec<std::path::PathBuf> = rd
        .flatten()
        .take(BESIDE_MAX + 1)
        .map(|e| e.path())
        .collect();
    if entries.len() > BESIDE_MAX {
        return Vec::new();
    }
    let finder = crate::ValueFinder::for_values([value]);
    let mut out = Vec::new();
    for p in entries {
        if p == f || Some(p.as_path()) == real {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if !m.is_file() || m.len() > COPY_MAX {
            continue;
        }
        let Ok(text) = std::fs::read(&p).map(Zeroizing::new) else {
            continue;
        };
        if memchr::memmem::find(&text, value.as_bytes()).is_some() || finder.found_in(&text) {
            out.push(p);
        }
    }
    out
}

/// The value of a `file` or `from_env` source, as resolution reads it
/// (trailing line breaks dropped); `None` for other sources.
fn cheap_value(c: &SecretConfig, home: Option<&Path>) -> Option<Zeroizing<String>> {
    let raw: Zeroizing<String> = if let Some(v) = &c.from_env {
        Zeroizing::new(std::env::var(v).ok()?)
    } else if c.file.is_some() {
        let p = c.source_file(home)?;
        // Only a regular file: a FIFO there must not stop every run.
        if !p.is_absolute() || !std::fs::metadata(&p).ok()?.is_file() {
            return None;
        }
        super::config::read_source_file(&p).ok()?
    } else {
        return None;
    };
    let t = raw.trim_end_matches(['\n', '\r']);
    (!t.is_empty()).then(|| Zeroizing::new(t.to_string()))
}

/// Whether `text` holds the whole of `value`, verbatim, in hex (either
/// case) or in base64 (standard or URL-safe, padded or not). Whole values
/// only: see [`KnownValues::holding_whole`].
pub fn whole_found(value: &[u8], text: &[u8]) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    if value.is_empty() {
        return false;
    }
    let hex: Zeroizing<String> = Zeroizing::new(value.iter().map(|b| format!("{b:02x}")).collect());
    let forms: [Zeroizing<Vec<u8>>; 5] = [
        Zeroizing::new(value.to_vec()),
        Zeroizing::new(hex.as_bytes().to_vec()),
        Zeroizing::new(hex.to_ascii_uppercase().into_bytes()),
        Zeroizing::new(STANDARD_NO_PAD.encode(value).into_bytes()),
        Zeroizing::new(URL_SAFE_NO_PAD.encode(value).into_bytes()),
    ];
    forms
        .iter()
        .any(|f| memchr::memmem::find(text, f).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_sources_value_under_another_name_is_found() {
        let d = std::env::temp_dir().join(format!("skarn-known-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("tok");
        std::fs::write(&f, "knownREALvalue7Hs3Jd8Kq1\n").unwrap();
        let text = format!(
            "[secrets.a]\nfile = \"{}\"\nhosts = [\"h\"]\n[secrets.b]\ncommand = [\"false\"]\nhosts = [\"h\"]\n",
            f.display()
        );
        let cfg = SecretsConfig::parse(&text, "t").unwrap();
        let k = cfg.known_values(None);
        assert_eq!(k.holding(b"x=knownREALvalue7Hs3Jd8Kq1"), Some("a"));
        assert_eq!(k.holding(b"a25vd25SRUFMdmFsdWU3SHMzSmQ4S3Ex"), Some("a"));
        assert_eq!(k.holding(b"something else entirely"), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[cfg(test)]
mod whole_tests {
    use super::whole_found;

    #[test]
    fn whole_values_are_found_in_their_forms_pieces_are_not() {
        let v = b"Wq7Zk2Xp9Lm4Tv8Rc3Yb6Hs1Nd5Jf0Ga";
        assert!(whole_found(v, b"echo Wq7Zk2Xp9Lm4Tv8Rc3Yb6Hs1Nd5Jf0Ga;"));
        let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
        assert!(whole_found(v, hex.as_bytes()));
        assert!(whole_found(v, hex.to_uppercase().as_bytes()));
        assert!(whole_found(
            v,
            b"V3E3WmsyWHA5TG00VHY4UmMzWWI2SHMxTmQ1SmYwR2E="
        ));
        // A piece is the probe lock-out's: answering it here would be an
        // oracle (a guess confirmed piece by piece).
        assert!(!whole_found(v, b"echo Wq7Zk2Xp9Lm4Tv8Rc3Yb6"));
        assert!(!whole_found(v, &hex.as_bytes()[..20]));
        assert!(!whole_found(b"", b"anything"));
    }
}
