//! The credential files inside the toolchain trees every run may read
//! (atk22l F14). The presets grant whole version managers' and
//! environments' trees (`~/.nvm`, `~/.pyenv`, `~/miniconda3`, a virtualenv,
//! the installations under `/opt`), and the tools keep configuration with
//! credentials at their own places inside them:
//! - npm's global configuration `<node prefix>/etc/npmrc` (nvm's, volta's,
//!   fnm's node images; `/usr/local/etc/npmrc` and `/usr/etc/npmrc` for a
//!   node installed there), where `npm config set --global` and
//!   `npm login --location=global` put a registry token;
//! - pip's site file `<python prefix>/pip.conf` (`pip.ini`): a pyenv
//!   version's, a virtualenv's, a conda environment's;
//! - conda's `<root or environment>/.condarc`, `condarc` and `condarc.d/`;
//! - `.npmrc`, `.yarnrc`, `.yarnrc.yml` kept at a prefix;
//! - files that hold nothing but credentials: `.pypirc`, cargo's
//!   `credentials(.toml)` (in a cargo home granted as a toolchain or
//!   lying in one), `.netrc`, `.git-credentials`.
//!
//! Each such file is hidden in every run when it holds a credential (a
//! URL with user info, a token-shaped word, a key named like one, npm's
//! `//host/:` settings) or cannot be judged (unreadable, too big); one
//! without any (a mirror's index URL, channel names) stays readable, so
//! the tool keeps its settings. The credential-only files are hidden
//! whatever they hold. npm and pip read a hidden (unreadable) file as no
//! settings.

use std::path::{Path, PathBuf};

use super::credential_text::carries_credential;
use crate::policy::Policy;

/// Deepest directory looked into below a root (`tools/image/node/X/etc`
/// of volta's tree is at depth 5).
const MAX_DEPTH: usize = 5;

/// Most directory entries looked at over all roots.
const MAX_ENTRIES: usize = 40_000;

/// Largest file judged by its text; a bigger one is hidden.
const MAX_FILE: u64 = 1 << 20;

/// Directories holding installed code, never a tool's configuration:
/// not descended into.
const SKIP_DIRS: &[&str] = &[
    "lib",
    "lib64",
    "Lib",
    "include",
    "share",
    "man",
    "node_modules",
    "site-packages",
    "pkgs",
    "conda-meta",
    "bin",
    "Scripts",
    "sbin",
    "libexec",
    "src",
    "registry",
    "git",
    ".git",
    "cache",
    ".cache",
    "test",
    "tests",
    "doc",
    "docs",
];

/// Files that hold credentials only: hidden whatever they hold.
const CREDENTIAL_ONLY: &[&str] = &[
    ".pypirc",
    "credentials",
    "credentials.toml",
    ".netrc",
    "_netrc",
    ".git-credentials",
];

/// Configuration files tools may keep credentials in: hidden when they do.
const CONFIGS: &[&str] = &[
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "pip.conf",
    "pip.ini",
    ".condarc",
    "condarc",
];

/// Fixed node prefixes' global npm configuration in the system's
/// directories (every run reads `/usr`).
const SYSTEM_FILES: &[&str] = &["/usr/local/etc/npmrc", "/usr/etc/npmrc"];

/// What [`find`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// The files to hide (each under the name found and, for a link, its
    /// target's).
    pub files: Vec<PathBuf>,
    /// The walk stopped at [`MAX_ENTRIES`]: a note for the report.
    pub truncated: bool,
}

/// Whether `p` (a file of a toolchain tree) is one a tool reads
/// credentials from: `Some(true)` credential-only, `Some(false)` a
/// configuration file.
fn kind(p: &Path) -> Option<bool> {
    let name = p.file_name()?.to_str()?;
    let parent = p
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    if CREDENTIAL_ONLY.contains(&name) {
        return Some(true);
    }
    if CONFIGS.contains(&name) || (name == "npmrc" && parent == Some("etc")) {
        return Some(false);
    }
    (parent == Some("condarc.d") && (name.ends_with(".yml") || name.ends_with(".yaml")))
        .then_some(false)
}

/// Key names that make a setting a credential.
const SECRET_WORDS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "_auth",
    "auth",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "keyfile",
];

/// Whether configuration `text` (npm's ini, pip's ini, conda's or yarn's
/// YAML) holds a credential.
fn holds_credential(text: &str) -> bool {
    text.lines().any(|line| {
        let t = line.trim();
        if t.is_empty() || t.starts_with(['#', ';']) {
            return false;
        }
        // npm's per-registry settings (`//host/path/:_authToken=...`).
        if t.starts_with("//") || t.trim_start_matches(['"', '\'']).starts_with("//") {
            return true;
        }
        let key = t
            .split(['=', ':'])
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'', '-', ' '])
            .to_ascii_lowercase();
        SECRET_WORDS.iter().any(|w| key.contains(w)) || carries_credential(t)
    })
}

