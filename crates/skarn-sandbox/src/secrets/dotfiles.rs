//! Sanitised copies of the user's dotfiles for a sandbox's private home:
//! git, npm and pip settings that do not run code and hold no credential.
//! Pure functions of the text; each works from an allow-list, so a key it
//! does not know is dropped. Includes are dropped, not inlined (they name
//! host files that the private home does not have).

use crate::protect::git::gitconfig::{self, Item};
use crate::secrets::credential_text::{carries_credential, url_has_credentials};

/// `url` without its userinfo (`https://tok@h/x` -> `https://h/x`).
pub(crate) fn strip_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

fn keep_git(it: &Item) -> bool {
    let v = it.value.as_deref().unwrap_or("");
    let sub = it.sub.as_deref();
    // A credential anywhere (an alias's URL, a token in a path) drops it.
    if carries_credential(v) || sub.is_some_and(carries_credential) {
        return false;
    }
    match (it.section.as_str(), sub, it.name.as_str()) {
        ("user", None, "name" | "email") => true,
        (
            "core",
            None,
            "autocrlf" | "eol" | "safecrlf" | "filemode" | "ignorecase" | "precomposeunicode"
            | "symlinks" | "whitespace" | "quotepath" | "excludesfile" | "attributesfile"
            | "compression" | "bigfilethreshold" | "checkstat" | "trustctime" | "longpaths",
        ) => true,
        ("init", None, "defaultbranch") => true,
        ("safe", None, "directory") => true,
        ("url", Some(base), "insteadof" | "pushinsteadof") => {
            !url_has_credentials(base) && !url_has_credentials(v)
        }
        ("http", _, "sslcainfo" | "sslcapath" | "sslverify" | "sslversion" | "postbuffer") => {
            sub.is_none_or(|u| !url_has_credentials(u))
        }
        ("http" | "https", _, "proxy") => {
            sub.is_none_or(|u| !url_has_credentials(u)) && !url_has_credentials(v)
        }
        ("pull", None, "rebase" | "ff") => true,
        ("push", None, "default" | "autosetupremote" | "followtags") => true,
        ("merge", None, "ff" | "conflictstyle") => true,
        (
            "diff",
            None,
            "algorithm" | "renames" | "colormoved" | "mnemonicprefix" | "noprefix" | "context",
        ) => true,
        ("fetch", None, "prune" | "prunetags" | "parallel") => true,
        ("rebase", None, "autosquash" | "autostash" | "updaterefs") => true,
        ("branch", None, "sort" | "autosetupmerge" | "autosetuprebase") => true,
        ("tag", None, "sort") => true,
        ("rerere", None, "enabled") => true,
        ("column", None, "ui") => true,
        ("color", _, _) => true,
        ("status", None, "short" | "branch" | "showuntrackedfiles") => true,
        ("log", None, "date" | "decorate" | "follow") => true,
        // Git-only aliases; `!` runs a shell command, a leading option can
        // set `-c core.pager=...`.
        ("alias", None, _) => {
            let t = v.trim_start();
            !t.starts_with('!') && !t.starts_with('-') && !t.contains(" -c")
        }
        _ => false,
    }
}

/// A git configuration keeping identity, safe core settings,
/// `init.defaultBranch`, `safe.directory`, credential-free `url.*.insteadOf`,
/// TLS trust settings and non-command pull/push/merge/diff settings.
/// Dropped (by not being allowed): `credential.*`, `core.fsmonitor`,
/// `core.hooksPath`, `core.sshCommand`, `core.pager`, `core.editor`,
/// shell aliases, `filter.*`, diff and merge drivers, `include`/`includeIf`,
/// `http.extraHeader`, and any URL with credentials.
pub fn sanitized_gitconfig(text: &str) -> String {
    let kept: Vec<Item> = gitconfig::parse(text)
        .items
        .into_iter()
        .filter(keep_git)
        .collect();
    gitconfig::write(&kept)
}

/// Split an ini-style `key = value` line.
fn kv(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once('=')?;
    Some((k.trim(), v.trim()))
}

fn is_comment(t: &str) -> bool {
    t.is_empty() || t.starts_with('#') || t.starts_with(';')
}

const NPM_KEEP: &[&str] = &[
    "registry",
    "cafile",
    "ca",
    "ca[]",
    "strict-ssl",
    "proxy",
    "https-proxy",
    "http-proxy",
    "noproxy",
    "no-proxy",
    "email",
    "save-exact",
    "save-prefix",
    "engine-strict",
    "fund",
    "audit",
    "progress",
    "loglevel",
    "fetch-retries",
    "fetch-timeout",
    "maxsockets",
    "legacy-peer-deps",
    "package-lock",
    "lockfile-version",
    "init-author-name",
    "init-author-email",
    "init-license",
    "init-version",
    "color",
    "unicode",
    "update-notifier",
    "ignore-scripts",
    "offline",
    "prefer-offline",
    "prefer-online",
];

