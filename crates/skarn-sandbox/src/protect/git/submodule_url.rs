//! Where host git goes for a submodule URL a run wrote (ADR 0291). Git
//! reads a `.gitmodules` URL starting with `./` or `../` relative to the
//! superproject's remote URL, and its `..` steps climb over the remote's
//! path, then its host: with the remote `https://git.test/me/p`,
//! `../../../127.0.0.1:8765/x` is `https://127.0.0.1:8765/x` (attack
//! atk22j F3). So a relative URL is resolved here as `git submodule init`
//! resolves it, against every URL the repository's remotes have (which
//! remote is the default depends on the branch checked out when the user
//! runs git) and against the work tree's top (git's base when the default
//! remote has no URL), and each result is judged as the URL itself would
//! be: a network address or transport helper is the run's choice; a local
//! path must be one the run could read.

use std::path::{Path, PathBuf};

use super::gitconfig::Item;
use super::remote_redirect::{Reach, names_elsewhere};

/// Whether git reads a `.gitmodules` URL as relative to the remote: it
/// starts with `./` or `../`, with either separator.
pub(crate) fn is_relative(url: &str) -> bool {
    let rest = url
        .strip_prefix("../")
        .or_else(|| url.strip_prefix("..\\"))
        .or_else(|| url.strip_prefix("./"))
        .or_else(|| url.strip_prefix(".\\"));
    rest.is_some()
}

/// git's test for a URL that is a path (no `host:` before the first
/// slash).
fn local_not_ssh(url: &str) -> bool {
    match (url.find(':'), url.find('/')) {
        (None, _) => true,
        (Some(c), Some(s)) => s < c,
        (Some(_), None) => false,
    }
}

/// Drop the last component of `remote` (after its last `/`, else after
/// its last `:`, whose separator then joins the rest). `None` where git
/// stops with "cannot strip one component".
fn chop(remote: &mut String, relative_remote: bool) -> Option<bool> {
    if let Some(i) = remote.rfind('/') {
        remote.truncate(i);
        return Some(false);
    }
    if let Some(i) = remote.rfind(':') {
        remote.truncate(i);
        return Some(true);
    }
    if relative_remote || remote == "." {
        return None;
    }
    *remote = ".".into();
    Some(false)
}

/// The URL git clones for the `.gitmodules` URL `url` when the remote's
/// URL is `remote` (as `git submodule init` writes it to `.git/config`);
/// `url` itself when git does not read it as relative. `None` where git
/// refuses to resolve it (nothing is cloned).
pub(crate) fn resolve(remote: &str, url: &str) -> Option<String> {
    if !is_relative(url) || !local_not_ssh(url) || url.starts_with('/') {
        return Some(url.to_string());
    }
    let mut base = remote.strip_suffix('/').unwrap_or(remote).to_string();
    if base.is_empty() {
        return None;
    }
    let relative_remote = local_not_ssh(&base) && !base.starts_with('/');
    if relative_remote && !base.starts_with("./") && !base.starts_with("../") {
        base.insert_str(0, "./");
    }
    let mut rest = url;
    let mut colon = false;
    loop {
        if let Some(r) = rest.strip_prefix("../") {
            rest = r;
            colon |= chop(&mut base, relative_remote)?;
        } else if let Some(r) = rest.strip_prefix("./") {
            rest = r;
        } else {
            break;
        }
    }
    let mut out = format!("{base}{}{rest}", if colon { ":" } else { "/" });
    if rest.ends_with('/') {
        out.pop();
    }
    Some(match out.strip_prefix("./") {
        Some(o) => o.to_string(),
        None => out,
    })
}

/// The configuration file of the repository whose work tree's top is
/// `top`: `.git/config`, or through a `.git` file (a submodule's or
/// linked worktree's) the git directory's (its common directory's).
pub(crate) fn config_of(top: &Path) -> Option<PathBuf> {
    let dot = top.join(".git");
    let m = std::fs::symlink_metadata(&dot).ok()?;
    if m.is_dir() {
        return Some(dot.join("config"));
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let gd = top.join(text.trim().strip_prefix("gitdir:")?.trim());
    let common = std::fs::read_to_string(gd.join("commondir"))
        .map(|c| gd.join(c.trim()))
        .unwrap_or(gd);
    Some(common.join("config"))
}

/// Every `remote.<name>.url` of the configuration files `files` (ones
/// that are missing or do not parse add none).
pub(crate) fn remote_urls(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let Ok(Some(text)) = super::gitconfig::read_file(f) else {
            continue;
        };
        out.extend(
            super::gitconfig::parse(&text)
                .items
                .into_iter()
                .filter(|i: &Item| i.section == "remote" && i.name == "url" && i.sub.is_some())
                .filter_map(|i| i.value),
        );
    }
    out
}

/// Where a repository's submodule URLs lead: the remote URLs a relative
/// one resolves against, and what the run could reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bases {
    /// Every remote URL of the repository's configuration (the host's and
    /// the run's), then its work tree's top.
    pub remotes: Vec<String>,
    /// What the run could read ([`Reach::top`] is the work tree's top).
    pub reach: Reach,
}

