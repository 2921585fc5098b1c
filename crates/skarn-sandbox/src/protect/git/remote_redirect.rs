//! Where the host's git sends the repository and where it fetches from:
//! a run may not point an existing remote at another URL, give it a push
//! URL, or move a branch's upstream to a remote the host's configuration
//! does not have (atk22e: `git remote set-url origin <attacker>` inside,
//! then the user's own `git push` on the host sent the code there, past
//! the sandbox's network policy). A remote the run adds keeps only a URL
//! naming a local repository the run could read (the workspace, its
//! grants, system directories): a network URL, a transport helper or a
//! path the run could not read is dropped, since host git contacts every
//! remote on `git fetch --all`, `git remote update` or an editor's
//! autofetch (atk22h F36: a remote naming `~/.password-store` brought it
//! into the workspace for the next run; a URL of the run's choice carries
//! what the run put in it past `--net deny`). A branch may get an upstream
//! only at a remote the host had, or at a new one naming a repository the
//! run could read but not write: host `git pull` merges nothing the run
//! wrote there unvetted and `git push` sends nothing elsewhere (atk22h
//! F28, F29). ADR 0267.

use std::path::{Component, Path, PathBuf};

use super::gitconfig::Item;

/// What the run could reach on the host, to judge local remote URLs by.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reach {
    /// The repository's top: relative URLs resolve against it (host git
    /// runs `fetch`/`pull`/`push` from the top of the work tree).
    pub top: PathBuf,
    /// Paths the run had (canonical), with whether it could write them;
    /// the workspace is one, writable.
    pub paths: Vec<(PathBuf, bool)>,
    /// Paths hidden from the run inside them (masked secrets).
    pub hidden: Vec<PathBuf>,
    /// With a copy-on-write layer being applied: the workspace and the
    /// layer's upper directory. A local URL whose way passes an entry the
    /// layer makes a link (or a special file) is judged as not readable:
    /// the host's tree does not have that link yet when the configuration
    /// is applied (attack atk22i F6).
    pub layer: Option<(PathBuf, PathBuf)>,
}

/// How a remote URL is reached, as git reads it.
#[derive(Debug, PartialEq, Eq)]
enum Url {
    /// A local repository at this path (absolute or relative).
    Local(PathBuf),
    /// Anything else: a network address, scp-like `host:path`, a
    /// `<helper>::` transport.
    Elsewhere,
}

fn url_kind(v: &str) -> Url {
    let v = v.trim();
    if let Some(rest) = v.strip_prefix("file://") {
        // `file:///p` or `file://host/p`: the path from the first slash.
        return match rest.find('/') {
            Some(i) => Url::Local(PathBuf::from(&rest[i..])),
            None => Url::Elsewhere,
        };
    }
    if v.contains("::") || v.contains("://") || v.is_empty() {
        return Url::Elsewhere;
    }
    // git: a colon before the first slash makes `host:path` (ssh).
    match (v.find(':'), v.find('/')) {
        (Some(c), Some(s)) if c < s => Url::Elsewhere,
        (Some(_), None) => Url::Elsewhere,
        _ => Url::Local(PathBuf::from(v)),
    }
}

/// `p` with `.` and `..` folded and its longest existing ancestor's links
/// resolved; `None` when a `..` climbs past the root.
fn resolve(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                // Resolve what lies before a `..` first, as the kernel does.
                out = std::fs::canonicalize(&out).unwrap_or(out);
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    let mut base = out.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&base) {
            let mut r = c;
            for n in rest.iter().rev() {
                r.push(n);
            }
            return Some(r);
        }
        rest.push(base.file_name()?.to_os_string());
        if !base.pop() {
            return None;
        }
    }
}

impl Reach {
    /// Whether the lexical path `p` passes, inside the workspace, an
    /// entry the layer makes other than a directory.
    fn through_layer_link(&self, p: &Path) -> bool {
        let Some((ws, upper)) = &self.layer else {
            return false;
        };
        let p = crate::policy::config::normalize(p);
        let Ok(rel) = p.strip_prefix(ws) else {
            return false;
        };
        let mut at = upper.clone();
        for c in rel.components() {
            at.push(c);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return true,
                Err(_) => return false,
            }
        }
        false
    }

    /// Whether the local `url` names a place the run could read; with
    /// `unwritten`, one it could not write either.
    pub(crate) fn local_ok(&self, url: &str, unwritten: bool) -> bool {
        let Url::Local(p) = url_kind(url) else {
            return false;
        };
        if url.trim_start().starts_with('~') {
            return false;
        }
        if self.through_layer_link(&self.top.join(&p)) {
            return false;
        }
        let Some(p) = resolve(&self.top.join(p)) else {
            return false;
        };
        if self
            .hidden
            .iter()
            .any(|h| p.starts_with(h) || h.starts_with(&p))
        {
            return false;
        }
        let read = self.paths.iter().any(|(g, _)| p.starts_with(g));
        let written = self
            .paths
            .iter()
            .any(|(g, w)| *w && (p.starts_with(g) || g.starts_with(&p)));
        read && !(unwritten && written)
    }
}

