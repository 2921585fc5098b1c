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

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::linux::plan::{FsOp, Plan};
use crate::protect::git::remote_redirect::{Reach, redirects_host_remote};
use crate::protect::git::submodule_url::Bases;

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
                    if vetted_in_layer(path) {
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

/// Whether the names `n` hold `rel`'s names in a row (the entry is `rel`
/// or below it, under any directory).
fn below_at_any_depth(n: &[&OsStr], rel: &Path) -> bool {
    let r: Vec<&OsStr> = rel.iter().collect();
    !r.is_empty() && n.windows(r.len()).any(|w| w == r.as_slice())
}

fn names(rel: &Path) -> Vec<&OsStr> {
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
    // A repository's `.gitmodules` (`git submodule add` writes it): vetted
    // item by item as the direct mode's git layer does, not refused whole.
    if rules.gitmodules.contains(&abs) && what != Change::Special {
        return match what {
            Change::File => {
                let root = upper.ancestors().nth(rel.components().count());
                gitmodules(rules, upper, &abs, root)
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
                Change::File => gitmodules(rules, upper, &abs, root),
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
        return git_inner(rules, &n[i + 1..], what, upper, &rules.ws.join(rel), host);
    }
    // (The dependency and build trees, `target/`, `.venv/`,
    // `node_modules/`, are vetted like any other directory, as the direct
    // mode's check after the run does: attack atk24d F9.)
    if what != Change::Dir {
        // By the whole path: a workspace that is itself a site-packages
        // directory, or lies in one, is judged by where it is (atk22g F2).
        let whole = names(&abs);
        crate::protect::venv_guard::check_layer_change(
            &whole,
            what == Change::File,
            upper,
            host,
            &abs,
        )?;
        crate::protect::venv_programs::check_layer_change(&rules.ws, &n, what == Change::Delete)?;
        if what != Change::Delete {
            crate::protect::pyc_guard::check_layer_change(rel)?;
        }
    }
    if let Some(c) = n
        .iter()
        .find(|c| crate::protect::py_startup::customize_module(c))
    {
        return Err(format!(
            "{}: python imports it at start from any directory on its path (a plain .pth \
             line names the directory, PYTHONPATH)",
            c.to_string_lossy()
        ));
    }
    if let Some(c) = n
        .iter()
        .find(|c| crate::protect::persistence::any_depth_name(c))
    {
        return Err(format!(
            "{}: agents, editors and shells read it in any directory",
            c.to_string_lossy()
        ));
    }
    for (k, c) in n.iter().enumerate() {
        if let Some((u, inner, why)) = crate::protect::grant_walk::upward_entry(c) {
            let leaf = k + 1 == n.len();
            let inside = n.get(k + 1).is_some_and(|x| inner.iter().any(|f| x == f));
            // (A file named `mise` or `.config` is no configuration: mise
            // reads only the directories. A link by that name is one:
            // the tools follow it to a directory whose files carry no
            // protected name, atk22i F8.)
            let dir_only = crate::protect::grant_walk::upward_dir_only(u);
            let as_dir = !dir_only || what == Change::Special;
            if inner.is_empty() || inside || (leaf && what != Change::Dir && as_dir) {
                return Err((*why).to_string());
            }
        }
    }
    if n.len() == 1
        && n[0]
            .to_string_lossy()
            .to_lowercase()
            .ends_with(crate::protect::persistence::WORKSPACE_FILE_SUFFIX)
    {
        return Err("an editor workspace file (tasks and settings applied on open)".into());
    }
    // Git-hook managers' configuration in any `package.json` (or
    // lint-staged's `package.yaml`): host git hooks run what it names; the
    // rest of the file may change, those keys not.
    if what == Change::File
        && n.last()
            .is_some_and(|l| crate::protect::package_json::is_config_name(&l.to_string_lossy()))
        && crate::protect::package_json::changes_hook_config(upper, &abs)
    {
        return Err(
            "a package.json or package.yaml with another git-hook configuration (lint-staged, \
             husky, ...: host git hooks run the commands it names on the next commit)"
                .into(),
        );
    }
    // Environment files agents load at start (ADR 0246): judged by what
    // they set.
    if let Some(last) = n.last()
        && crate::protect::dotenv::is_env_file(last)
    {
        match what {
            Change::File => {
                if let Some(why) = crate::protect::dotenv::judge(upper) {
                    return Err(format!(
                        "an environment file agents and runtimes load at their start on the \
                         host: {why}"
                    ));
                }
            }
            Change::Special => {
                return Err(
                    "a link or special file in place of an environment file agents load at \
                     their start"
                        .into(),
                );
            }
            _ => {}
        }
    }
    if crate::protect::persistence::AFTER_RUN_TOP
        .iter()
        .any(|p| rel.starts_with(p))
    {
        return Err(
            "a file a tool started here reads and runs what it names (interpreters' start-up \
             files, yarn, mise, Copilot's hooks)"
                .into(),
        );
    }
    if let (Some(ex), Some(first)) = (&rules.home_dots, n.first()) {
        let f = first.to_string_lossy();
        if f.starts_with('.') && !ex.iter().any(|e| *e == f) {
            return Err("a new dot entry of the home (host programs read them by name)".into());
        }
    }
    // A link made at a PATH directory the host lacks, or above one, makes
    // the host's shell run what it leads to (attack atk22i F7).
    if what == Change::Special {
        if let Some((dir, _)) = rules.path_dirs.iter().find(|(d, _)| d.starts_with(&abs)) {
            return Err(format!(
                "{} is on PATH: a link there or above it would make the host's shell run the \
                 programs it leads to",
                dir.display()
            ));
        }
        if crate::protect::path_shadow_walk::link_on_the_way(&abs, &rules.relative_path.0) {
            return Err(
                "a relative entry of your PATH names this place or one below it: a link here \
                 would make the host's shell run the programs it leads to"
                    .into(),
            );
        }
    }
    if what != Change::Dir
        && let Some(name) = abs.file_name()
    {
        for (dir, later) in &rules.path_dirs {
            if abs.parent() == Some(dir.as_path())
                && crate::protect::path_shadow::shadows(name, later, &rules.configured)
            {
                return Err(format!(
                    "{} is on PATH: this program would shadow the later one",
                    dir.display()
                ));
            }
        }
        let (rels, later) = &rules.relative_path;
        if let Some(dir) = abs.parent()
            && crate::protect::path_shadow_walk::named_by(dir, rels)
            && crate::protect::path_shadow::shadows(name, later, &rules.configured)
        {
            return Err(format!(
                "{} is on PATH in a shell there (a relative entry of your PATH): this \
                 program would shadow the later one",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// A change inside a git directory (`inner`: the names below it; the
/// directory itself, made in the run, is vetted whole by the caller with
/// [`crate::protect::git::nested_git::unsafe_repo`]).
fn git_inner(
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
    if first == "reftable" {
        return super::git_refs::check_table(inner, upper, host_path, host);
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
fn gitmodules(
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
pub(super) fn check_gitmodules(
    rules: &Rules,
    upper: &Path,
    host_path: &Path,
    layer_root: Option<&Path>,
) -> Result<(), String> {
    gitmodules(rules, upper, host_path, layer_root)
}

/// The replace-ref lines of a `packed-refs` file.
fn replace_lines(p: &Path) -> Vec<String> {
    std::fs::read(p)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| l.contains("refs/replace/"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the `packed-refs` a run wrote names a replace ref the host's
/// does not.
fn adds_replace_refs(upper: &Path, host_path: &Path) -> bool {
    let host = replace_lines(host_path);
    replace_lines(upper).iter().any(|l| !host.contains(l))
}

/// Drop from the `packed-refs` a run wrote (`upper`, rewritten in place)
/// the replace refs the host's file does not have, with their peeled
/// lines; the other refs (`git pack-refs --all` moves every branch there)
/// are applied. One line for the user when something was dropped.
pub(crate) fn sanitize_packed_refs(upper: &Path, host_path: &Path) -> Option<String> {
    if !adds_replace_refs(upper, host_path) {
        return None;
    }
    let host = replace_lines(host_path);
    let text = String::from_utf8_lossy(&std::fs::read(upper).ok()?).into_owned();
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for l in text.lines() {
        if l.starts_with('^') {
            if !skipping {
                out.push_str(l);
                out.push('\n');
            }
            continue;
        }
        skipping = l.contains("refs/replace/") && !host.iter().any(|h| h == l);
        if !skipping {
            out.push_str(l);
            out.push('\n');
        }
    }
    let tmp = upper.with_extension("skarn-vetted");
    std::fs::write(&tmp, out)
        .and_then(|()| std::fs::rename(&tmp, upper))
        .ok()?;
    Some("replace refs were dropped: host git would show and check out other objects".into())
}

/// How many directories below the workspace the git directory holding
/// the configuration file `host_path` lies (its `core.worktree` may climb
/// that many, see [`crate::protect::git::repo_vet::allowed_key_at`]); counted from the
/// last `.git` component.
fn git_depth(host_path: &Path) -> Option<usize> {
    let n: Vec<Component> = host_path.components().collect();
    let i = n.iter().rposition(|c| c.as_os_str() == ".git")?;
    // `.git/config`: 1; `.git/modules/sub/config`: 3.
    Some(n.len() - 1 - i)
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

/// [`Rules::reach_for`] of the configuration file `upper` of the layer
/// (at `host_path` in the workspace), with the layer's root: a URL
/// through a link the layer adds is not readable (attack atk22i F6).
fn layer_reach(rules: &Rules, upper: &Path, host_path: &Path) -> Reach {
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
fn config(
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