impl Bases {
    /// The bases of the repository at `reach.top`, its remotes read from
    /// `configs` (the host's configuration file, and the run's when it
    /// wrote one elsewhere).
    pub(crate) fn of(reach: Reach, configs: &[PathBuf]) -> Bases {
        let mut remotes = remote_urls(configs);
        remotes.push(reach.top.to_string_lossy().into_owned());
        Bases { remotes, reach }
    }

    /// Whether a submodule `url` a run wrote in `.gitmodules` keeps host
    /// git (`git submodule update --init`, `git submodule sync`) on what
    /// the run could read, whichever remote is the default then.
    pub(crate) fn url_ok(&self, url: &str) -> bool {
        if names_elsewhere(url) {
            return false;
        }
        if !is_relative(url) {
            return self.reach.local_ok(url, false);
        }
        self.remotes.iter().all(|r| match resolve(r, url) {
            None => true, // git refuses it: nothing is cloned
            Some(u) => !names_elsewhere(&u) && self.reach.local_ok(&u, false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_urls_resolve_as_git_submodule_init_resolves_them() {
        // Each row as git 2.47 `git submodule init` wrote it.
        for (remote, url, want) in [
            (
                "http://git.test/someuser/p",
                "../../../127.0.0.1:8765/x",
                Some("http://127.0.0.1:8765/x"),
            ),
            (
                "https://git.test/u/r",
                "../../../evil.test/y",
                Some("https://evil.test/y"),
            ),
            (
                "https://git.test/u/r/",
                "../x",
                Some("https://git.test/u/x"),
            ),
            ("git@git.test:u/r", "../x", Some("git@git.test:u/x")),
            ("git@git.test:u/r", "../../x", Some("git@git.test:x")),
            ("git@git.test:u/r", "../../../x", Some(".:x")),
            ("host:r", "../x", Some("host:x")),
            ("host:r", "../../x", Some(".:x")),
            ("/srv/a/b", "../../../x", Some("/x")),
            ("/srv/a", "../../x", Some("/x")),
            ("/srv/a", "../../../x", Some("x")),
            ("./a/b", "../../x", Some("x")),
            ("a/b", "../../x", Some("x")),
            ("a/b", "../../../x", None),
            ("a", "../x", Some("x")),
            ("http://h/a", "./x/", Some("http://h/a/x")),
            ("http://h/a", "..\\x", Some("http://h/a/..\\x")),
            ("http://h/a", ".//x", Some("http://h/a//x")),
            ("http://h/a", "../../../../x", Some("http:x")),
            ("file:///srv/a", "../../../x", Some("file://x")),
            ("http://h/a", "../.././x", Some("http://x")),
            ("/srv/a", "./../x", Some("/srv/x")),
            (
                "/srv/a",
                "https://elsewhere.test/x",
                Some("https://elsewhere.test/x"),
            ),
            ("/srv/a", "lib/x", Some("lib/x")),
        ] {
            assert_eq!(resolve(remote, url).as_deref(), want, "{remote} {url}");
        }
    }

    #[test]
    fn a_relative_url_is_judged_as_what_it_resolves_to() {
        let tmp = skarn_test_support::TempDir::new("submodule-url");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        for p in ["ws/.git", "ro/lib", "private"] {
            std::fs::create_dir_all(d.join(p)).unwrap();
        }
        let reach = Reach {
            top: d.join("ws"),
            paths: vec![(d.join("ws"), true), (d.join("ro"), false)],
            hidden: Vec::new(),
            layer: None,
        };
        let cfg = d.join("ws/.git/config");
        let bases = |remote: Option<&str>| {
            match remote {
                Some(r) => std::fs::write(&cfg, format!("[remote \"origin\"]\n\turl = {r}\n")),
                None => std::fs::write(&cfg, "[core]\n\tbare = false\n"),
            }
            .unwrap();
            Bases::of(reach.clone(), std::slice::from_ref(&cfg))
        };
        // A network remote: every relative URL is a network address.
        let net = bases(Some("http://git.test/someuser/p"));
        for u in ["../../../127.0.0.1:8765/x", "../sibling", "./x", "..\\x"] {
            assert!(!net.url_ok(u), "{u}");
        }
        // No remote: resolved against the top, a path the run could read.
        let none = bases(None);
        assert!(none.url_ok("../ro/lib"));
        assert!(none.url_ok("./sub"));
        assert!(!none.url_ok("../private"));
        assert!(!none.url_ok("../../../127.0.0.1:8765/x"));
        // A local remote the run could read: judged against it and the
        // top (git's base when the default remote has no URL).
        let local = bases(Some(d.join("ro/up").to_str().unwrap()));
        assert!(local.url_ok("../ro/lib"));
        assert!(!local.url_ok("../lib"));
        assert!(!local.url_ok("../../private"));
        // Non-relative URLs: a path the run could read, never a network.
        assert!(none.url_ok(d.join("ro/lib").to_str().unwrap()));
        assert!(!none.url_ok(d.join("private").to_str().unwrap()));
        assert!(!none.url_ok("https://git.test/x"));
        assert!(!none.url_ok("host:x"));
    }
}
