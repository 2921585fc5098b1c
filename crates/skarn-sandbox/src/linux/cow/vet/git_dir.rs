//! A change inside a git directory: hooks, rebase and rerere state, refs,
//! objects and the files that redirect git.

use std::ffi::OsStr;
use std::path::Path;

use super::git_config::{config, git_depth, layer_reach};
use super::packed_refs::adds_replace_refs;
use super::{Change, Rules, names};

/// A change inside a git directory (`inner`: the names below it; the
/// directory itself, made in the run, is vetted whole by the caller with
/// [`crate::protect::git::nested_git::unsafe_repo`]).
pub(super) fn git_inner(
    rules: &Rules,
    inner: &[&OsStr],
    what: Change,
    upper: &Path,
    host_path: &Path,
    host: bool,
) -> Result<(), String> {
    let Some(last) = inner.last() else {
        return Ok(());
    };
    if what == Change::Special {
        return Err("an entry git never makes (host git would write through it or hang)".into());
    }
    let first = inner[0];
    let in_module = first == "modules" || first == "worktrees";
    if crate::protect::rebase_todo::STATE_DIRS
        .iter()
        .any(|s| first == *s || (first == "worktrees" && inner.get(2).is_some_and(|x| x == s)))
    {
        return Err(
            "rebase or cherry-pick state (`--continue` on the host runs what it names)".into(),
        );
    }
    // Rerere state: an `rr-cache` turns rerere on, and `MERGE_RR` names
    // files (anywhere) host git's next commit or merge copies in or
    // overwrites (attack atk22j F14).
    if crate::protect::git::rerere::is_state(inner) {
        return Err(
            "rerere state (host git's next commit or merge would read or write the files it \
             names, outside the work tree too)"
                .into(),
        );
    }
    let hooks = inner
        .iter()
        .position(|c| *c == "hooks")
        .is_some_and(|i| i == 0 || (in_module && first == "modules"));
    if hooks {
        let sample = last.to_string_lossy().ends_with(".sample");
        return if what == Change::Dir || sample {
            Ok(())
        } else {
            Err("a git hook".into())
        };
    }
    if what == Change::Dir {
        return Ok(());
    }
    if let Some(why) = super::git_stores::refused(inner, first == "modules", upper) {
        return Err(why);
    }
    if first == "reftable" {
        return super::super::git_refs::check_table(inner, upper, host_path, host);
    }
    // Git's pre-config remote files: with no `remote.<name>.url`, host
    // `git fetch`/`pull`/`push` take the URL of `<name>` from them
    // (attack atk22i F1).
    let legacy = |i: usize| {
        inner
            .get(i)
            .is_some_and(|x| *x == "remotes" || *x == "branches")
    };
    if legacy(0) || (first == "modules" && legacy(2)) {
        return Err(
            "a legacy remote file (host git fetch, pull and push take a remote's URL from it)"
                .into(),
        );
    }
    // What makes host git show or check out other objects than the
    // refs name, or hide files from its status (atk22e): replace refs,
    // grafts, new exclude lines.
    let tail2 = &inner[inner.len().saturating_sub(2)..];
    if inner
        .windows(2)
        .any(|w| w[0] == "refs" && w[1] == "replace")
    {
        return Err("a replace ref (host git would show and check out other objects)".into());
    }
    // Files that tell git where an object lies or what a commit's tree
    // is without reading the object (ADR 0257): host git would read
    // content the packs' vetting never saw under an old commit's name.
    // Git rebuilds them (`git gc`, `git commit-graph write`); the layer
    // leaves them out quietly ([`git_rebuilt_index`]), so this is a
    // second line.
    if rebuilt_index(inner) {
        return Err(
            "a commit graph or multi-pack index (host git would take objects' places and \
             commits' trees from it; git rebuilds it)"
                .into(),
        );
    }
    // A loose object is named by its content's hash; a file that is not
    // (an old object's file rewritten, say HEAD's tree) would be read by
    // host git as that object.
    if what == Change::File
        && let [objects, d, f] = inner
        && *objects == "objects"
        && let (Some(d), Some(f)) = (d.to_str(), f.to_str())
        && d.len() == 2
        && (f.len() == 38 || f.len() == 62)
        && d.bytes().chain(f.bytes()).all(|b| b.is_ascii_hexdigit())
        && !crate::protect::git::new_commits::loose_file_matches(upper, &format!("{d}{f}"))
    {
        return Err(
            "an object file whose content is not the object it names (host git would read it \
             in place of that object)"
                .into(),
        );
    }
    if tail2 == ["info", "grafts"] {
        return Err("grafts (host git would show and check out other history)".into());
    }
    // (Decided by content, not by whether the repository was there: the
    // layer applies a new repository's `HEAD` before its `info/exclude`,
    // and git's own template file holds only comments.)
    if tail2 == ["info", "exclude"] && adds_exclude_lines(upper, host_path) {
        return Err("exclude lines (host git status would not show files)".into());
    }
    if *last == "packed-refs" && adds_replace_refs(upper, host_path) {
        return Err("packed replace refs (host git would show other objects)".into());
    }
    if *last == "config" && (inner.len() == 1 || in_module) {
        let reach = layer_reach(rules, upper, host_path);
        return config(upper, host_path, git_depth(host_path), &reach);
    }
    if *last == "commondir" && first == "worktrees" && inner.len() == 3 {
        let t = std::fs::read(upper).unwrap_or_default();
        return if !host && t.trim_ascii_end() == b"../.." {
            Ok(())
        } else {
            Err("a commondir other than the repository's own".into())
        };
    }
    if *last == "commondir" || *last == "config.worktree" || *last == "alternates" {
        return Err(format!(
            "{} redirects git (objects, hooks or configuration)",
            last.to_string_lossy()
        ));
    }
    Ok(())
}