/// Whether `host` (the items of the host's configuration file) gives
/// remote `name` a URL.
fn host_has_remote(host: &[Item], name: &str) -> bool {
    host.iter()
        .any(|h| h.section == "remote" && h.sub.as_deref() == Some(name) && h.name == "url")
}

/// Whether the branch upstream `it` (`branch.<b>.remote`/`pushremote`,
/// not on the host as it is) names a remote the host's git may follow:
/// `.`, a remote of the host's, or a new one whose every URL names a
/// repository the run could read but not write.
fn upstream_ok(it: &Item, host: &[Item], new: &[Item], reach: &Reach) -> bool {
    let v = it.value.as_deref().unwrap_or("");
    if v == "." || host_has_remote(host, v) {
        return true;
    }
    let urls: Vec<&str> = new
        .iter()
        .filter(|n| {
            n.section == "remote"
                && n.sub.as_deref() == Some(v)
                && matches!(n.name.as_str(), "url" | "pushurl")
        })
        .map(|n| n.value.as_deref().unwrap_or(""))
        .collect();
    !urls.is_empty() && urls.iter().all(|u| reach.local_ok(u, true))
}

/// Whether item `it` of the configuration a run wrote (`new`, all of its
/// items) sends host git elsewhere than the host's items `host` do:
/// redirects a remote or upstream of the host's, adds a remote host git
/// would contact outside what the run could read, or gives a branch an
/// upstream the run controls.
pub(crate) fn redirects_host_remote(it: &Item, host: &[Item], new: &[Item], reach: &Reach) -> bool {
    let Some(sub) = it.sub.as_deref() else {
        return false;
    };
    if host.contains(it) {
        return false;
    }
    // Refs host git fetches or merges: the remote's branches only (atk22i
    // F11, ADR 0279).
    let remotes: Vec<&str> = host
        .iter()
        .chain(new)
        .filter(|i| i.section == "remote")
        .filter_map(|i| i.sub.as_deref())
        .collect();
    if super::fetch_maps::maps_refs_elsewhere(it, &remotes) {
        return true;
    }
    let v = it.value.as_deref().unwrap_or("");
    match (it.section.as_str(), it.name.as_str()) {
        ("remote", "url" | "pushurl") => host_has_remote(host, sub) || !reach.local_ok(v, false),
        // A remote without a URL is fetched from its name (`[remote
        // "/elsewhere/repo"] fetch = ...`): judged as that URL.
        ("remote", _) => {
            !host_has_remote(host, sub)
                && !new.iter().any(|n| {
                    n.section == "remote" && n.sub.as_deref() == Some(sub) && n.name == "url"
                })
                && !reach.local_ok(sub, false)
        }
        ("branch", "remote" | "pushremote") => !upstream_ok(it, host, new, reach),
        // The ref merged follows the branch's remote: dropped with it.
        ("branch", "merge") => new.iter().any(|n| {
            n.section == "branch"
                && n.sub.as_deref() == Some(sub)
                && n.name == "remote"
                && !host.contains(n)
                && !upstream_ok(n, host, new, reach)
        }),
        // `git submodule update` clones from it: a local path the run
        // could read; a network address is the run's choice (atk22i F9,
        // ADR 0278: the host's own submodule URLs stay, as above).
        ("submodule", "url") => !reach.local_ok(v, false),
        _ => false,
    }
}

