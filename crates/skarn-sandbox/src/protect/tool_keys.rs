//! Configuration host programs load as code, or that chooses what they
//! install, kept as keys of an ordinary project file instead of a file of
//! its own (atk22l F3, F4, F9): the same settings as the files of
//! [`crate::protect::persistence_lint`], which are refused when new or
//! changed, but these files must stay writable (npm, uv and poetry write
//! them), so only those keys are compared.
//!
//! - `package.json`: `"prettier"` (a shared configuration module by name
//!   or path, plugins), `"eslintConfig"`, `"stylelint"`, `"babel"`,
//!   `"xo"`, `"standard"`, `"remarkConfig"` (parsers and plugins by path)
//!   and `config.commitizen` (the adapter module): the editor extensions
//!   read them as they read `.prettierrc` and the others.
//! - `pyproject.toml`: pylint's `init-hook` and `load-plugins`, mypy's
//!   `plugins`, sqlfluff's `library_path`, and the indexes of uv
//!   (`index-url`, `[[tool.uv.index]]`, `find-links`, `no-index`, the
//!   mirrors, ...), poetry and pdm (`source`).
//! - `setup.cfg`, `tox.ini`: the same pylint, mypy and sqlfluff keys, and
//!   flake8's `local-plugins` sections.
//!
//! Not inside installed packages (`node_modules`, `site-packages`): the
//! tools do not read them there, and packages ship these keys.

use std::collections::BTreeSet;
use std::path::Path;

/// The `package.json` keys an editor-run tool reads as its configuration.
const PACKAGE_KEYS: &[&str] = &[
    "prettier",
    "eslintConfig",
    "stylelint",
    "babel",
    "xo",
    "standard",
    "remarkConfig",
];

/// Keys of the `pyproject.toml` tables (by tool) that name code or
/// indexes, spelled with `-` (`_` is read the same).
const TOML_KEYS: &[(&str, &[&str])] = &[
    ("pylint", &["init-hook", "load-plugins"]),
    ("mypy", &["plugins"]),
    ("sqlfluff", &["library-path"]),
    (
        "uv",
        &[
            "index-url",
            "extra-index-url",
            "index",
            "find-links",
            "no-index",
            "index-strategy",
            "keyring-provider",
            "python-install-mirror",
            "pypy-install-mirror",
            "python-downloads-json-url",
            "cache-dir",
        ],
    ),
    ("poetry", &["source"]),
    ("pdm", &["source"]),
];

/// Words of a `setup.cfg` / `tox.ini` line that make it judged.
const INI_WORDS: &[&str] = &["init-hook", "plugins", "library-path"];

/// The name of the file at workspace names `n` when it is judged here
/// (one of the names above, not inside an installed package).
pub fn judged_at<'a>(n: &[&'a std::ffi::OsStr]) -> Option<&'a str> {
    let (last, dirs) = n.split_last()?;
    let name = last.to_str()?;
    let judged = matches!(
        name,
        "package.json" | "pyproject.toml" | "setup.cfg" | "tox.ini"
    );
    let installed = dirs
        .iter()
        .any(|d| *d == "node_modules" || *d == "site-packages" || *d == "dist-packages");
    (judged && !installed).then_some(name)
}

fn norm(s: &str) -> String {
    s.to_ascii_lowercase().replace('_', "-")
}

/// The judged settings of a file named `name` with text `bytes`, each as
/// one string; `Err` when the text cannot be read as its format.
fn settings(name: &str, bytes: &[u8]) -> Result<BTreeSet<String>, ()> {
    match name {
        "package.json" => package(bytes),
        "pyproject.toml" => pyproject(bytes),
        _ => Ok(ini(&String::from_utf8_lossy(bytes))),
    }
}

fn package(bytes: &[u8]) -> Result<BTreeSet<String>, ()> {
    let v = serde_json::from_slice::<serde_json::Value>(bytes).map_err(|_| ())?;
    let mut out = BTreeSet::new();
    for k in PACKAGE_KEYS {
        if let Some(x) = v.get(*k) {
            out.insert(format!("{k}={x}"));
        }
    }
    if let Some(x) = v.get("config").and_then(|c| c.get("commitizen")) {
        out.insert(format!("config.commitizen={x}"));
    }
    Ok(out)
}

