//! Where the host's git sends the repository: a run may add remotes and
//! give a branch without an upstream one, but it may not point an
//! existing remote at another URL, give it a push URL, or move a branch's
//! upstream to a remote the host's configuration does not have (atk22e:
//! `git remote set-url origin <attacker>` inside, then the user's own
//! `git push` on the host sent the code there, past the sandbox's network
//! policy).

use super::gitconfig::Item;

/// Whether `host` (the items of the host's configuration file) gives
/// remote `name` a URL.
fn host_has_remote(host: &[Item], name: &str) -> bool {
    host.iter()
        .any(|h| h.section == "remote" && h.sub.as_deref() == Some(name) && h.name == "url")
}

/// Whether item `it` of the configuration a run wrote redirects where host
/// git fetches from or pushes to, relative to the host's items `host`.
pub(crate) fn redirects_host_remote(it: &Item, host: &[Item]) -> bool {
    let Some(sub) = it.sub.as_deref() else {
        return false;
    };
    if host.contains(it) {
        return false;
    }
    match (it.section.as_str(), it.name.as_str()) {
        ("remote", "url" | "pushurl") => host_has_remote(host, sub),
        ("branch", "remote" | "pushremote") => {
            let v = it.value.as_deref().unwrap_or("");
            let had_upstream = host.iter().any(|h| {
                h.section == "branch"
                    && h.sub.as_deref() == Some(sub)
                    && matches!(h.name.as_str(), "remote" | "pushremote")
            });
            had_upstream && v != "." && !host_has_remote(host, v)
        }
        _ => false,
    }
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

    #[test]
    fn existing_remotes_keep_their_urls_and_branches_track_known_remotes() {
        let host = vec![
            it("remote", "origin", "url", "https://git.test/me/p.git"),
            it("branch", "main", "remote", "origin"),
        ];
        let r = |i: &Item| redirects_host_remote(i, &host);
        assert!(r(&it("remote", "origin", "url", "https://evil.test/p.git")));
        assert!(r(&it(
            "remote",
            "origin",
            "pushurl",
            "https://evil.test/p.git"
        )));
        assert!(r(&it("branch", "main", "remote", "evil")));
        // A branch without an upstream on the host may get one.
        assert!(!r(&it("branch", "dev", "remote", "fork")));
        // Unchanged, new remotes, known or local upstreams: allowed.
        assert!(!r(&it(
            "remote",
            "origin",
            "url",
            "https://git.test/me/p.git"
        )));
        assert!(!r(&it(
            "remote",
            "fork",
            "url",
            "https://git.test/fork/p.git"
        )));
        assert!(!r(&it("branch", "dev", "remote", "origin")));
        assert!(!r(&it("branch", "dev", "remote", ".")));
        assert!(!r(&it("user", "x", "email", "a@b")));
    }
}
