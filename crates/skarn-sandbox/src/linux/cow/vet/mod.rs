//! The protection decisions for one change in a run's layer, before it
//! reaches the workspace. The lists are the ones the direct mode uses
//! (the plan's `Protect`/`Mask` paths from [`crate::protect::persistence::ENTRIES`]
//! and [`crate::protect::git::git_vet`], [`crate::protect::persistence::any_depth_name`],
//! [`crate::protect::grant_walk::UPWARD`], [`crate::protect::git::nested_git`]'s repository
//! check, [`crate::linux::staging`]'s configuration allow-list,
//! [`crate::protect::git::git_sweep`]'s odd entries, [`crate::protect::rebase_todo`]'s state
//! directories, [`crate::protect::home_links`]' link guards and
//! [`crate::protect::path_shadow`]'s missing `PATH` directories): a change the
//! direct mode would have refused or set aside is refused here, before
//! any host program can see it.

mod build_ignored;
mod build_outputs;
mod claude_worktrees;
mod git_config;
mod git_dir;
mod git_stores;
mod gitmodules;
mod packed_refs;
mod rules;
mod work_tree;

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

pub(crate) use build_outputs::stamp as date_build_outputs;
pub(crate) use claude_worktrees::opened as claude_worktrees_opened;
pub(crate) use git_config::sanitize_config;
pub(crate) use git_dir::{git_config_file, git_rebuilt_index};
pub(super) use gitmodules::check_gitmodules;
pub(crate) use packed_refs::sanitize_packed_refs;
pub use rules::Rules;
pub(crate) use rules::{is_gitmodules, vetted_in_layer};

/// What the run did to one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Removed (a whiteout, or an entry of an opaque directory).
    Delete,
    /// A directory made or changed (its entries are vetted one by one).
    Dir,
    /// A regular file made or changed.
    File,
    /// A symbolic link, FIFO, socket or device node made.
    Special,
}

/// The top (relative to the workspace, below it) of the repository whose
/// top-level git or hook-manager file `rel` is or lies in
/// ([`crate::protect::repo_top`]), with the entry; a repository of the
/// host's or one the run made (its `.git` in the layer above `upper`).
fn nested_top_entry(
    rules: &Rules,
    rel: &Path,
    upper: &Path,
) -> Option<(PathBuf, &'static crate::protect::persistence::Entry)> {
    let n = names(rel);
    let root = upper.ancestors().nth(rel.components().count());
    for k in 1..n.len() {
        let Some(en) = crate::protect::repo_top::entry_of(&n[k..]) else {
            continue;
        };
        let top: PathBuf = n[..k].iter().collect();
        let is_repo = |base: &Path| std::fs::symlink_metadata(base.join(&top).join(".git")).is_ok();
        if is_repo(&rules.ws) || root.is_some_and(is_repo) {
            return Some((top, en));
        }
    }
    None
}

/// Whether the names `n` hold `rel`'s names in a row (the entry is `rel`
/// or below it, under any directory).
fn below_at_any_depth(n: &[&OsStr], rel: &Path) -> bool {
    let r: Vec<&OsStr> = rel.iter().collect();
    !r.is_empty() && n.windows(r.len()).any(|w| w == r.as_slice())
}

