//! The decisions' inputs ([`Rules`]), taken from a run's plan, and the
//! git files a layer leaves writable and vets when applied.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::linux::plan::{FsOp, Plan};
use crate::protect::git::remote_redirect::Reach;

/// The decisions' inputs, taken from the plan of the run (or of the next
/// run in the same workspace, for a layer left by a killed one).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// The workspace (canonical).
    pub ws: PathBuf,
    /// Protected paths, with whether a missing one may not be created
    /// (reserved in the direct mode).
    pub protected: Vec<(PathBuf, bool)>,
    /// Links home files pass through ([`crate::protect::home_links`]).
    pub link_guards: Vec<PathBuf>,
    /// `PATH` directories missing before the run, with the later ones.
    pub path_dirs: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Relative `PATH` entries (any directory they name) and the absolute
    /// `PATH` directories ([`crate::protect::path_shadow_walk`]).
    pub relative_path: (Vec<String>, Vec<PathBuf>),
    /// Program names the host's configuration runs through `PATH`
    /// ([`crate::protect::configured_programs`]).
    pub configured: Vec<String>,
    /// The workspace holds the home: its dot entries before the run.
    pub home_dots: Option<Vec<String>>,
    /// Relative `core.hooksPath` values of the system and global git
    /// configuration: a hooks directory in every repository, nested and
    /// new ones included, so refused at any depth.
    pub hooks_rel: Vec<PathBuf>,
    /// Protected `.gitmodules` files (the workspace's, nested
    /// repositories'): writable in the layer and vetted item by item when
    /// applied ([`crate::protect::git::submodules::allowed`]).
    pub gitmodules: Vec<PathBuf>,
    /// The host paths the run had (bound), with whether it could write
    /// them, and the secrets masked inside: a new remote's local URL is
    /// judged by them ([`crate::protect::git::remote_redirect`]).
    pub reach: Vec<(PathBuf, bool)>,
    /// Masked paths inside [`Rules::reach`].
    pub hidden: Vec<PathBuf>,
}

impl Rules {
    /// The rules of `plan` (`fs`: its resolved steps).
    pub fn of(plan: &Plan, fs: &[FsOp]) -> Rules {
        let mut protected = Vec::new();
        let mut gitmodules = Vec::new();
        let (mut reach, mut hidden) = (vec![(plan.workspace.clone(), true)], Vec::new());
        // A family's members share one answer: each path is looked at once
        // (the lefthook family alone named 22 paths 22 times each).
        let mut exists: std::collections::HashMap<&Path, bool> = std::collections::HashMap::new();
        for op in fs {
            match op {
                FsOp::Bind { path, access } => reach.push((
                    path.clone(),
                    *access == crate::linux::plan::Access::ReadWrite,
                )),
                FsOp::IdmapBind { path, .. } => reach.push((path.clone(), false)),
                FsOp::Mask { path, .. } => hidden.push(path.clone()),
                _ => {}
            }
            match op {
                FsOp::Protect {
                    path,
                    reserve,
                    reserve_if,
                } => {
                    if is_gitmodules(path) {
                        gitmodules.push(path.clone());
                    }
                    if vetted_in_layer(path)
                        || super::claude_worktrees::opened(&plan.workspace, path)
                    {
                        continue;
                    }
                    let r = *reserve
                        || reserve_if.iter().any(|p| {
                            *exists
                                .entry(p.as_path())
                                .or_insert_with(|| p.symlink_metadata().is_ok())
                        });
                    protected.push((path.clone(), r));
                }
                FsOp::Mask {
                    path,
                    reserve: true,
                    ..
                } => protected.push((path.clone(), true)),
                _ => {}
            }
        }
        if let Some(r) = &plan.reservation {
            for g in crate::protect::git::git_vet::guards(
                &r.workspace,
                &r.nested_roots,
                r.git_home.as_deref(),
            ) {
                if is_gitmodules(&g.path) {
                    gitmodules.push(g.path.clone());
                }
                if !vetted_in_layer(&g.path) {
                    protected.push((g.path, true));
                }
            }
        }
        let a = plan.after_run.as_ref();
        Rules {
            ws: plan.workspace.clone(),
            protected,
            link_guards: a
                .map(|a| a.link_guards.iter().map(|(p, _)| p.clone()).collect())
                .unwrap_or_default(),
            // In the layer every entry is a change: missing and existing
            // `PATH` directories alike.
            path_dirs: a
                .map(|a| {
                    let mut d = a.missing_path_dirs.clone();
                    d.extend(a.changed_path_dirs.iter().cloned());
                    d
                })
                .unwrap_or_default(),
            relative_path: a
                .map(|a| (a.relative_path.clone(), a.path_later.clone()))
                .unwrap_or_default(),
            configured: a.map(|a| a.path_configured.clone()).unwrap_or_default(),
            home_dots: a
                .and_then(|a| a.quarantine_home.as_ref())
                .filter(|q| q.home == plan.workspace)
                .map(|q| q.existing.clone()),
            hooks_rel: plan
                .reservation
                .as_ref()
                .map(|r| crate::protect::git::git_vet::global_relative_hooks(r.git_home.as_deref()))
                .unwrap_or_default(),
            gitmodules,
            reach,
            hidden,
        }
    }

    /// What the run could reach, for the repository whose configuration
    /// file is `host_path` ([`crate::protect::git::remote_redirect::Reach`]).
    pub(crate) fn reach_for(&self, host_path: &Path) -> Reach {
        let n: Vec<Component> = host_path.components().collect();
        let top = n
            .iter()
            .rposition(|c| c.as_os_str() == ".git")
            .map(|i| n[..i].iter().collect())
            .unwrap_or_else(|| self.ws.clone());
        // The workspace is the run's, writable, whatever made the rules
        // (a hand-made `Rules` of the hook's file guard has no binds).
        let mut paths = self.reach.clone();
        if !paths.iter().any(|(p, _)| *p == self.ws) {
            paths.push((self.ws.clone(), true));
        }
        Reach {
            top,
            paths,
            hidden: self.hidden.clone(),
            layer: None,
        }
    }
}

/// Whether `p` is a repository's `.git/config`: writable in the layer
/// (`git remote add`, `git config user.email` work) and vetted key by key
/// when applied (see [`config`]), instead of kept read-only.
pub(crate) fn is_git_config(p: &Path) -> bool {
    p.file_name() == Some(OsStr::new("config"))
        && p.parent().and_then(Path::file_name) == Some(OsStr::new(".git"))
}

/// Whether `p` is a repository's `.git/modules`: writable in the layer
/// (`git submodule add` clones there) and vetted entry by entry when
/// applied (hooks, configuration, redirects), instead of reserved.
pub(crate) fn is_git_modules(p: &Path) -> bool {
    p.file_name() == Some(OsStr::new("modules"))
        && p.parent().and_then(Path::file_name) == Some(OsStr::new(".git"))
}

/// Whether `p` is a `.gitmodules` (`git submodule add` writes it):
/// writable in the layer and vetted item by item when applied, as the
/// direct mode's git layer does (ADR 0181), when it is protected (see
/// [`Rules::gitmodules`]).
pub(crate) fn is_gitmodules(p: &Path) -> bool {
    p.file_name() == Some(OsStr::new(".gitmodules"))
}

/// [`is_git_config`], [`is_git_modules`] or [`is_gitmodules`]: left
/// writable in a layer.
pub(crate) fn vetted_in_layer(p: &Path) -> bool {
    is_git_config(p) || is_git_modules(p) || is_gitmodules(p)
}
