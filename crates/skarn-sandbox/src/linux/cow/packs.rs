//! The packs a run made in each git directory of a layer, vetted before
//! the layer is applied (ADR 0257, extended by ADR 0286): the
//! workspace's `.git`, its submodules' git directories
//! (`.git/modules/<name>`, nested), and the repositories nested in the
//! workspace whose git directory the run wrote (with their submodules').
//! Each is compared with its host copy as it was before the run
//! ([`crate::protect::git::new_packs::vet_layer`]); a repository the run
//! made whole has no host copy, so all its commits are judged.

use std::path::{Path, PathBuf};

use super::{Layer, Outcome, Rules, git_upper, since_time};

/// Vet the new packs of every git directory of `layer` (`tops`: the work
/// trees [`super::repo_tops`] found, the workspace first). Returns the
/// objects directories (relative to the workspace) whose removals by the
/// run must not be applied: a pack of theirs was set aside.
pub(super) fn vet(
    layer: &Layer,
    rules: &Rules,
    tops: &[PathBuf],
    out: &mut Outcome,
) -> Vec<PathBuf> {
    let since = since_time(layer.since);
    let mut keep = Vec::new();
    for top in tops {
        let Ok(rel) = top.strip_prefix(&rules.ws) else {
            continue;
        };
        let rel_git = rel.join(".git");
        let upper = if rel.as_os_str().is_empty() {
            git_upper(layer)
        } else {
            layer.upper.join(&rel_git)
        };
        vet_one(
            &upper,
            &rules.ws.join(&rel_git),
            top,
            &rules.ws,
            &rel_git,
            since,
            out,
            &mut keep,
        );
        // The submodules' git directories, judged as at their own top (as
        // their loose commits are: `new_commits::vet`).
        let mut modules = Vec::new();
        crate::protect::git::new_commits::module_dirs(&upper.join("modules"), 0, &mut modules);
        for m in modules {
            let Ok(inner) = m.strip_prefix(&upper) else {
                continue;
            };
            let rel_m = rel_git.join(inner);
            let host = rules.ws.join(&rel_m);
            vet_one(&m, &host, &host, &rules.ws, &rel_m, since, out, &mut keep);
        }
    }
    keep
}

/// One git directory: `upper` the layer's copy, `host` the host's (may
/// be missing), `work` its work tree (inside the workspace `bound`), `rel`
/// its path in the workspace.
#[allow(clippy::too_many_arguments)]
fn vet_one(
    upper: &Path,
    host: &Path,
    work: &Path,
    bound: &Path,
    rel: &Path,
    since: std::time::SystemTime,
    out: &mut Outcome,
    keep: &mut Vec<PathBuf>,
) {
    if !std::fs::symlink_metadata(upper.join("objects/pack")).is_ok_and(|m| m.is_dir()) {
        return;
    }
    if std::fs::symlink_metadata(host).is_ok_and(|m| !m.is_dir()) {
        return;
    }
    let v = crate::protect::git::new_packs::vet_layer(upper, host, work, bound, since);
    for l in v.lines {
        out.refused
            .push((rel.join("objects/pack").display().to_string(), l));
    }
    if v.keep_objects {
        keep.push(rel.join("objects"));
    }
}
