//! The direct mode's side of [`crate::protect::tool_keys`]: the judged
//! files at the top of each writable grant are read before the run; after
//! it, one whose judged settings changed is set aside and the host's text
//! put back (one made during the run with such settings: set aside).

use std::path::PathBuf;

/// The judged files at the top of the writable grants, with their text
/// before the run (`None`: missing; unreadable ones are not kept).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

const NAMES: [&str; 4] = ["package.json", "pyproject.toml", "setup.cfg", "tox.ini"];

/// Read the judged files at the top of each of `roots`.
pub fn before(roots: &[PathBuf]) -> Saved {
    let mut files = Vec::new();
    for p in roots.iter().take(64).flat_map(|r| NAMES.map(|n| r.join(n))) {
        if let Ok(text) = crate::protect::small_file::read_bytes(&p) {
            files.push((p, text));
        }
    }
    Saved { files }
}

/// After a direct run: each file of `saved` whose judged settings the run
/// changed, set aside with the host's text put back; one line each.
pub fn after(saved: &Saved) -> Vec<String> {
    let mut out = Vec::new();
    for (p, old) in &saved.files {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let new = match crate::protect::small_file::read_bytes(p) {
            Ok(None) => continue,
            Ok(Some(b)) => Ok(b),
            Err(_) => Err(()),
        };
        if new.as_ref().ok() == old.as_ref() {
            continue;
        }
        let same =
            crate::protect::tool_keys::same_settings(name, new.as_deref(), Ok(old.as_deref()));
        if same {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
        let back = match old {
            Some(text) => match crate::protect::package_json::put_back(p, text) {
                Ok(()) => "; the host's file was put back".to_string(),
                Err(e) => format!("; the host's file could not be put back ({e})"),
            },
            None => String::new(),
        };
        out.push(format!(
            "{} was written during the run: {}: {}{back}",
            p.display(),
            crate::protect::tool_keys::why(name),
            aside.describe("the run's other changes to it are there")
        ));
    }
    out
}