/// The patterns of an exclude file (blank lines and comments hide
/// nothing).
fn exclude_lines(p: &Path) -> Vec<Vec<u8>> {
    std::fs::read(p)
        .unwrap_or_default()
        .split(|b| *b == b'\n')
        .map(|l| l.trim_ascii().to_vec())
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .collect()
}

/// Whether the exclude file a run wrote (`upper`) has a pattern the
/// host's (`host_path`, missing for a new repository) has not.
fn adds_exclude_lines(upper: &Path, host_path: &Path) -> bool {
    let host = exclude_lines(host_path);
    exclude_lines(upper).iter().any(|l| !host.contains(l))
}

/// Whether `inner` (names below a git directory) is a commit graph or
/// multi-pack index.
fn rebuilt_index(inner: &[&OsStr]) -> bool {
    inner
        .windows(2)
        .any(|w| w[0] == "info" && (w[1] == "commit-graph" || w[1] == "commit-graphs"))
        || inner
            .iter()
            .any(|c| c.to_string_lossy().starts_with("multi-pack-index"))
}

/// Whether `rel` (relative to the workspace, `git` as in [`check`]) is a
/// git directory's commit graph or multi-pack index: an index git makes
/// again from the objects (`git gc` writes one), never applied by the
/// layer (ADR 0257) and left out without a warning.
pub(crate) fn git_rebuilt_index(rel: &Path, git: Option<usize>) -> bool {
    let n = names(rel);
    let Some(i) = git.or_else(|| n.iter().position(|c| *c == ".git")) else {
        return false;
    };
    rebuilt_index(&n[(i + 1).min(n.len())..])
}

/// The git configuration file at `rel` (relative to the workspace, `git`
/// the index of its git directory as in [`check`]), if it is one:
/// `.git/config`, or the configuration of a submodule's or worktree's git
/// directory.
pub(crate) fn git_config_file(rel: &Path, git: Option<usize>) -> bool {
    let n = names(rel);
    let Some(i) = git.or_else(|| n.iter().position(|c| *c == ".git")) else {
        return false;
    };
    let inner = &n[(i + 1).min(n.len())..];
    inner.last().is_some_and(|l| *l == "config")
        && (inner.len() == 1 || inner[0] == "modules" || inner[0] == "worktrees")
}