/// Whether git reaches `url` over a network or through a transport
/// helper, not as a local path (ADR 0278).
pub(crate) fn names_elsewhere(url: &str) -> bool {
    url_kind(url) == Url::Elsewhere
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(section: &str, sub: &str, name: &str, value: &str) -> Item {
        Item {
            section: section.into(),
            sub: Some(sub.into()),
            name: name.into(),
            value: Some(value.into()),
        }
    }

    fn reach(d: &Path) -> Reach {
        Reach {
            layer: None,
            top: d.join("ws"),
            paths: vec![(d.join("ws"), true), (d.join("ro"), false)],
            hidden: vec![d.join("ro/secret")],
        }
    }

    #[test]
    fn existing_remotes_keep_their_urls_and_branches_track_known_remotes() {
        let tmp = skarn_test_support::TempDir::new("remote-redirect");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        for p in ["ws/vendor/c.git", "ro/up", "ro/secret", "private"] {
            std::fs::create_dir_all(d.join(p)).unwrap();
        }
        let rc = reach(&d);
        let host = vec![
            it("remote", "origin", "url", "https://git.test/me/p.git"),
            it("branch", "main", "remote", "origin"),
        ];
        let r = |i: &Item, new: &[Item]| redirects_host_remote(i, &host, new, &rc);
        assert!(r(
            &it("remote", "origin", "url", "https://evil.test/p.git"),
            &[]
        ));
        assert!(r(
            &it("remote", "origin", "pushurl", "https://evil.test/p.git"),
            &[]
        ));
        assert!(r(&it("branch", "main", "remote", "evil"), &[]));
        // New remotes: only local repositories the run could read.
        for u in [
            "https://fork.test/p.git",
            "git@host.test:p.git",
            "host.test:p",
            "ext::sh -c x",
            "persistent-https::x",
            "~/.password-store",
        ] {
            assert!(r(&it("remote", "fork", "url", u), &[]), "{u}");
        }
        let private = d.join("private");
        let ro_secret = d.join("ro/secret");
        for u in [
            private.to_str().unwrap(),
            ro_secret.to_str().unwrap(),
            "../private",
            "../ws/../private",
            &format!("file://{}", private.display()),
        ] {
            assert!(r(&it("remote", "m", "url", u), &[]), "{u}");
        }
        // A remote without a URL is fetched from its name.
        assert!(r(
            &it(
                "remote",
                private.to_str().unwrap(),
                "fetch",
                "+refs/*:refs/*"
            ),
            &[]
        ));
        let up = d.join("ro/up");
        for u in [
            up.to_str().unwrap(),
            "./vendor/c.git",
            "../ro/up",
            "vendor/new",
        ] {
            assert!(!r(&it("remote", "m", "url", u), &[]), "{u}");
        }
        // A branch's upstream: the host's remotes, or a new one the run
        // could read but not write.
        let ro = [it("remote", "up", "url", up.to_str().unwrap())];
        let ws = [it("remote", "cache", "url", "./vendor/c.git")];
        let net = [it("remote", "bk", "url", "https://evil.test/p.git")];
        assert!(!r(&it("branch", "dev", "remote", "up"), &ro));
        assert!(!r(&it("branch", "dev", "remote", "origin"), &[]));
        assert!(!r(&it("branch", "dev", "remote", "."), &[]));
        assert!(r(&it("branch", "main", "remote", "cache"), &ws));
        assert!(r(&it("branch", "dev", "remote", "cache"), &ws));
        assert!(r(&it("branch", "dev", "pushremote", "bk"), &net));
        assert!(r(&it("branch", "dev", "remote", "nourl"), &[]));
        let with_branch = [ws[0].clone(), it("branch", "dev", "remote", "cache")];
        assert!(r(
            &it("branch", "dev", "merge", "refs/heads/main"),
            &with_branch
        ));
        let ok_branch = [ro[0].clone(), it("branch", "dev", "remote", "up")];
        assert!(!r(
            &it("branch", "dev", "merge", "refs/heads/main"),
            &ok_branch
        ));
        // Submodule URLs: a local one must be readable; a new network
        // one is the run's choice.
        assert!(r(
            &it("submodule", "s", "url", private.to_str().unwrap()),
            &[]
        ));
        assert!(r(
            &it("submodule", "s", "url", "https://git.test/s.git"),
            &[]
        ));
        assert!(!r(&it("submodule", "s", "url", "../ro/up"), &[]));
        // Fetch refspecs and merged refs: the remote's branches only.
        assert!(r(
            &it(
                "remote",
                "origin",
                "fetch",
                "+refs/pull/1/head:refs/replace/x"
            ),
            &[]
        ));
        assert!(!r(
            &it(
                "remote",
                "origin",
                "fetch",
                "+refs/heads/*:refs/remotes/origin/*"
            ),
            &[]
        ));
        assert!(r(&it("branch", "main", "merge", "refs/pull/1/head"), &[]));
        // Unchanged: allowed.
        assert!(!r(
            &it("remote", "origin", "url", "https://git.test/me/p.git"),
            &[]
        ));
        assert!(!r(&it("user", "x", "email", "a@b"), &[]));
    }
}
