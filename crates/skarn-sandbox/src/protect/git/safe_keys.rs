//! The git configuration keys a repository made or changed by a run may
//! keep: settings that make git run nothing.

use super::gitconfig::Item;

/// Whether a git configuration item is on the allow-list of settings that
/// run nothing (identity, remotes without `ext::`/`fd::` transports,
/// branches, submodules without `!command` updates, repository format). Used to vet any repository a run created
/// or changed.
pub fn allowed_key(it: &Item) -> bool {
    let v = it.value.as_deref().unwrap_or("");
    match (it.section.as_str(), it.sub.is_some(), it.name.as_str()) {
        (
            "core",
            false,
            "repositoryformatversion"
            | "filemode"
            | "bare"
            | "logallrefupdates"
            | "ignorecase"
            | "precomposeunicode"
            | "symlinks"
            | "autocrlf"
            | "eol",
        ) => true,
        ("extensions", false, "objectformat" | "refstorage") => true,
        ("remote", true, "url" | "pushurl") => {
            let l = v.trim_start().to_ascii_lowercase();
            !(l.starts_with("ext::") || l.starts_with("fd::") || l.starts_with('-'))
        }
        ("remote", true, "fetch" | "tagopt" | "prune") => true,
        ("branch", true, "remote" | "merge" | "rebase") => true,
        ("submodule", true, "url") => {
            let l = v.trim_start().to_ascii_lowercase();
            !(l.starts_with("ext::") || l.starts_with("fd::") || l.starts_with('-'))
        }
        ("submodule", true, "active" | "branch" | "shallow" | "ignore") => true,
        ("submodule", true, "fetchrecursesubmodules") => true,
        // `!command` runs a program; the named strategies do not.
        ("submodule", true, "update") => {
            matches!(v.trim(), "checkout" | "rebase" | "merge" | "none")
        }
        ("user", false, "name" | "email") => true,
        ("init", false, "defaultbranch") => true,
        _ => false,
    }
}
