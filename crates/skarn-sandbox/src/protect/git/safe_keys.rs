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

/// Whether item `it` of an EXISTING repository's configuration (the
/// host's items `host`, not empty) changes how host git reads that
/// repository: `core.bare`, `core.repositoryformatversion` and
/// `extensions.*` are what `git init` writes for a new repository; set
/// on the host's one they make every host git command there fail ("repo
/// version is 0, but v1-only extension found", "must be run in a work
/// tree": attack atk22h F32). Only the host's own value is kept.
pub fn changes_repository_format(it: &Item, host: &[Item]) -> bool {
    let format = matches!(
        (it.section.as_str(), it.sub.is_some(), it.name.as_str()),
        ("core", false, "bare" | "repositoryformatversion") | ("extensions", false, _)
    );
    format && !host.is_empty() && !host.contains(it)
}
