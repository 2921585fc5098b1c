//! The direct mode's git layer (ADR 0181): the workspace's `.git` is an
//! overlayfs of its own, so that `git remote add`, `git config`,
//! `git branch -u`, `git submodule add` and `git worktree add` work (git
//! replaces `.git/config` by a rename, which a read-only bind refuses with
//! EBUSY) while the host's repository does not change during the run. When
//! the run ends its changes are vetted as the copy-on-write workspace's
//! are ([`crate::linux::cow::vet`]): allow-listed configuration keys, submodules
//! and worktrees reach the repository; hooks, code-running keys, redirects
//! and rebase state are dropped, each said in one line.

use std::path::PathBuf;

use crate::linux::cow;
use crate::linux::plan::{Access, FsOp, Plan};
use crate::report::RestrictionReport;

/// The run's git layer.
pub(super) struct GitLayer {
    git: PathBuf,
    layer: cow::Layer,
    rules: cow::Rules,
    /// The workspace's `.gitmodules` before the run (None: there was none).
    gitmodules: Option<Vec<u8>>,
}

/// skarn's state directory for layers, beside the run records.
fn state(plan: &Plan) -> Option<PathBuf> {
    plan.runs_dir
        .as_ref()
        .and_then(|r| r.parent())
        .map(|p| p.join("layers"))
}

/// Make the git layer when the run writes the workspace directly and the
/// workspace holds a repository of its own (a `.git` directory, not a
/// linked worktree's `.git` file). (With `protect_persistence` off too:
/// the repository's hooks and configuration are protected either way.)
pub(super) fn start(plan: &Plan, report: &mut RestrictionReport) -> Option<GitLayer> {
    let ws = &plan.workspace;
    let git = ws.join(".git");
    let rules = cow::Rules::of(plan, &plan.fs);
    let wanted = plan.workspace_layer.is_none()
        && !plan.workspace_idmap
        && plan
            .fs
            .iter()
            .any(|op| matches!(op, FsOp::Bind { path, access: Access::ReadWrite } if path == ws))
        && std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir())
        && std::fs::symlink_metadata(git.join("HEAD")).is_ok_and(|m| m.is_file())
        && std::fs::symlink_metadata(git.join("commondir")).is_err();
    let state = state(plan);
    if std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        for old in cow::pending(&git, state.as_deref()) {
            let out = cow::finish_git(old, &rules);
            report.notes.push(format!(
                "a run in this workspace ended without applying its changes to .git (it was \
                 killed): they were vetted and applied now: {} applied, {} refused",
                out.applied.len(),
                out.refused.len()
            ));
            tell(&out, report);
        }
    }
    if !wanted {
        return None;
    }
    let layer = match cow::make(&git, state.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            report.notes.push(format!(
                "{}: no copy-on-write layer could be made ({e}): its configuration stays \
                 read-only (git config, git remote add fail)",
                git.display()
            ));
            return None;
        }
    };
    if let Err(e) = cow::make_git_upper(&layer) {
        report.notes.push(format!(
            "{}: no copy-on-write layer could be made ({e}): its configuration stays read-only",
            git.display()
        ));
        cow::remove(layer);
        return None;
    }
    report.notes.push(format!(
        "{}: written through a copy-on-write layer; its changes are applied after the run, \
         configuration keys that run programs, hooks and redirects dropped (ADR 0181)",
        git.display()
    ));
    let gitmodules = std::fs::read(ws.join(".gitmodules")).ok();
    Some(GitLayer {
        git,
        layer,
        rules,
        gitmodules,
    })
}

impl GitLayer {
    /// The paths whose protection the layer takes over: `.git`, and
    /// `.gitmodules` (`git submodule add` writes it; vetted after the run,
    /// see [`crate::protect::git::submodules`]), and the layer's own
    /// directory when it lies in the workspace (a workspace on another
    /// file system than skarn's state, e.g. tmpfs): its upper `.git` is
    /// not a nested repository to reserve names in (that made every run
    /// there warn about `.git/config`, `hooks`, `modules` and `objects`).
    pub(super) fn left_to_layer(&self) -> Vec<PathBuf> {
        let mut v = vec![self.git.clone(), self.rules.ws.join(".gitmodules")];
        if self.layer.base.starts_with(&self.rules.ws) {
            v.push(self.layer.base.clone());
        }
        v
    }

    /// The resolved steps with the layer mounted over `.git` right after
    /// the workspace's bind (the protections inside `.git` were left out
    /// by the reservation step; the ones of other places stay).
    pub(super) fn take_steps(&mut self, fs: Vec<FsOp>) -> Vec<FsOp> {
        let ws = self.rules.ws.clone();
        let mut out = Vec::with_capacity(fs.len() + 1);
        for op in fs {
            if let FsOp::Protect { path, .. } = &op
                && self.left_to_layer().iter().any(|g| path.starts_with(g))
            {
                continue;
            }
            // A write grant of the `.git` or inside it (`--write .git`) on
            // its mount: the layer takes its writes, vetted (atk22h F23).
            if let FsOp::Bind {
                path,
                access: Access::ReadWrite,
            } = &op
                && super::absorb::absorbed(&self.git, path)
            {
                continue;
            }
            let after =
                matches!(&op, FsOp::Bind { path, access: Access::ReadWrite } if *path == ws);
            out.push(op);
            if after {
                out.push(FsOp::Layer {
                    path: self.git.clone(),
                    upper: cow::git_upper(&self.layer),
                    work: self.layer.work.clone(),
                });
            }
        }
        out
    }
}

fn tell(out: &cow::Outcome, report: &mut RestrictionReport) {
    for (p, why) in &out.refused {
        let line = format!("{p} was not applied to the repository: {why}");
        super::layer::warn(&line);
        report.notes.push(line);
        report.denied.extend(super::layer::denial(p, why));
    }
    for n in &out.notes {
        let n = n.strip_prefix("skarn: ").unwrap_or(n);
        super::layer::warn(n);
        report.notes.push(n.to_string());
    }
}

/// After the run (no process of it is left): vet and apply the layer.
pub(super) fn finish(g: GitLayer, report: &mut RestrictionReport) {
    let out = cow::finish_git(g.layer, &g.rules);
    tell(&out, report);
    // After the layer is applied: the repository's remotes as host git
    // will read them.
    let config = g.rules.ws.join(".git/config");
    let bases = crate::protect::git::submodule_url::Bases::of(
        g.rules.reach_for(&config),
        std::slice::from_ref(&config),
    );
    for line in crate::protect::git::submodules::after(
        &g.rules.ws.join(".gitmodules"),
        g.gitmodules.as_deref(),
        &bases,
    ) {
        super::layer::warn(&line);
        report.notes.push(line);
    }
}