pub(super) fn names(rel: &Path) -> Vec<&OsStr> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// Whether the change `what` at `rel` (relative to the workspace) may be
/// applied; `Err` says why not. `upper` is the entry in the layer (read
/// for a file's content), `host` whether the workspace has that entry,
/// `git` the index in `rel` of the git directory it lies in, if any (a
/// `.git`, a bare repository, a submodule's git directory).
pub fn check(
    rules: &Rules,
    rel: &Path,
    what: Change,
    upper: &Path,
    host: bool,
    git: Option<usize>,
) -> Result<(), String> {
    let abs = rules.ws.join(rel);
    // Claude Code's worktrees in the workspace's `.claude`.
    let n0 = names(rel);
    if n0.first().is_some_and(|c| *c == ".claude")
        && let Some(d) = claude_worktrees::check(rules, &n0, what, upper, host, git)
    {
        return d;
    }
    // A repository's `.gitmodules` (`git submodule add` writes it): vetted
    // item by item as the direct mode's git layer does, not refused whole.
    if rules.gitmodules.contains(&abs) && what != Change::Special {
        return match what {
            Change::File => {
                let root = upper.ancestors().nth(rel.components().count());
                gitmodules::gitmodules(rules, upper, &abs, root)
            }
            Change::Delete => Ok(()),
            _ => Err("a .gitmodules that is not a regular file".into()),
        };
    }
    // The files git and its hook managers read at the top of a nested
    // repository, as at the workspace's (atk22j F8, F9; ADR 0292).
    if let Some((top, en)) = nested_top_entry(rules, rel, upper) {
        let root = upper.ancestors().nth(rel.components().count());
        if en.path == ".gitmodules" && rel == top.join(".gitmodules") {
            return match what {
                Change::File => gitmodules::gitmodules(rules, upper, &abs, root),
                Change::Delete => Ok(()),
                _ => Err("a .gitmodules that is not a regular file".into()),
            };
        }
        if matches!(what, Change::File | Change::Special) {
            return Err(format!(
                "{} at the top of the repository {}: {}",
                en.path,
                rules.ws.join(&top).display(),
                en.reason
            ));
        }
    }
    for (p, reserve) in &rules.protected {
        if abs == *p || abs.starts_with(p) {
            // A missing unreserved path may be made (as in the direct mode).
            if what != Change::Delete && (host || *reserve || abs != *p) {
                return Err("a protected path (host tools read it and run what it names)".into());
            }
            if what == Change::Delete && abs == *p {
                return Err("a protected path may not be removed".into());
            }
        }
        if what == Change::Special && p.starts_with(&abs) && abs != *p {
            return Err(format!(
                "a link or special file in place of a directory holding the protected {}",
                p.display()
            ));
        }
    }
    // A new link out of the workspace to a directory the host user can
    // write (atk22g F8).
    if what == Change::Special {
        crate::protect::links_out::check_layer_link(&rules.ws, &abs, upper)?;
    }
    if rules
        .link_guards
        .iter()
        .any(|l| abs == *l || abs.starts_with(l))
    {
        return Err("a link that home files pass through".into());
    }
    let n = names(rel);
    // The refs of a repository the run moved to the reftable format
    // (attack atk22h F40): none of its ref changes, removals included.
    if let Some(i) = git.or_else(|| n.iter().position(|c| *c == ".git"))
        && let inner = &n[(i + 1).min(n.len())..]
        && super::git_refs::ref_store(inner)
        && let (Some(up), Some(hg)) = (
            upper.ancestors().nth(inner.len()),
            abs.ancestors().nth(inner.len()),
        )
        && super::git_refs::migrating(up, hg)
    {
        return Err(
            "the run moved the refs of the host's repository to the reftable format (its \
             format keys stay the host's): the host's refs are kept"
                .into(),
        );
    }
    if what == Change::Delete {
        return Ok(());
    }
    if let Some(h) = rules.hooks_rel.iter().find(|h| below_at_any_depth(&n, h)) {
        return Err(format!(
            "{}: a hooks directory of every repository (a relative core.hooksPath of your git \
             configuration)",
            h.display()
        ));
    }
    if what != Change::Dir && n.last().is_some_and(|l| *l == ".git") {
        let linked = what == Change::File
            && crate::protect::git::repo_vet::linked_worktree(
                &abs,
                &std::fs::read(upper).unwrap_or_default(),
            );
        if !linked {
            return Err("a .git link to another repository".into());
        }
        return Ok(());
    }
    if let Some(i) = git.or_else(|| n.iter().position(|c| *c == ".git")) {
        return git_dir::git_inner(rules, &n[i + 1..], what, upper, &rules.ws.join(rel), host);
    }
    work_tree::check(rules, rel, &n, what, upper, host, &abs)
}
