//! The refs host git writes or merges on a fetch or pull, as a run may
//! set them in a repository's configuration (attack atk22i F11, ADR
//! 0279). `remote.<x>.fetch` maps the remote's refs to local ones: a
//! refspec the run adds to the host's own `origin`
//! (`+refs/pull/1/head:refs/replace/<HEAD>`) makes the user's next `git
//! fetch` or an editor's autofetch store a stranger's pull request as a
//! replace ref, a branch, a tag or `origin/main`, which host git then
//! shows and checks out. `branch.<b>.merge` names what `git pull` merges:
//! `refs/pull/1/head` merges the stranger's commits into the user's
//! branch. A run may only add the mappings `git clone` and `git remote
//! add` write: a branch of the remote to the same name under
//! `refs/remotes/<x>/`, or a tag to the same tag; a branch may only track
//! a branch. The tracking namespace must be the remote's own: a remote
//! named `origin/feature` writes into `origin`'s (`refs/remotes/origin/
//! feature/*`: host `git fetch --all` then `git merge @{u}` took the
//! run's commit, attack atk22j F12b), so a remote whose name holds `/`,
//! or whose namespace holds another remote's, gets none. A tag mapping
//! may not be forced (`+refs/tags/*:refs/tags/*` over a repository the
//! run filled moved the user's own release tag on `git fetch --all`,
//! F12); unforced, git never moves an existing tag.

use super::gitconfig::Item;

/// Whether the item `it` (not on the host as it is) makes host git fetch
/// or merge refs other than the remote's branches, or store them
/// elsewhere than under that remote's own tracking refs (`remotes`: the
/// names of every remote of the configuration, the host's and the
/// run's).
pub(crate) fn maps_refs_elsewhere(it: &Item, remotes: &[&str]) -> bool {
    let Some(sub) = it.sub.as_deref() else {
        return false;
    };
    let v = it.value.as_deref().unwrap_or("").trim();
    match (it.section.as_str(), it.name.as_str()) {
        ("remote", "fetch") => !tracking_refspec(sub, v, remotes),
        ("branch", "merge") => !is_branch(v),
        _ => false,
    }
}

/// `refs/heads/<a>` with a name git accepts as a branch (no `..`, no
/// `@{`, no control characters or spaces, no `:`/`^`/`~`/`?`/`[`/`\`;
/// one `*` allowed in a refspec is checked by the caller).
fn is_branch(v: &str) -> bool {
    v.strip_prefix("refs/heads/")
        .is_some_and(|rest| plain_name(rest, false))
}

fn plain_name(rest: &str, glob: bool) -> bool {
    !rest.is_empty()
        && !rest.contains("..")
        && !rest.contains("@{")
        && !rest.contains("//")
        && !rest.starts_with('/')
        && !rest.ends_with('/')
        && !rest.ends_with(".lock")
        && rest.chars().all(|c| {
            !c.is_control()
                && !matches!(c, ' ' | ':' | '^' | '~' | '?' | '[' | '\\')
                && (glob || c != '*')
        })
        && rest.matches('*').count() <= 1
}

/// Whether `spec` (a fetch refspec of remote `remote`) maps a branch of
/// the remote to the same name under `refs/remotes/<remote>/`, a
/// namespace no other of `remotes` shares, or (unforced) a tag to the
/// same tag, as `git clone` and `git remote add` write.
fn tracking_refspec(remote: &str, spec: &str, remotes: &[&str]) -> bool {
    let (forced, spec) = match spec.strip_prefix('+') {
        Some(s) => (true, s),
        None => (false, spec),
    };
    let Some((src, dst)) = spec.split_once(':') else {
        return false;
    };
    if let Some(name) = src.strip_prefix("refs/heads/") {
        return plain_name(name, true)
            && own_namespace(remote, remotes)
            && dst == format!("refs/remotes/{remote}/{name}");
    }
    if let Some(name) = src.strip_prefix("refs/tags/") {
        return !forced && plain_name(name, true) && dst == src;
    }
    false
}

/// Whether `refs/remotes/<remote>/` is `remote`'s alone: a plain name
/// without `/` (git allows one, and `a/b`'s refs then lie in `a`'s
/// namespace) that no other remote's name extends (`remote/x`).
fn own_namespace(remote: &str, remotes: &[&str]) -> bool {
    plain_name(remote, false)
        && !remote.contains('/')
        && !remotes
            .iter()
            .any(|r| r.strip_prefix(remote).is_some_and(|t| t.starts_with('/')))
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
    fn only_clone_style_refspecs_and_branch_upstreams_are_kept() {
        let names = ["origin", "upstream"];
        let f = |v: &str| maps_refs_elsewhere(&it("remote", "origin", "fetch", v), &names);
        for ok in [
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/heads/main:refs/remotes/origin/main",
            "refs/heads/dev/x:refs/remotes/origin/dev/x",
            "refs/tags/*:refs/tags/*",
        ] {
            assert!(!f(ok), "{ok}");
        }
        for bad in [
            "+refs/pull/1/head:refs/replace/0123456789012345678901234567890123456789",
            "+refs/pull/1/head:refs/remotes/origin/main",
            "+refs/heads/*:refs/heads/*",
            "+refs/heads/main:refs/remotes/origin/other",
            "+refs/heads/*:refs/remotes/fork/*",
            "+refs/*:refs/*",
            "refs/pull/1/head",
            "^refs/heads/x",
            "+refs/heads/*:refs/notes/*",
            "+refs/tags/*:refs/heads/*",
            "+refs/heads/../x:refs/remotes/origin/../x",
            // Forced tags move the user's own (atk22j F12).
            "+refs/tags/*:refs/tags/*",
            "+refs/tags/v1:refs/tags/v1",
        ] {
            assert!(f(bad), "{bad}");
        }
        // A namespace inside another remote's, or holding one (F12b).
        let spec = "+refs/heads/*:refs/remotes/origin/feature/*";
        assert!(maps_refs_elsewhere(
            &it("remote", "origin/feature", "fetch", spec),
            &["origin", "origin/feature"]
        ));
        assert!(maps_refs_elsewhere(
            &it(
                "remote",
                "origin",
                "fetch",
                "+refs/heads/*:refs/remotes/origin/*"
            ),
            &["origin", "origin/feature"]
        ));
        assert!(!maps_refs_elsewhere(
            &it(
                "remote",
                "origin",
                "fetch",
                "+refs/heads/*:refs/remotes/origin/*"
            ),
            &["origin", "origins", "origin-x"]
        ));
        let m = |v: &str| maps_refs_elsewhere(&it("branch", "main", "merge", v), &names);
        assert!(!m("refs/heads/main"));
        assert!(!m("refs/heads/feature/x"));
        for bad in ["refs/pull/1/head", "refs/tags/v1", "main", "refs/heads/"] {
            assert!(m(bad), "{bad}");
        }
        assert!(!maps_refs_elsewhere(
            &it("remote", "origin", "url", "x"),
            &names
        ));
    }
}
