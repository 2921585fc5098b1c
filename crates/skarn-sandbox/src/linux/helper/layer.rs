//! The workspace's copy-on-write layer around the run (ADR 0130, see
//! [`crate::linux::cow`]): layers left by killed runs in the same workspace are
//! applied first; then the run's own layer is made and init mounts it in
//! place of the workspace's read-write bind; after the run its changes are
//! vetted and applied.

use std::path::PathBuf;

use crate::linux::cow;
use crate::linux::plan::{Access, FsOp, Plan};
use crate::linux::sys;
use crate::report::{RefusedChange, RestrictionReport, WorkspaceChanges};

/// The run's layer and what it needs after the run.
pub(super) struct Cow {
    /// The new-root steps: the workspace's bind replaced by the layer, no
    /// name reserved (nothing reaches the host unvetted).
    pub(super) fs: Vec<FsOp>,
    pub(super) layer: cow::Layer,
    pub(super) rules: cow::Rules,
    /// skarn's state directory for layers.
    pub(super) state: Option<std::path::PathBuf>,
    /// The reservation whose walk of the workspace was deferred to the
    /// layer's application (ADR 0259).
    pub(super) deferred: Option<crate::linux::plan::Reservation>,
}

/// Make the run's layer (None: the plan has none, or it could not be made:
/// then the run writes the workspace directly, and the report says so).
pub(super) fn start(plan: &Plan, report: &mut RestrictionReport) -> Option<Cow> {
    let wl = plan.workspace_layer.as_ref()?;
    let ws = &plan.workspace;
    let rules = cow::Rules::of(plan, &plan.fs);
    for old in cow::pending(ws, wl.state.as_deref()) {
        let base = old.base.display().to_string();
        // Vetted with what the walk of the workspace finds too (ADR 0259).
        let mut rules = rules.clone();
        if let Some(r) = &plan.reservation
            && cow::changes_workspace(&old.upper, ws)
        {
            protect(&mut rules, &super::reserve::workspace_protections(r).0);
        }
        let out = cow::finish(old, &rules);
        report.notes.push(format!(
            "a run in this workspace ended without applying its changes (it was killed): they \
             were vetted and applied now from {base}: {} applied, {} refused{}",
            out.applied.len(),
            out.refused.len(),
            refused_names(&out)
        ));
        if let Some(line) = cow::refused_line(&out) {
            warn(&line);
        }
    }
    let bound = plan
        .fs
        .iter()
        .any(|op| matches!(op, FsOp::Bind { path, access: Access::ReadWrite } if path == ws));
    if !bound {
        return None;
    }
    let layer = match cow::make(ws, wl.state.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            report.degrade(format!(
                "the workspace's copy-on-write layer could not be made ({e}): the command writes \
                 {} directly; missing protected names are reserved by placeholders and the \
                 checks after the run set aside what they find",
                ws.display()
            ));
            return None;
        }
    };
    // Root in a workspace of another owner (ADR 0180): the layer's upper
    // and work directories are the owner's, seen as root's through the
    // mapping init stacks the layer on (what the command makes there is
    // the owner's on disk, and the workspace's top is root's inside).
    if crate::linux::idmap_workspace::prepared_for(ws)
        && let Err(e) = own_like_workspace(ws, &layer)
    {
        report.degrade(format!(
            "workspace {}: its copy-on-write layer could not be given the workspace's owner \
             ({e}): files there that only their owner may write are read-only to the command",
            ws.display()
        ));
    }
    // As the default, a layer overlayfs refuses here (an old kernel, no
    // overlayfs in user namespaces, a workspace file system it cannot
    // stack on) falls back to writing the workspace directly, said in the
    // report; asked for by name, init's mount fails the set-up instead.
    if !wl.asked && !cow::probe::overlay_mounts(ws, &layer.upper, &layer.work, plan.ns.user) {
        cow::remove(layer);
        report.notes.push(format!(
            "workspace {}: overlayfs refused the copy-on-write layer here, so the command \
             writes the workspace directly (--workspace-layer direct): missing protected names \
             are reserved by placeholders for the run and the checks after the run set aside \
             what they find",
            ws.display()
        ));
        return None;
    }
    for op in &plan.fs {
        if let FsOp::Bind {
            path,
            access: Access::ReadWrite,
        } = op
            && path != ws
            && super::absorb::absorbed(ws, path)
        {
            report.notes.push(format!(
                "{} (a write grant inside the workspace) is written through the workspace's \
                 copy-on-write layer: its changes are vetted and applied after the run",
                path.display()
            ));
        }
    }
    report.notes.push(format!(
        "workspace {}: written through a copy-on-write layer ({}); its changes are applied \
         after the run, those to protected paths refused",
        ws.display(),
        if layer.same_fs {
            "on the workspace's file system: applied by rename"
        } else {
            "on another file system: applied by copy"
        }
    ));
    Some(Cow {
        fs: Vec::new(),
        layer,
        rules,
        state: wl.state.clone(),
        deferred: None,
    })
}

/// Give the layer's upper and work directories the owner and group of
/// the workspace `ws`.
fn own_like_workspace(ws: &std::path::Path, layer: &cow::Layer) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(ws)?;
    for d in [&layer.upper, &layer.work] {
        std::os::unix::fs::lchown(d, Some(m.uid()), Some(m.gid()))?;
    }
    Ok(())
}