fn pyproject(bytes: &[u8]) -> Result<BTreeSet<String>, ()> {
    let text = std::str::from_utf8(bytes).map_err(|_| ())?;
    let doc = text.parse::<toml::Table>().map_err(|_| ())?;
    let mut out = BTreeSet::new();
    let Some(tool) = doc.get("tool").and_then(|t| t.as_table()) else {
        return Ok(out);
    };
    for (name, keys) in TOML_KEYS {
        if let Some(t) = tool.get(*name) {
            collect(t, &format!("tool.{name}"), keys, &mut out);
        }
    }
    Ok(out)
}

/// Every key of `keys` at any depth of `v` (pylint's options sit in
/// `[tool.pylint.main]`, `[tool.pylint.MASTER]`, ...; uv's in `pip` too).
fn collect(v: &toml::Value, at: &str, keys: &[&str], out: &mut BTreeSet<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                let here = format!("{at}.{}", norm(k));
                if keys.contains(&norm(k).as_str()) {
                    out.insert(format!("{here}={x}"));
                } else {
                    collect(x, &here, keys, out);
                }
            }
        }
        toml::Value::Array(a) => {
            for x in a {
                collect(x, at, keys, out);
            }
        }
        _ => {}
    }
}

/// The lines of an INI file (Python's configparser) that set a judged key,
/// with their continuation lines: every line holding one of [`INI_WORDS`],
/// and every line of a `local-plugins` section. By words rather than by
/// section, so a spelling of the section this reader misses is still
/// judged.
fn ini(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut section, mut cont) = (String::new(), false);
    for line in text.lines() {
        let t = norm(line.trim());
        if t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if t.starts_with('[') && !indented {
            section = t.clone();
            cont = false;
            continue;
        }
        if indented || t.is_empty() {
            if cont && !t.is_empty() {
                out.insert(format!("{section} +{t}"));
            }
            continue;
        }
        cont = section.contains("local-plugins") || INI_WORDS.iter().any(|w| t.contains(w));
        if cont {
            out.insert(format!("{section} {t}"));
        }
    }
    out
}

/// Why the run's file `new` (the layer's copy, at workspace names `n`)
/// sets other judged keys than the host's `old` (missing when new).
pub fn layer_change(n: &[&std::ffi::OsStr], new: &Path, old: &Path) -> Option<String> {
    let name = judged_at(n)?;
    let read = |p: &Path| crate::protect::small_file::read_bytes(p).map_err(|_| ());
    let new = read(new).map(Option::unwrap_or_default);
    let old = read(old);
    (!same_settings(name, new.as_deref(), old.as_ref().map(Option::as_deref))).then(|| why(name))
}

/// Whether the text `new` of a file named `name` sets the same judged
/// settings as `old` (`Ok(None)`: there was none); `Err`: unreadable as
/// a file (a link, too large).
pub(crate) fn same_settings(
    name: &str,
    new: Result<&[u8], &()>,
    old: Result<Option<&[u8]>, &()>,
) -> bool {
    let Ok(new) = new else { return false };
    let new_set = settings(name, new);
    let old_set = match old {
        Ok(None) => Ok(BTreeSet::new()),
        Ok(Some(b)) => settings(name, b),
        Err(()) => Err(()),
    };
    match (&new_set, &old_set) {
        (Ok(a), Ok(b)) => a == b,
        // Unreadable as its format: the host's tool may still read it.
        (Err(()), _) => false,
        (Ok(a), Err(())) => a.is_empty(),
    }
}

/// Why a file named `name` was refused.
pub(crate) fn why(name: &str) -> String {
    format!(
        "a {name} with other settings that make host tools load code or choose their \
         package index (prettier, eslintConfig, pylint's init-hook, mypy's plugins, uv's \
         index, ...: an editor or the host's next install runs what they name)"
    )
}

#[cfg(test)]
#[path = "tool_keys_tests.rs"]
mod tests;
