//! The modules the `import` lines of a site-packages directory's `.pth`
//! files import (attack atk22g F9). Python's `site` executes every `.pth`
//! line that starts with `import` at each start, so the modules such a
//! line names run at each start too: virtualenv's `_virtualenv`,
//! setuptools' editable finders (`__editable___<pkg>_finder`), coverage's
//! and pytest-cov's hooks, namespace-package helpers. They are start-up
//! code as much as `sitecustomize` is, and the venv guard treats them so
//! ([`crate::protect::venv_guard`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// `.pth` files read per directory, at most; past it every module counts
/// (see [`Imported::all`]).
const MAX_PTH: usize = 512;

/// What the `.pth` files of one directory import.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Imported {
    /// Top-level module names.
    pub names: HashSet<Vec<u8>>,
    /// A `.pth` with an import line could not be read within the bounds
    /// (too large, too many files): any module may be one.
    pub all: bool,
}

impl Imported {
    /// Whether the site-packages entry `entry` (`m.py`, `m/`, `m.pyc`,
    /// `m.cpython-311-x86_64-linux-gnu.so`) is one of the modules.
    pub fn has_entry(&self, entry: &[u8]) -> bool {
        let module = entry.split(|b| *b == b'.').next().unwrap_or(entry);
        if module.is_empty() {
            return false;
        }
        // (A dist-info or egg-info directory is metadata, never imported.)
        if entry.ends_with(b".dist-info") || entry.ends_with(b".egg-info") {
            return false;
        }
        self.all || self.names.contains(module)
    }
}

/// The characters `str.splitlines()` breaks lines at (Python 3.13's
/// `site` splits `.pth` text with it; older ones at `\r` and `\n` only:
/// splitting at all of them finds every line either runs; atk22k F7).
const LINE_BREAKS: [char; 10] = [
    '\n', '\r', '\u{0b}', '\u{0c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// The lines of `.pth` text as any Python splits them, a byte-order mark
/// at the start dropped.
pub(crate) fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    text.trim_start_matches('\u{feff}').split(LINE_BREAKS)
}

/// The texts `.pth` bytes may be read as: UTF-8 (what is not UTF-8
/// replaced), and, when the bytes are not UTF-8, Latin-1 (Python 3.13
/// falls back to the locale's encoding; every byte is a character there,
/// `\x85` a line break).
pub(crate) fn decodings(b: &[u8]) -> Vec<String> {
    match std::str::from_utf8(b) {
        Ok(s) => vec![s.to_string()],
        Err(_) => vec![
            String::from_utf8_lossy(b).into_owned(),
            b.iter().map(|&c| char::from(c)).collect(),
        ],
    }
}

/// The top-level module names `.pth` text imports: each line Python
/// executes (it starts with `import` followed by a space or tab), split
/// into its statements, and in each `import a.b as c, d`, `from a.b
/// import c`, `__import__('a')`, `importlib.import_module('a')`.
pub fn of_text(text: &str) -> HashSet<Vec<u8>> {
    let mut out = HashSet::new();
    for line in python_lines(text) {
        if !(line.starts_with("import ") || line.starts_with("import\t")) {
            continue;
        }
        for stmt in line.split(';') {
            let s = stmt.trim();
            if let Some(rest) = s.strip_prefix("import") {
                if rest.starts_with([' ', '\t']) {
                    for part in rest.split(',') {
                        push_dotted(part.split_whitespace().next(), &mut out);
                    }
                }
            } else if let Some(rest) = s.strip_prefix("from")
                && rest.starts_with([' ', '\t'])
            {
                push_dotted(rest.split_whitespace().next(), &mut out);
            }
            for call in ["__import__(", "import_module("] {
                let mut at = s;
                while let Some(i) = at.find(call) {
                    at = &at[i + call.len()..];
                    let q = at.trim_start();
                    if let Some(open) = q.chars().next().filter(|c| *c == '\'' || *c == '"') {
                        let body = &q[1..];
                        if let Some(end) = body.find(open) {
                            push_dotted(Some(&body[..end]), &mut out);
                        }
                    }
                }
            }
        }
    }
    out
}

fn push_dotted(word: Option<&str>, out: &mut HashSet<Vec<u8>>) {
    let Some(w) = word else { return };
    let top = w.split('.').next().unwrap_or(w);
    let top = top.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    if !top.is_empty() {
        out.insert(top.as_bytes().to_vec());
    }
}

/// Directories read, by path and change time, so that a check of many
/// changes in one directory (a layer's `pip install`) reads it once.
type Cache = Vec<(PathBuf, i64, i64, Imported)>;
static CACHE: Mutex<Cache> = Mutex::new(Vec::new());

/// What the `.pth` files of the directory `dir` import (bounded).
pub fn of_dir(dir: &Path) -> Imported {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(dir) else {
        return Imported::default();
    };
    let key = (dir.to_path_buf(), m.mtime(), m.mtime_nsec());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, _, i)) = cache
        .iter()
        .find(|(p, s, n, _)| *p == key.0 && *s == key.1 && *n == key.2)
    {
        return i.clone();
    }
    let found = read_dir(dir);
    if cache.len() >= 64 {
        cache.remove(0);
    }
    cache.push((key.0, key.1, key.2, found.clone()));
    found
}

fn read_dir(dir: &Path) -> Imported {
    let mut out = Imported::default();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut n = 0usize;
    for e in rd.flatten() {
        if !e.file_name().as_encoded_bytes().ends_with(b".pth") {
            continue;
        }
        n += 1;
        if n > MAX_PTH {
            out.all = true;
            return out;
        }
        match crate::protect::small_file::read_bytes(&e.path()) {
            Ok(Some(b)) => {
                for text in decodings(&b) {
                    out.names.extend(of_text(&text));
                }
            }
            // Too large to read, or unreadable: may import anything.
            Ok(None) | Err(_) => {
                if e.path().is_file() {
                    out.all = true;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_of_import_lines_are_named() {
        let names = of_text(
            "/abs/src\nimport _virtualenv\n\
             import __editable___app_1_0_finder; __editable___app_1_0_finder.install()\n\
             import sys, os.path as p; from cov_hook.x import y; __import__('nsx').z\n\
             import\tatab\r\n# import no\n  import indented_is_a_path\n\
             import importlib; importlib.import_module(\"deep.mod\")\n",
        );
        for m in [
            "_virtualenv",
            "__editable___app_1_0_finder",
            "sys",
            "os",
            "cov_hook",
            "nsx",
            "atab",
            "importlib",
            "deep",
        ] {
            assert!(names.contains(m.as_bytes()), "{m}: {names:?}");
        }
        for m in ["no", "indented_is_a_path", "abs", "src", "p", "y"] {
            assert!(!names.contains(m.as_bytes()), "{m}: {names:?}");
        }
        let i = Imported { names, all: false };
        assert!(i.has_entry(b"_virtualenv.py"));
        assert!(i.has_entry(b"nsx"));
        assert!(i.has_entry(b"cov_hook.cpython-311-x86_64-linux-gnu.so"));
        assert!(!i.has_entry(b"requests"));
        assert!(!i.has_entry(b"nsx-1.0.dist-info"));
    }
}
