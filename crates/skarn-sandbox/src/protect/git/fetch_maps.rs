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
//! a branch.

use super::gitconfig::Item;

/// Whether the item `it` (not on the host as it is) makes host git fetch
/// or merge refs other than the remote's branches, or store them
/// elsewhere than under that remote's own tracking refs.
pub(crate) fn maps_refs_elsewhere(it: &Item) -> bool {
    let Some(sub) = it.sub.as_deref() else {
        return false;
    };
    let v = it.value.as_deref().unwrap_or("").trim();
    match (it.section.as_str(), it.name.as_str()) {
        ("remote", "fetch") => !tracking_refspec(sub, v),
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
/// the remote to the same name under `refs/remotes/<remote>/`, or a tag
/// to the same tag, as `git clone` and `git remote add` write.
fn tracking_refspec(remote: &str, spec: &str) -> bool {
    let spec = spec.strip_prefix('+').unwrap_or(spec);
    let Some((src, dst)) = spec.split_once(':') else {
        return false;
    };
    if let Some(name) = src.strip_prefix("refs/heads/") {
        return plain_name(name, true)
            && plain_name(remote, false)
            && dst == format!("refs/remotes/{remote}/{name}");
    }
    if let Some(name) = src.strip_prefix("refs/tags/") {
        return plain_name(name, true) && dst == src;
    }
    false
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
        let f = |v: &str| maps_refs_elsewhere(&it("remote", "origin", "fetch", v));
        for ok in [
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/heads/main:refs/remotes/origin/main",
            "refs/heads/dev/x:refs/remotes/origin/dev/x",
            "+refs/tags/*:refs/tags/*",
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
        ] {
            assert!(f(bad), "{bad}");
        }
        let m = |v: &str| maps_refs_elsewhere(&it("branch", "main", "merge", v));
        assert!(!m("refs/heads/main"));
        assert!(!m("refs/heads/feature/x"));
        for bad in ["refs/pull/1/head", "refs/tags/v1", "main", "refs/heads/"] {
            assert!(m(bad), "{bad}");
        }
        assert!(!maps_refs_elsewhere(&it("remote", "origin", "url", "x")));
    }
}
