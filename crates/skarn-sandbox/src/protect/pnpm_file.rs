//! The pnpmfile a workspace's configuration names (atk22k F18): pnpm
//! loads `.pnpmfile.cjs` / `.pnpmfile.mjs` as code on every install
//! (persistence entries), or the file the `pnpmfile` setting names
//! instead: `pnpmfile:` (and `globalPnpmfile:`) of `pnpm-workspace.yaml`,
//! `pnpmfile=` (and `global-pnpmfile=`) of `.npmrc`. The named file is
//! kept read-only like the file naming it ([`named`]); and since
//! `pnpm-workspace.yaml` is the project's file pnpm itself writes (its
//! catalogs, `pnpm approve-builds`), a run may change it but not its
//! settings by which pnpm runs or loads code ([`code_settings`], compared
//! by [`crate::protect::package_json`]).

use std::path::{Path, PathBuf};

/// Bytes read of one configuration file.
const MAX_BYTES: u64 = 256 << 10;

/// `pnpm-workspace.yaml` settings by which pnpm runs or loads code, or
/// lets packages run theirs, compared without case, `-` or `_`: the
/// pnpmfiles, the packages whose pnpmfiles are loaded
/// (`configDependencies`), the shell and node options of scripts, which
/// packages may run build scripts, and the runtime scripts run under.
const CODE_SETTINGS: &[&str] = &[
    "pnpmfile",
    "globalpnpmfile",
    "ignorepnpmfile",
    "configdependencies",
    "scriptshell",
    "shellemulator",
    "nodeoptions",
    "onlybuiltdependencies",
    "onlybuiltdependenciesfile",
    "neverbuiltdependencies",
    "ignoredbuiltdependencies",
    "dangerouslyallowallbuilds",
    "allowbuilds",
    "allowedbuilds",
    "strictdepbuilds",
    "ignorescripts",
    "enableprepostscripts",
    "unsafeperm",
    "executionenv",
    "usenodeversion",
    "nodeversion",
    "npmpath",
    "git",
    "gitshallowhosts",
];

fn normal(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The key of a top-level YAML line `l` (quotes removed), or `Err` when
/// the line is one no reading here follows (a flow mapping, a complex
/// key, an anchor, an alias, a tag, a merge key, an escape).
fn top_key(l: &str) -> Result<Option<String>, ()> {
    if l.starts_with("---") || l.starts_with("...") {
        return Ok(None);
    }
    if l.starts_with(['?', '{', '[', '%', '&', '*', '!', '<', '|', '>', '@', '`']) {
        return Err(());
    }
    let (k, _) = match l.split_once(':') {
        Some(x) => x,
        None => return Ok(None),
    };
    let k = k.trim().trim_matches(['"', '\'']);
    if k.contains('\\') {
        return Err(());
    }
    Ok(Some(k.to_string()))
}

/// The lines of `text` (a `pnpm-workspace.yaml`) that set one of
/// [`CODE_SETTINGS`], each setting's whole block, in order: `Ok(None)`
/// when none is set, `Err` when the text holds what this reading does
/// not follow where a setting could hide (longer than read, an alias
/// inside a setting's block, a line [`top_key`] refuses).
pub(crate) fn code_settings(bytes: &[u8]) -> Result<Option<String>, ()> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(());
    }
    let text = std::str::from_utf8(bytes).map_err(|_| ())?;
    let mut out = String::new();
    let mut inside = false;
    for l in text.lines() {
        let top = !l.starts_with([' ', '\t', '#', '-']) && !l.trim().is_empty();
        if top {
            inside = top_key(l)?.is_some_and(|k| CODE_SETTINGS.contains(&normal(&k).as_str()));
        }
        if inside && !l.trim_start().starts_with('#') {
            if l.contains('*') || l.contains('&') {
                return Err(());
            }
            out.push_str(l.trim_end());
            out.push('\n');
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// A scalar as written after a key (quotes and a trailing comment off).
fn scalar(v: &str) -> Option<String> {
    let v = v.split(" #").next().unwrap_or("").trim();
    let v = v.trim_matches(['"', '\'']).trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The files the `pnpmfile` / `globalPnpmfile` settings of the
/// `pnpm-workspace.yaml` text `text` name (a scalar, or a list).
fn from_workspace_yaml(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if !l.starts_with([' ', '\t', '#', '-']) && !l.trim().is_empty() {
            inside = false;
            if let Some((k, v)) = l.split_once(':') {
                let k = normal(k.trim().trim_matches(['"', '\'']));
                if k == "pnpmfile" || k == "globalpnpmfile" {
                    inside = true;
                    let v = v.trim().trim_start_matches('[').trim_end_matches(']');
                    out.extend(v.split(',').filter_map(scalar));
                }
            }
        } else if inside && let Some(item) = l.trim_start().strip_prefix('-') {
            out.extend(scalar(item));
        }
    }
    out
}

/// The files `pnpmfile=` / `global-pnpmfile=` of the `.npmrc` text name.
fn from_npmrc(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            let k = normal(k.trim().trim_matches(['"', '\'']));
            (k == "pnpmfile" || k == "globalpnpmfile")
                .then(|| scalar(v))
                .flatten()
        })
        .collect()
}

/// The files `ws/pnpm-workspace.yaml` and `ws/.npmrc` name as pnpmfiles,
/// resolved against `ws` (where pnpm resolves them).
pub fn named(ws: &Path) -> Vec<PathBuf> {
    let read = |name: &str| -> Option<String> {
        use std::io::Read;
        let f = std::fs::File::open(ws.join(name)).ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        let mut b = Vec::new();
        f.take(MAX_BYTES).read_to_end(&mut b).ok()?;
        Some(String::from_utf8_lossy(&b).into_owned())
    };
    let mut out: Vec<PathBuf> = Vec::new();
    let words = read("pnpm-workspace.yaml")
        .map(|t| from_workspace_yaml(&t))
        .unwrap_or_default()
        .into_iter()
        .chain(read(".npmrc").map(|t| from_npmrc(&t)).unwrap_or_default());
    // A `~` path lies in the home, judged with the home's files.
    for w in words.filter(|w| !w.starts_with('~')) {
        let p = ws.join(w);
        if p != ws && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
#[path = "pnpm_file_tests.rs"]
mod tests;