/// Whether file `p` is hidden: credential-only, or a configuration file
/// holding a credential or not judged.
fn hidden(p: &Path, credential_only: bool) -> bool {
    if credential_only {
        return true;
    }
    match std::fs::metadata(p) {
        Ok(md) if md.is_file() && md.len() <= MAX_FILE => std::fs::read(p)
            .map(|b| holds_credential(&String::from_utf8_lossy(&b)))
            .unwrap_or(true),
        Ok(md) => md.is_file(),
        Err(_) => false,
    }
}

/// The walk of the roots.
struct Walk {
    entries: usize,
    found: Found,
}

impl Walk {
    fn push(&mut self, p: &Path) {
        let mut add = |q: PathBuf| {
            if !self.found.files.contains(&q) {
                self.found.files.push(q);
            }
        };
        add(p.to_path_buf());
        if let Ok(real) = std::fs::canonicalize(p)
            && real != p
        {
            add(real);
        }
    }

    fn file(&mut self, p: &Path) {
        if let Some(only) = kind(p)
            && hidden(p, only)
        {
            self.push(p);
        }
    }

    fn root(&mut self, root: &Path) {
        let mut stack = vec![(root.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                self.entries += 1;
                if self.entries > MAX_ENTRIES {
                    self.found.truncated = true;
                    return;
                }
                let Ok(ft) = e.file_type() else { continue };
                let path = e.path();
                let name = e.file_name();
                if ft.is_dir() {
                    let skip = name.to_str().is_none_or(|n| SKIP_DIRS.contains(&n));
                    if depth < MAX_DEPTH && (!skip || name == "etc") {
                        stack.push((path, depth + 1));
                    }
                } else if ft.is_file() || ft.is_symlink() {
                    self.file(&path);
                }
            }
        }
    }
}

/// The roots walked for `policy`: its read+exec grants outside the
/// workspace other than the system's whole directories, each installation
/// directly under `/opt`, and the caller's cargo home.
fn roots(policy: &Policy, home: Option<&Path>) -> Vec<PathBuf> {
    let system = crate::policy::SYSTEM_EXEC_DIRS;
    let mut out: Vec<PathBuf> = Vec::new();
    for g in &policy.exec {
        let p = &g.path;
        if p.starts_with(&policy.workspace) || system.iter().any(|s| p == Path::new(s)) {
            if p == Path::new("/opt")
                && let Ok(rd) = std::fs::read_dir(p)
            {
                out.extend(rd.flatten().map(|e| e.path()));
            }
            continue;
        }
        out.push(p.clone());
    }
    if let Some(h) = home {
        out.push(super::cargo_config::cargo_home(h));
    }
    out.sort();
    out.dedup();
    // A root the walk of another reaches is walked with it.
    let all = out.clone();
    out.retain(|r| !all.iter().any(|o| o != r && reaches(o, r)));
    out
}

/// Whether the walk of `root` goes into directory `dir`.
fn reaches(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<_> = rel.components().collect();
    parts.len() <= MAX_DEPTH
        && parts.iter().all(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|n| !SKIP_DIRS.contains(&n))
        })
}

/// The credential files of `policy`'s toolchain trees (see the module
/// text), for the caller's home `home`.
pub fn find(policy: &Policy, home: Option<&Path>) -> Found {
    let mut w = Walk {
        entries: 0,
        found: Found::default(),
    };
    for r in roots(policy, home) {
        w.root(&r);
    }
    for f in SYSTEM_FILES {
        let p = Path::new(f);
        if std::fs::symlink_metadata(p).is_ok() {
            w.file(p);
        }
    }
    w.found
}

/// Hide what [`find`] finds in every run of `policy`: added to its
/// `deny_read` (said in `--report` with this source). Returns the note
/// for a walk cut short.
pub fn hide(policy: &mut Policy, home: Option<&Path>) -> Option<String> {
    let found = find(policy, home);
    for p in found.files {
        if !policy.deny_read.iter().any(|g| g.path == p) {
            policy.deny_read.push(crate::policy::Grant::new(
                p,
                "default (a toolchain's credential file)",
            ));
        }
    }
    found.truncated.then(|| {
        format!(
            "more than {MAX_ENTRIES} entries in the toolchain directories: the credential \
             files of the rest are not looked for"
        )
    })
}

#[cfg(test)]
#[path = "toolchain_files_tests.rs"]
mod tests;
