//! A git configuration file the run wrote, vetted key by key.

use std::path::{Component, Path};

use super::Rules;
use crate::protect::git::remote_redirect::{Reach, redirects_host_remote};

/// How many directories below the workspace the git directory holding
/// the configuration file `host_path` lies (its `core.worktree` may climb
/// that many, see [`crate::protect::git::repo_vet::allowed_key_at`]); counted from the
/// last `.git` component.
pub(super) fn git_depth(host_path: &Path) -> Option<usize> {
    let n: Vec<Component> = host_path.components().collect();
    let i = n.iter().rposition(|c| c.as_os_str() == ".git")?;
    // `.git/config`: 1; `.git/modules/sub/config`: 3.
    Some(n.len() - 1 - i)
}

/// [`Rules::reach_for`] of the configuration file `upper` of the layer
/// (at `host_path` in the workspace), with the layer's root: a URL
/// through a link the layer adds is not readable (attack atk22i F6).
pub(super) fn layer_reach(rules: &Rules, upper: &Path, host_path: &Path) -> Reach {
    let mut reach = rules.reach_for(host_path);
    if let Ok(rel) = host_path.strip_prefix(&rules.ws)
        && let Some(root) = upper.ancestors().nth(rel.components().count())
    {
        reach.layer = Some((rules.ws.clone(), root.to_path_buf()));
    }
    reach
}

/// Drop from the configuration the run wrote (`upper`, rewritten in
/// place) every item that is neither allow-listed nor in the workspace's
/// file (`host_path`) already, with the same value; the rest reaches the
/// repository. Returns one line per dropped item. `Err` when the text
/// does not parse (the whole file is then refused by [`check`]).
pub(crate) fn sanitize_config(
    rules: &Rules,
    upper: &Path,
    host_path: &Path,
) -> Result<Vec<String>, String> {
    let reach = layer_reach(rules, upper, host_path);
    let new = crate::protect::git::gitconfig::read_file(upper)
        .map_err(|w| format!("a git config that is {w}"))?
        .unwrap_or_default();
    let old = crate::protect::git::gitconfig::read_file(host_path)
        .ok()
        .flatten()
        .unwrap_or_default();
    let (pn, po) = (
        crate::protect::git::gitconfig::parse(&new),
        crate::protect::git::gitconfig::parse(&old),
    );
    if pn.bad_lines.len() > po.bad_lines.len() {
        return Err("git config lines that do not parse".into());
    }
    let depth = git_depth(host_path);
    let all = pn.items.clone();
    let sends = |it: &crate::protect::git::gitconfig::Item| {
        redirects_host_remote(it, &po.items, &all, &reach)
            || crate::protect::git::safe_keys::changes_repository_format(it, &po.items)
    };
    let (mut keep, drop): (Vec<_>, Vec<_>) = pn.items.into_iter().partition(|it| {
        (crate::protect::git::repo_vet::allowed_key_at(it, depth) && !sends(it))
            || po.items.contains(it)
    });
    if drop.is_empty() {
        return Ok(Vec::new());
    }
    // A redirect replaced the host's value: the host's items of that key
    // come back (the remote keeps its URL, the branch its upstream).
    for d in drop.iter().filter(|d| sends(d)) {
        let same = |h: &&crate::protect::git::gitconfig::Item| {
            h.section == d.section && h.sub == d.sub && h.name == d.name
        };
        for h in po.items.iter().filter(same) {
            if !keep.contains(h) {
                keep.push(h.clone());
            }
        }
    }
    // Only dropped items changed: the host's text as it was (comments and
    // layout kept); else the kept items, written anew.
    let text = if keep == po.items {
        old
    } else {
        crate::protect::git::gitconfig::write(&keep)
    };
    let tmp = upper.with_extension("skarn-vetted");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, upper))
        .map_err(|e| format!("a git config that could not be vetted ({e})"))?;
    Ok(drop
        .iter()
        .map(|it| {
            format!(
                "git config {} = {:?} was dropped: it runs programs or redirects git (allowed: \
                 identity, new remotes naming a local repository the run could read, branches \
                 tracking the host's remotes, submodules; see docs/sandbox.md)",
                it.key(),
                it.value.as_deref().unwrap_or("true")
            )
        })
        .collect())
}

/// A git configuration may change only in allow-listed keys
/// ([`crate::protect::git::repo_vet::allowed_key_at`]): every other item must be in the
/// host's file already, with the same value.
pub(super) fn config(
    upper: &Path,
    host_path: &Path,
    depth: Option<usize>,
    reach: &Reach,
) -> Result<(), String> {
    let new = crate::protect::git::gitconfig::read_file(upper)
        .map_err(|w| format!("a git config that is {w}"))?
        .unwrap_or_default();
    let old = crate::protect::git::gitconfig::read_file(host_path)
        .ok()
        .flatten()
        .unwrap_or_default();
    let (new, old) = (
        crate::protect::git::gitconfig::parse(&new),
        crate::protect::git::gitconfig::parse(&old),
    );
    if new.bad_lines.len() > old.bad_lines.len() {
        return Err("git config lines that do not parse".into());
    }
    let bad: Vec<String> = new
        .items
        .iter()
        .filter(|it| {
            let allowed = crate::protect::git::repo_vet::allowed_key_at(it, depth)
                && !redirects_host_remote(it, &old.items, &new.items, reach)
                && !crate::protect::git::safe_keys::changes_repository_format(it, &old.items);
            !allowed && !old.items.contains(it)
        })
        .map(|it| it.key())
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "git config keys that run programs or redirect git: {}",
            bad.join(", ")
        ))
    }
}