/// An `.npmrc` keeping the registry (also per `@scope`), TLS trust
/// (`cafile`, `ca`, `strict-ssl`), proxies (credentials stripped) and
/// harmless behaviour settings. Dropped: `_auth`, `_authToken`,
/// `_password`, `username`, `password`, `certfile`, `keyfile`, every
/// `//host/:...` scoped setting, anything naming a program or script
/// (`script-shell`, `node-options`, `init-module`, ...) and unknown keys.
pub fn sanitized_npmrc(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if is_comment(t) {
            continue;
        }
        let Some((k, v)) = kv(t) else { continue };
        if carries_credential(v) && !(k.contains("registry") || k.contains("proxy")) {
            continue;
        }
        // A scope is a package-name part (`@my-org:registry`): anything
        // else in that place (a pasted token, say) is not kept.
        let scoped_registry = k
            .strip_prefix('@')
            .and_then(|r| r.strip_suffix(":registry"))
            .is_some_and(|scope| {
                !scope.is_empty()
                    && scope.len() <= 214
                    && scope.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._~".contains(&b)
                    })
            });
        if !(NPM_KEEP.contains(&k) || scoped_registry) || k.starts_with("//") {
            continue;
        }
        let v = if k.contains("registry") || k.contains("proxy") {
            strip_userinfo(v)
        } else {
            v.to_string()
        };
        if carries_credential(&v) {
            continue;
        }
        out.push_str(&format!("{k}={v}\n"));
    }
    out
}

const PIP_KEEP: &[&str] = &[
    "index-url",
    "extra-index-url",
    "find-links",
    "trusted-host",
    "cert",
    "timeout",
    "default-timeout",
    "retries",
    "proxy",
    "no-index",
    "disable-pip-version-check",
    "require-virtualenv",
    "prefer-binary",
    "only-binary",
    "no-binary",
    "pre",
    "progress-bar",
    "no-cache-dir",
];

/// The sections pip reads: `[global]` and one per pip command (`pip help`).
const PIP_SECTIONS: &[&str] = &[
    "global",
    "install",
    "download",
    "uninstall",
    "freeze",
    "inspect",
    "list",
    "show",
    "check",
    "config",
    "search",
    "cache",
    "index",
    "wheel",
    "hash",
    "completion",
    "debug",
    "help",
    "lock",
];

/// A `pip.conf` keeping index URLs (credentials stripped), trusted hosts,
/// the CA bundle, timeouts and similar settings. Dropped: `client-cert`,
/// keyring settings and unknown keys. Multi-line values are kept, each
/// URL stripped of its credentials.
pub fn sanitized_pipconf(text: &str) -> String {
    let mut out = String::new();
    let mut keep_cont = false;
    // Keys before any header: pip's reader refuses such a file.
    let mut in_known = false;
    for line in text.lines() {
        let t = line.trim();
        let continuation = line.starts_with([' ', '\t']) && !t.is_empty();
        if continuation {
            let kept: Vec<String> = t
                .split_whitespace()
                .map(strip_userinfo)
                .filter(|w| !carries_credential(w))
                .collect();
            if keep_cont && !is_comment(t) && !kept.is_empty() {
                out.push_str(&format!("    {}\n", kept.join(" ")));
            }
            continue;
        }
        keep_cont = false;
        if is_comment(t) {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            // pip reads `[global]` and `[<command>]`; any other header
            // (one that could hold a pasted URL or token) is dropped with
            // its keys, which pip ignores anyway.
            in_known = PIP_SECTIONS.contains(&&t[1..t.len() - 1]);
            if in_known {
                out.push_str(t);
                out.push('\n');
            }
            continue;
        }
        if !in_known {
            continue;
        }
        let Some((k, v)) = kv(t).or_else(|| t.split_once(':').map(|(a, b)| (a.trim(), b.trim())))
        else {
            continue;
        };
        let k = k.to_ascii_lowercase();
        if !PIP_KEEP.contains(&k.as_str()) {
            continue;
        }
        keep_cont = true;
        let had_value = !v.trim().is_empty();
        let v: Vec<String> = v
            .split_whitespace()
            .map(strip_userinfo)
            .filter(|w| !carries_credential(w))
            .collect();
        if had_value && v.is_empty() {
            // Its only value carried a credential: dropped whole.
            keep_cont = false;
            continue;
        }
        out.push_str(&format!("{k} = {}\n", v.join(" ")));
    }
    out
}

