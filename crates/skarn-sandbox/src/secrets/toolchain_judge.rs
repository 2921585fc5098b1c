//! Whether a file of a toolchain tree or of the system's configuration is
//! one a tool reads credentials from, and whether it is hidden: the
//! credential-only files always, a configuration file when it holds a
//! credential or cannot be judged (unreadable, too big). Shared by the
//! walk of the toolchain trees and the look-up of the system's fixed
//! places ([`super`]).

use std::path::Path;

use crate::secrets::credential_text::carries_credential;

/// Largest file judged by its text; a bigger one is hidden.
const MAX_FILE: u64 = 1 << 20;

/// Files that hold credentials only: hidden whatever they hold.
const CREDENTIAL_ONLY: &[&str] = &[
    ".pypirc",
    "credentials",
    "credentials.toml",
    ".netrc",
    "_netrc",
    ".git-credentials",
    "settings-security.xml",
    "auth.json",
    "auth.conf",
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
    ".mambarc",
    "uv.toml",
    "gitconfig",
    "settings.xml",
    "gradle.properties",
    "gemrc",
    ".gemrc",
];

/// Directories whose `config` file is Bundler's (an application's
/// `.bundle`, the ruby images' `BUNDLE_APP_CONFIG`, `/usr/local/bundle`).
const BUNDLER_DIRS: &[&str] = &[".bundle", "bundle"];

/// Whether `p` is a file a tool reads credentials from: `Some(true)`
/// credential-only, `Some(false)` a configuration file.
pub(in crate::secrets) fn kind(p: &Path) -> Option<bool> {
    let name = p.file_name()?.to_str()?;
    let parent = p
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    if CREDENTIAL_ONLY.contains(&name) || parent == Some("auth.conf.d") {
        return Some(true);
    }
    if CONFIGS.contains(&name)
        || (name == "npmrc" && parent == Some("etc"))
        || (name == "config" && parent.is_some_and(|d| BUNDLER_DIRS.contains(&d)))
    {
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
    "passphrase",
    "_auth",
    "auth",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "keyfile",
    "privatekey",
];

/// Bundler's settings whose names hold `__` but no host: every other
/// `BUNDLE_<HOST>` key (`BUNDLE_GEMS__EXAMPLE__COM`) holds a gem
/// server's credential, whatever its value looks like (a bare token).
const BUNDLER_NOT_HOSTS: &[&str] = &["bundle_build__", "bundle_mirror__", "bundle_local__"];

/// Whether settings key `key` (lower case) is one of Bundler's per-host
/// credentials.
fn bundler_host_key(key: &str) -> bool {
    key.starts_with("bundle_")
        && key.contains("__")
        && !BUNDLER_NOT_HOSTS.iter().any(|k| key.starts_with(k))
}

/// Words of an HTTP header that carries a credential.
const HEADER_WORDS: &[&str] = &["authorization", "bearer ", "private-token", "x-api-key"];

/// `text` without XML comments (`<!-- ... -->`: Maven's shipped
/// `settings.xml` holds commented examples with passwords).
fn without_xml_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i..].find("-->") {
            Some(j) => rest = &rest[i + j + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Whether configuration `text` (npm's or pip's ini, git's configuration,
/// conda's or yarn's YAML, Maven's XML, Java properties) holds a
/// credential.
pub(in crate::secrets) fn holds_credential(text: &str) -> bool {
    let text = without_xml_comments(text);
    text.lines().any(|line| {
        let t = line.trim();
        if t.is_empty() || t.starts_with(['#', ';']) {
            return false;
        }
        // npm's per-registry settings (`//host/path/:_authToken=...`).
        if t.starts_with("//") || t.trim_start_matches(['"', '\'']).starts_with("//") {
            return true;
        }
        // A section header (`[credential]`, `[url "https://u:p@h/"]`):
        // only what it names is judged.
        if t.starts_with('[') {
            return carries_credential(t);
        }
        // A header carrying a credential (git's `http.extraHeader`,
        // conda's `headers:`), whatever the setting's name.
        let lower = t.to_ascii_lowercase();
        if HEADER_WORDS.iter().any(|w| lower.contains(w)) {
            return true;
        }
        let key = t
            .split(['=', ':'])
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'', '-', ' '])
            .to_ascii_lowercase();
        SECRET_WORDS.iter().any(|w| key.contains(w))
            || bundler_host_key(&key)
            || carries_credential(t)
    })
}

/// Whether file `p` is hidden: credential-only, or a configuration file
/// holding a credential or not judged.
pub(in crate::secrets) fn hidden(p: &Path, credential_only: bool) -> bool {
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