impl Cow {
    /// Take the reservation step's resolved steps: the workspace's bind
    /// becomes the layer, and every protected path resolved there (nested
    /// repositories' files, other names of protected files) is vetted too.
    pub(super) fn take_steps(&mut self, fs: Vec<FsOp>) -> Vec<FsOp> {
        let ws = self.rules.ws.clone();
        // Only the workspace is the layer: a repository's config in
        // another writable grant (the user's other project, an enclosing
        // monorepo) is written on the host directly and nothing vets it
        // key by key, so its read-only step stays (attack atk24l F8).
        // (So is a `.claude` holding Claude Code's worktrees: their files
        // are the agent's work, the rest of it is refused when applied.)
        let in_layer = |p: &std::path::Path| {
            p.starts_with(&ws)
                && (cow::vet::vetted_in_layer(p) || cow::vet::claude_worktrees_opened(&ws, p))
        };
        for op in &fs {
            if let FsOp::Protect { path, .. } = op
                && path.starts_with(&ws)
                && cow::vet::is_gitmodules(path)
                && !self.rules.gitmodules.contains(path)
            {
                self.rules.gitmodules.push(path.clone());
            }
            if let FsOp::Protect { path, .. } = op
                && !in_layer(path)
                && !self.rules.protected.iter().any(|(p, _)| p == path)
            {
                self.rules.protected.push((path.clone(), true));
            }
        }
        self.fs = fs
            .into_iter()
            // A repository's config in the workspace stays writable in the
            // layer: its changes are vetted key by key when applied.
            .filter(|op| !matches!(op, FsOp::Protect { path, .. } if in_layer(path)))
            // A write grant inside the workspace on its mount: the layer
            // takes its writes (vetted), no bind over it (atk22h F23).
            .filter(|op| {
                !matches!(op, FsOp::Bind { path, access: Access::ReadWrite }
                    if *path != ws && super::absorb::absorbed(&ws, path))
            })
            .map(|op| match op {
                FsOp::Bind {
                    path,
                    access: Access::ReadWrite,
                } if path == ws => FsOp::Layer {
                    path,
                    upper: self.layer.upper.clone(),
                    work: self.layer.work.clone(),
                },
                other => other,
            })
            .collect();
        self.fs.clone()
    }
}

impl Cow {
    /// The rules to vet a layer of this run with (`upper`: its upper
    /// directory): with the workspace's walk deferred (ADR 0259) and a
    /// layer that changes anything, the protections only that walk finds
    /// are added first; a line when that walk stopped at its bound.
    pub(super) fn rules_for(&self, upper: &std::path::Path) -> (cow::Rules, Option<String>) {
        let mut rules = self.rules.clone();
        let mut cut = None;
        if let Some(r) = &self.deferred
            && cow::changes_workspace(upper, &self.rules.ws)
        {
            let (paths, line) = super::reserve::workspace_protections(r);
            protect(&mut rules, &paths);
            cut = line;
        }
        (rules, cut)
    }

    /// The missing protected names the reservation step found in the
    /// workspace (nested settings, what a nested `.envrc` sources, ...):
    /// reserved in the direct mode, so none may be made here either (no
    /// step names them, so [`Cow::take_steps`] does not see them).
    pub(super) fn protect_missing(&mut self, missing: &[PathBuf]) {
        protect(&mut self.rules, missing);
    }
}

/// Add `paths` to the protected paths of `rules` (a `.gitmodules` to those
/// vetted item by item; a repository's config stays vetted key by key).
fn protect(rules: &mut cow::Rules, paths: &[PathBuf]) {
    for p in paths {
        if cow::vet::is_gitmodules(p) {
            if !rules.gitmodules.contains(p) {
                rules.gitmodules.push(p.clone());
            }
        } else if !cow::vet::vetted_in_layer(p) && !rules.protected.iter().any(|(q, _)| q == p) {
            rules.protected.push((p.clone(), true));
        }
    }
}

fn refused_names(out: &cow::Outcome) -> String {
    if out.refused.is_empty() {
        return String::new();
    }
    let n: Vec<&str> = out
        .refused
        .iter()
        .take(20)
        .map(|(p, _)| p.as_str())
        .collect();
    format!(" ({})", n.join(", "))
}

pub(super) fn warn(line: &str) {
    let line = crate::protect::terminal_filter::printable(line);
    sys::write_fd(2, format!("skarn: warning: {line}\n").as_bytes());
}

/// A refused change as a denial of this run (not one the host's own
/// change during the run decided).
pub(super) fn denial(path: &str, why: &str) -> Option<crate::report::Denial> {
    (!why.starts_with("changed on the host")).then(|| crate::report::Denial {
        kind: "write".into(),
        what: path.to_string(),
        why: why.to_string(),
    })
}

/// After the run (no process of it is left): vet and apply the layer.
pub(super) fn finish(c: Cow, report: &mut RestrictionReport) {
    let (rules, cut) = c.rules_for(&c.layer.upper);
    if let Some(line) = cut {
        warn(&line);
        report.degrade(line);
    }
    let out = cow::finish(c.layer, &rules);
    for (p, why) in &out.refused {
        report.denied.extend(denial(p, why));
    }
    if let Some(line) = cow::refused_line(&out) {
        warn(&line);
    }
    for n in &out.notes {
        warn(n.strip_prefix("skarn: ").unwrap_or(n));
        report.notes.push(n.clone());
    }
    report.workspace_changes = Some(WorkspaceChanges {
        applied: out.applied,
        refused: out
            .refused
            .into_iter()
            .map(|(path, why)| RefusedChange { path, why })
            .collect(),
    });
}