#[cfg(test)]
#[path = "dotfiles_tests.rs"]
mod tests;

/// Largest dotfile read for sanitising; bigger ones are left out.
const MAX_DOTFILE: u64 = 1 << 20;

/// The sanitised copies of the caller's dotfiles for the private home, as
/// (path, contents): git's global configuration (identity, settings that
/// run nothing), npm's and pip's (registry, mirror, cafile: no tokens or
/// passwords). Files that are missing, unreadable or over 1 MiB are left
/// out.
pub fn home_files(home: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    type Sanitizer = fn(&str) -> String;
    let list: [(&str, Sanitizer); 5] = [
        (".gitconfig", sanitized_gitconfig),
        (".config/git/config", sanitized_gitconfig),
        (".npmrc", sanitized_npmrc),
        (".config/pip/pip.conf", sanitized_pipconf),
        (".pip/pip.conf", sanitized_pipconf),
    ];
    let mut out = Vec::new();
    for (rel, clean) in list {
        let p = home.join(rel);
        let Ok(md) = std::fs::metadata(&p) else {
            continue;
        };
        if !md.is_file() || md.len() > MAX_DOTFILE {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&p) {
            out.push((p, clean(&text)));
        }
    }
    out
}

#[cfg(test)]
mod home_files_tests {
    #[test]
    fn home_files_are_sanitised_copies() {
        let tmp = skarn_test_support::TempDir::new("dotfiles");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(".gitconfig"),
            "[user]\n\tname = A\n[credential]\n\thelper = store\n",
        )
        .unwrap();
        std::fs::write(d.join(".npmrc"), "//x/:_authToken=SECRET\n").unwrap();
        let files = super::home_files(&d);
        let git = &files
            .iter()
            .find(|(p, _)| p.ends_with(".gitconfig"))
            .unwrap()
            .1;
        assert!(git.contains("A") && !git.contains("helper"));
        let npm = &files.iter().find(|(p, _)| p.ends_with(".npmrc")).unwrap().1;
        assert!(!npm.contains("SECRET"));
    }
}

#[cfg(test)]
mod credential_anywhere_tests {
    use super::*;

    #[test]
    fn tokens_outside_userinfo_are_dropped_everywhere() {
        let g = sanitized_gitconfig(
            "[alias]\n pub = push https://u:TOKEN1@host/x\n lg = log --oneline\n\
             [url \"https://host/ghp_abcdefghijklmnopqrstuv/\"]\n insteadOf = https://host/\n",
        );
        assert!(!g.contains("TOKEN1") && !g.contains("ghp_"), "{g}");
        assert!(g.contains("log --oneline"), "{g}");
        let p = sanitized_pipconf(
            "[global]\nextra-index-url = https://idx.example/simple?token=TOKEN2\n\
             index-url = https://idx.example/glpat-abcdefghijklmnopqrst/simple\n\
             timeout = 5\n",
        );
        assert!(!p.contains("TOKEN2") && !p.contains("glpat"), "{p}");
        assert!(p.contains("timeout = 5"), "{p}");
        let n = sanitized_npmrc("registry=https://reg.example/npm_abcdefghijklmnopqrstu/\n");
        assert!(!n.contains("npm_"), "{n}");
    }

    /// Found by the `dotfiles` fuzz target: a section header was copied
    /// as it was, with a URL and its password pasted into it.
    #[test]
    fn pipconf_drops_headers_pip_does_not_read() {
        let p = sanitized_pipconf(
            "[x https://ada:PASSWORD@h.example/ y]\ntimeout = 1\n[global]\ntimeout = 5\n\
             [install]\nno-binary = :all:\n",
        );
        assert_eq!(p, "[global]\ntimeout = 5\n[install]\nno-binary = :all:\n");
    }

    /// Found by the `dotfiles` fuzz target: a token behind punctuation
    /// the word split did not cut at (`(`, `<`, `$`) was kept.
    #[test]
    fn tokens_behind_punctuation_are_dropped() {
        let t = "ghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue";
        let g = sanitized_gitconfig(&format!(
            "[alias]\n x = log ({t})\n y = log <{t}>\n lg = log --oneline\n"
        ));
        assert!(!g.contains(t) && g.contains("log --oneline"), "{g}");
        let n = sanitized_npmrc(&format!("email=${t}\nfund=false\n"));
        assert_eq!(n, "fund=false\n");
        let p = sanitized_pipconf(&format!("[global]\ntrusted-host = h ({t})\ntimeout = 5\n"));
        assert!(!p.contains(t) && p.contains("timeout = 5"), "{p}");
    }
}
