//! Every path a repository's own configuration names, for a repository
//! other than the workspace's top one: the repository that ENCLOSES a
//! workspace which is a subdirectory of its work tree, and repositories
//! NESTED below the workspace's top (attack atk22g F18, F19). Git reads
//! that configuration whenever it runs in the work tree, and runs what it
//! names from the work tree's top: `core.hooksPath`'s hooks,
//! `core.fsmonitor`, filters, diff drivers, aliases, `include.path` files.
//! A value naming a file inside a writable grant lets the run plant what
//! the host's next `git status` there runs, although the configuration
//! itself lies out of reach (or is kept read-only). [`named`] reads the
//! configuration as text, value by value: every path-like word
//! (relative ones against the work tree's top and the file's directory),
//! `core.hooksPath` and the include files as git resolves them. The
//! caller keeps those inside its grants read-only.

use std::path::{Path, PathBuf};

use crate::protect::git::git_vet::Layout;
use crate::protect::git::gitconfig;

/// Paths kept per repository, at most (a bound on what a hostile
/// configuration makes us carry; past it the work tree's top is named,
/// which makes the whole tree count).
pub const MAX_PATHS: usize = 1024;

/// Keys whose values are no file git runs or reads (remote addresses,
/// refspecs, branch names, identities, URL rewrites): not read.
fn names_no_file(it: &gitconfig::Item) -> bool {
    matches!(
        it.section.as_str(),
        "remote" | "branch" | "user" | "author" | "committer" | "url" | "safe" | "submodule"
    ) || matches!(
        it.name.as_str(),
        "url" | "pushurl" | "fetch" | "push" | "merge" | "insteadof" | "pushinsteadof"
    )
}

/// The paths the configuration of `layout` (its `config`,
/// `config.worktree` and their includes) names, lexically normalised.
pub fn named(layout: &Layout, home: Option<&Path>) -> Vec<PathBuf> {
    let n = crate::protect::git::git_vet::named(layout, home);
    let mut out: Vec<PathBuf> = n.includes.clone();
    out.extend(n.hooks_paths.iter().cloned());
    let mut files = vec![
        layout.common_dir.join("config"),
        layout.git_dir.join("config.worktree"),
    ];
    files.extend(n.includes);
    for f in files
        .iter()
        .take(crate::protect::git::git_vet::MAX_INCLUDES)
    {
        let Ok(Some(text)) = gitconfig::read_file(f) else {
            continue;
        };
        let own = f.parent().unwrap_or(Path::new("/")).to_path_buf();
        for it in gitconfig::parse(&text).items {
            let Some(v) = it.value.as_deref() else {
                continue;
            };
            if names_no_file(&it) {
                continue;
            }
            out.extend(crate::protect::path_words::path_words(
                v,
                &[&layout.top, &own],
                home,
            ));
            if out.len() > MAX_PATHS {
                out.truncate(MAX_PATHS);
                out.push(layout.top.clone());
                return out;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
