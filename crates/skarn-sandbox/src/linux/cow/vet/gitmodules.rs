//! A `.gitmodules` the run wrote, vetted item by item.

use std::path::Path;

use super::Rules;
use crate::protect::git::submodule_url::Bases;

/// Where the submodule URLs of the `.gitmodules` at `host_path` lead: the
/// remotes of its repository's configuration, the host's and the one the
/// run wrote in the layer (whose root is `layer_root`), and what the run
/// could reach from the work tree's top.
fn gitmodules_bases(rules: &Rules, host_path: &Path, layer_root: Option<&Path>) -> Bases {
    let top = host_path.parent().unwrap_or(&rules.ws).to_path_buf();
    let mut reach = rules.reach_for(host_path);
    reach.top = top.clone();
    let mut configs = Vec::new();
    if let Some(cfg) = crate::protect::git::submodule_url::config_of(&top) {
        if let (Some(root), Ok(rel)) = (layer_root, cfg.strip_prefix(&rules.ws)) {
            configs.push(root.join(rel));
            reach.layer = Some((rules.ws.clone(), root.to_path_buf()));
        }
        configs.push(cfg);
    }
    Bases::of(reach, &configs)
}

/// A `.gitmodules` the run wrote (`upper`) may change only in the keys
/// [`crate::protect::git::submodules::allowed`] lets a run write; every
/// other item must be in the host's file (`host_path`) already.
pub(super) fn gitmodules(
    rules: &Rules,
    upper: &Path,
    host_path: &Path,
    layer_root: Option<&Path>,
) -> Result<(), String> {
    let bases = gitmodules_bases(rules, host_path, layer_root);
    let new = crate::protect::git::gitconfig::read_file(upper)
        .map_err(|w| format!("a .gitmodules that is {w}"))?
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
        return Err(".gitmodules lines that do not parse".into());
    }
    let bad: Vec<String> = new
        .items
        .iter()
        .filter(|it| {
            !crate::protect::git::submodules::allowed(it, &bases) && !old.items.contains(it)
        })
        .map(|it| format!("{} = {:?}", it.key(), it.value.as_deref().unwrap_or("true")))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "submodule settings skarn lets no run write: {}",
            bad.join(", ")
        ))
    }
}

/// [`gitmodules`], for a `.gitmodules` staged through the index (its
/// content copied to `upper`; `layer_root` the layer's root).
pub(in crate::linux::cow) fn check_gitmodules(
    rules: &Rules,
    upper: &Path,
    host_path: &Path,
    layer_root: Option<&Path>,
) -> Result<(), String> {
    gitmodules(rules, upper, host_path, layer_root)
}
