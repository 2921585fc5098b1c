//! The reservation step ([`crate::linux::plan::Reservation`]): before any
//! namespace exists, look at the workspace's persistence paths on the host
//! and turn the plan's `Protect` and reserving `Mask` steps into the steps
//! init mounts. Existing paths are bound read-only by init; missing
//! reserved ones get a placeholder ([`crate::protect::placeholder`], covered
//! read-only, removed after the run) so they cannot be created during it.
//! The git directory follows git's effective layout and configuration
//! ([`crate::protect::git::git_vet`]); a missing `.git` is staged ([`crate::linux::staging`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::release::{Reserved, open_dir};
use super::ws_entries::WsEntries;
use crate::linux::plan::{Access, FsOp, Plan, Reservation};
use crate::protect::placeholder::{is_placeholder, make_socket_inode};

/// Messages of the reservation step.
#[derive(Default)]
pub(super) struct ReserveNotes {
    /// Report notes (status unchanged), added at once.
    pub(super) info: Vec<String>,
    /// Gaps (lower the status), added after the run.
    pub(super) degraded: Vec<String>,
    /// The walk of the writable grants did not cover them all: why, and
    /// what the run loses (no unix socket; ADR 0204).
    pub(super) walk_cut: Option<String>,
    /// The walk stopped before it reached every ordinary directory: a
    /// repository it did not find is vetted after the run only when
    /// changed during it.
    pub(super) repos_cut: bool,
    /// The unix sockets the walk found, with their (device, inode).
    pub(super) socket_pins: Vec<(PathBuf, (u64, u64))>,
    /// The workspace, a copy-on-write layer, was not walked before the
    /// run (ADR 0259): what only that walk finds is looked for when the
    /// layer is applied, if it changes anything ([`workspace_protections`]).
    pub(super) ws_walk_deferred: bool,
}

/// One protection to resolve: path, reserve when missing, is a mask.
type Op = (PathBuf, bool, bool);

/// Run the reservation step: the steps init mounts, and what to undo after
/// the run. With `git_layer` (the workspace's `.git`, a copy-on-write
/// layer of its own, ADR 0181) nothing inside it is reserved or bound.
/// With `layered` (the workspace is a copy-on-write layer, ADR
/// 0130) nothing is made on the host: no placeholder, empty file or stage
/// (what the run creates is vetted before it reaches the workspace); the
/// existing protected paths, other names of protected places and sockets
/// are resolved as always.
pub(super) fn reserve(
    plan: &Plan,
    r: &Reservation,
    notes: &mut ReserveNotes,
    layered: bool,
    git_layer: &[PathBuf],
) -> Reserved {
    let ws = r.workspace.clone();
    let lock_fd = open_dir(&ws).unwrap_or(-1);
    if lock_fd >= 0 && other_run_in(&ws) {
        // Another run in this workspace (each holds the workspace's lock
        // shared) can rename directories while this one walks and mounts:
        // a host server's socket could move out from under the hiding
        // (attack atk24e F1). This run then makes no unix socket.
        notes.walk_cut.get_or_insert_with(|| {
            format!(
                "another skarn run in {} is under way, and its command could move a host \
                 server's unix socket while this run hides them: unix sockets are unavailable \
                 in this run (run the two one after the other to keep them)",
                ws.display()
            )
        });
    }
    if lock_fd >= 0 {
        // SAFETY: lock_fd is open. Blocks only while another run removes
        // its placeholders.
        unsafe { libc::flock(lock_fd, libc::LOCK_SH) };
    }
    let git = &r.git;
    let git_md = std::fs::symlink_metadata(git).ok();
    let unborn = git_md.is_none() || crate::linux::staging::is_unborn(git);
    let stage = if unborn && !layered {
        match crate::linux::staging::prepare(&ws) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.degraded.push(format!(
                    "could not stage a new .git ({e}); .git is reserved instead"
                ));
                None
            }
        }
    } else {
        None
    };
    let git_is_dir = git_md.as_ref().is_some_and(|m| m.is_dir());
    // A `.git` that is a symbolic link to the git directory (atk24l F7):
    // its entries are protected where they are.
    let git_link = git_md
        .as_ref()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::canonicalize(git).ok())
        .filter(|r| r.is_dir());
    let (mut ops, mut out, at) = planned_ops(
        plan,
        git,
        stage.is_some(),
        git_is_dir,
        git_link.as_deref().map(|l| (l, r.nested_roots.as_slice())),
    );
    let mut empty_kind = r.empty_files.clone();
    // (Only when the workspace is the one writable grant walked: a nested
    // repository's configuration may name a file in another grant, which
    // the run writes directly, so it must be known before the run.)
    let defer =
        layered && layer_covers(&plan.fs, &ws) && r.nested_roots.iter().all(|p| *p == r.workspace);
    let mut pins = Vec::new();
    let nested = nested_repos(r, &mut ops, &mut empty_kind, notes, defer, &mut pins);
    // Linked worktrees' own git directories (`.git/worktrees/<name>/`):
    // their `config.worktree` (read with extensions.worktreeConfig; an
    // empty one is harmless) and `commondir`, `gitdir` (where host git in
    // that worktree goes for hooks and configuration).
    if let Ok(rd) = std::fs::read_dir(r.git.join("worktrees")) {
        for e in rd.flatten().take(256) {
            let d = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            empty_kind.push(d.join("config.worktree"));
            ops.push((d.join("config.worktree"), true, false));
            for f in ["commondir", "gitdir"] {
                ops.push((d.join(f), false, false));
            }
        }
    }
    // A missing `objects/info/alternates` is reserved as an empty file:
    // git reads it on every object lookup, and an empty one is "no
    // alternates" where an unreadable placeholder makes git warn.
    for (p, _, _) in &ops {
        if p.ends_with("objects/info/alternates") {
            empty_kind.push(p.clone());
        }
    }
    if stage.is_none() {
        let guards =
            crate::protect::git::git_vet::guards(&ws, &r.nested_roots, r.git_home.as_deref());
        let mut extra = Vec::new();
        for g in guards {
            if g.empty_file {
                empty_kind.push(g.path.clone());
            }
            match ops.iter_mut().find(|(p, _, _)| *p == g.path) {
                Some(o) => o.1 |= g.reserve,
                None => {
                    extra.push(g.path.display().to_string());
                    ops.push((g.path, g.reserve, false));
                }
            }
        }
        if !extra.is_empty() {
            notes.info.push(format!(
                "read-only as named by the effective git configuration: {}",
                extra.join(", ")
            ));
        }
    }
    // The workspace's `.git` is a copy-on-write layer of its own (ADR
    // 0181): nothing is reserved or bound read-only in it, every change is
    // vetted before it reaches the repository.
    ops.retain(|(p, _, _)| !git_layer.iter().any(|g| p.starts_with(g)));
    through_links(&mut ops, &r.nested_roots);
    let mut done = Resolved {
        layered,
        ws: ws.clone(),
        // Listed here, right before the names are resolved: a name the
        // host removes after this is caught by init (see mounts), one it
        // creates is still protected by the bind of the existing path.
        entries: Some(WsEntries::read(&ws)),
        // The workspace is a directory when its lock could be opened:
        // searches for a missing component start there, not at `/`.
        known_dir: (lock_fd >= 0).then(|| ws.clone()),
        ..Resolved::default()
    };
    // (Pins first: a protection below a pinned directory is mounted on
    // the pin, not hidden by it.)
    done.steps
        .extend(pins.into_iter().map(|path| FsOp::Pin { path }));
    for op in ops {
        resolve(op, &empty_kind, &mut done, notes);
    }
    for step in done.steps.iter_mut() {
        if let FsOp::Mask { path, pin, .. } = step
            && let Some((_, id)) = notes.socket_pins.iter().find(|(p, _)| p == path)
        {
            *pin = Some(*id);
        }
    }
    if let Some(s) = &stage {
        done.steps.push(FsOp::Stage {
            path: git.clone(),
            from: s.clone(),
        });
        notes.info.push(
            "the workspace has no .git: a repository created by the command is staged and \
             moved into place after the run without hooks or code-running configuration"
                .into(),
        );
    }
    if !done.placeholders.is_empty() {
        notes.info.push(format!(
            "{} missing persistence paths are reserved during the run by placeholders \
             (unreadable socket inodes, removed afterwards)",
            done.placeholders.len()
        ));
    }
    let at = at.unwrap_or(out.len());
    out.splice(at..at, done.steps);
    Reserved {
        fs: out,
        lock_fd,
        paths: done.placeholders,
        sweep: done.sweep,
        git_was_missing: layered && git_md.is_none(),
        stage,
        ws,
        absent: done.absent,
        empties: done.empties,
        nested,
    }
}

/// Split the plan's steps: the protections to resolve, the other steps,
/// and where the resolved ones go (the first protection's place).
fn planned_ops(
    plan: &Plan,
    git: &Path,
    staged: bool,
    git_is_dir: bool,
    git_link: Option<(&Path, &[PathBuf])>,
) -> (Vec<Op>, Vec<FsOp>, Option<usize>) {
    let mut ops: Vec<Op> = Vec::new();
    let mut out = Vec::new();
    let mut at = None;
    // (Families of names share one answer: each path is looked at once.)
    let mut exists: HashMap<PathBuf, bool> = HashMap::new();
    for op in &plan.fs {
        let (path, reserve, reserve_if) = match op {
            FsOp::Protect {
                path,
                reserve,
                reserve_if,
            } => (path, reserve, reserve_if.as_slice()),
            FsOp::Mask {
                path,
                reserve: true,
                ..
            } => {
                // A secret under a writable grant: reserved when missing.
                at.get_or_insert(out.len());
                ops.push((path.clone(), true, true));
                continue;
            }
            // A pin through a `.git` link: the protection of where it
            // leads pins that place's own parents (see mounts).
            FsOp::Pin { path } if git_link.is_some() && path.starts_with(git) => continue,
            _ => {
                out.push(op.clone());
                continue;
            }
        };
        at.get_or_insert(out.len());
        let reserve = *reserve
            || reserve_if.iter().any(|p| {
                // Another run's placeholder is not the tool's file: it
                // must not make this run reserve (and leave) more names.
                *exists.entry(p.clone()).or_insert_with(|| {
                    std::fs::symlink_metadata(p).is_ok() && is_placeholder(p).is_none()
                })
            });
        if path.starts_with(git) && path != git {
            if staged {
                continue; // staged: vetted after the run
            }
            if !git_is_dir {
                // .git missing (no stage), a gitdir file or a link:
                // protect .git itself.
                if !ops.iter().any(|(p, _, _)| p == git) {
                    ops.push((git.to_path_buf(), true, false));
                }
                // A link: the same entries where it leads (a place outside
                // the writable grants is read-only already).
                if let (Some((real, writable)), Ok(rest)) = (git_link, path.strip_prefix(git)) {
                    let p = real.join(rest);
                    if writable.iter().any(|w| p.starts_with(w)) {
                        ops.push((p, reserve, false));
                    }
                }
                continue;
            }
        }
        ops.push((path.clone(), reserve, false));
    }
    (ops, out, at)
}

/// Whether the workspace `ws`, a copy-on-write layer, shows only what the
/// layer shows: no step puts a host directory or file strictly inside it
/// (a bind of another grant, a store, a stage), so a host server's unix
/// socket there is reachable through no name (overlayfs does not connect
/// to a lower layer's socket: ADR 0259). (A pin or a protection binds the
/// new root's own view of its path onto itself: the layer's.)
pub(super) fn layer_covers(fs: &[FsOp], ws: &Path) -> bool {
    !fs.iter().any(|op| {
        let p = match op {
            FsOp::Bind { path, .. }
            | FsOp::IdmapBind { path, .. }
            | FsOp::Home { path }
            | FsOp::Store { path, .. }
            | FsOp::Stage { path, .. } => path,
            _ => return false,
        };
        let absorbed = matches!(
            op,
            FsOp::Bind {
                access: Access::ReadWrite,
                ..
            }
        ) && super::absorb::absorbed(ws, p);
        p != ws && p.starts_with(ws) && !absorbed
    })
}

/// Hidden places (secret: true) that have another name somewhere (a
/// non-directory with more than one link), recorded for the walk.
fn linked_secrets(places: &[(PathBuf, bool)], named: usize) -> crate::protect::grant_walk::Inodes {
    use std::os::unix::fs::MetadataExt;
    let mut inodes = crate::protect::grant_walk::Inodes::default();
    for (i, (p, secret)) in places.iter().enumerate() {
        let follow = i >= named;
        let m = if follow {
            std::fs::metadata(p)
        } else {
            std::fs::symlink_metadata(p)
        };
        if *secret && m.is_ok_and(|m| !m.is_dir() && m.nlink() > 1) {
            inodes.add(p, i, follow);
        }
    }
    inodes
}

/// The protected paths of the workspace that only its walk finds (nested
/// repositories' files, what their configuration and a nested `.envrc`
/// name, settings and files read in any directory), for vetting a layer
/// whose walk was deferred (ADR 0259): the existing ones and the missing
/// ones the direct mode reserves; and a line when the walk stopped at its
/// bound.
pub(super) fn workspace_protections(r: &Reservation) -> (Vec<PathBuf>, Option<String>) {
    let mut only_ws = r.clone();
    only_ws.nested_roots = vec![r.workspace.clone()];
    let (mut ops, mut empty_kind) = (Vec::new(), Vec::new());
    let mut notes = ReserveNotes::default();
    nested_repos(
        &only_ws,
        &mut ops,
        &mut empty_kind,
        &mut notes,
        false,
        &mut Vec::new(),
    );
    through_links(&mut ops, &only_ws.nested_roots);
    let paths = ops
        .into_iter()
        .filter(|(p, reserve, mask)| !mask && (*reserve || std::fs::symlink_metadata(p).is_ok()))
        .map(|(p, _, _)| p)
        .collect();
    let cut = notes.repos_cut.then(|| {
        "the walk of the workspace for the protections of its nested repositories and \
         settings stopped at its bound before the run's changes were applied: changes past \
         it were vetted by their names only; raise it with --walk-max-dirs or [run] \
         walk_max_dirs"
            .to_string()
    });
    (paths, cut)
}

/// Repositories nested below the writable grants: their hooks and
/// configuration are protected too (a missing hooks directory reserved).
/// With `defer_ws` (the workspace is a copy-on-write layer that shows no
/// host directory: [`layer_covers`]) the workspace is walked only for
/// other names of hidden files, when one has any (ADR 0259).
fn nested_repos(
    r: &Reservation,
    ops: &mut Vec<Op>,
    empty_kind: &mut Vec<PathBuf>,
    notes: &mut ReserveNotes,
    defer_ws: bool,
    pins: &mut Vec<PathBuf>,
) -> Vec<PathBuf> {
    // Other names of protected places (hard links, another mount of the
    // same tree): the same device and inode, wherever the name is.
    let mut places: Vec<(PathBuf, bool)> = ops.iter().map(|(p, _, m)| (p.clone(), *m)).collect();
    let named = places.len();
    places.extend(r.aliases.iter().cloned());
    if !crate::protect::grant_walk::add_files_below(&mut places, named) {
        notes.degraded.push(format!(
            "the secret and protected directories hold more than {} entries: files past them \
             were not looked at for other names (hard links) inside the writable grants",
            crate::protect::grant_walk::MAX_BELOW_ENTRIES
        ));
    }
    let mut inodes = crate::protect::grant_walk::Inodes::default();
    for (i, (p, _)) in places.iter().enumerate() {
        // The home's names are followed to the file host programs open.
        inodes.add(p, i, i >= named);
    }
    let bounds = crate::protect::git::nested_git::before_bounds(r.walk_max_dirs);
    let defer_ws = defer_ws && r.nested_roots.contains(&r.workspace);
    let roots: Vec<PathBuf> = r
        .nested_roots
        .iter()
        .filter(|p| !defer_ws || **p != r.workspace)
        .cloned()
        .collect();
    let mut w = if roots.is_empty() {
        crate::protect::grant_walk::Walk::default()
    } else {
        crate::protect::grant_walk::walk(&roots, bounds, true, &inodes)
    };
    if let Some(line) = super::walk_cut::line(&w, bounds) {
        notes.walk_cut = Some(line);
    }
    notes.repos_cut = w.truncated;
    if defer_ws {
        notes.ws_walk_deferred = true;
        // Other names of hidden files: read through the layer like the
        // files themselves, so looked for before the run, and only when
        // a hidden file has another name at all.
        let linked = linked_secrets(&places, named);
        if !linked.is_empty() {
            let a = crate::protect::grant_walk::walk(
                std::slice::from_ref(&r.workspace),
                bounds,
                true,
                &linked,
            );
            if a.truncated || a.truncated_late {
                notes.degraded.push(format!(
                    "a hidden file has other names (hard links), and the walk of the workspace \
                     for them stopped at its bound ({} directories, {} ms): other names past it \
                     are not hidden; raise it with --walk-max-dirs or [run] walk_max_dirs",
                    bounds.dirs,
                    bounds.time.as_millis()
                ));
            }
            w.aliases.extend(a.aliases);
        }
    }
    let (mut nested, sockets) = (w.repos, w.sockets);
    // The repository at the top of a writable grant other than the
    // workspace (the user's other project, an enclosing monorepo; the
    // walk leaves a root's own `.git` out) gets what a nested one gets:
    // the hooks directory a relative global `core.hooksPath` names, what
    // its configuration names (includes, fsmonitor, hooks path), its git
    // directory's entries (attack atk24l F10).
    for root in r.nested_roots.iter().filter(|root| **root != r.workspace) {
        let g = root.join(".git");
        if std::fs::symlink_metadata(&g).is_ok() && !nested.contains(&g) {
            nested.push(g);
        }
    }
    for (alias, i) in w.aliases {
        let Some((orig, secret)) = places.get(i) else {
            continue;
        };
        if alias == *orig || ops.iter().any(|(p, _, _)| *p == alias) {
            continue;
        }
        notes.info.push(format!(
            "{} is another name (the same file: a hard link or another mount) of {}: {}",
            alias.display(),
            orig.display(),
            if *secret { "hidden" } else { "kept read-only" }
        ));
        ops.push((alias, false, *secret));
    }
    // Files host tools look up from any directory (rust-toolchain.toml,
    // .hg, mise.toml, ...), below the roots: kept read-only (new ones are
    // set aside after the run).
    for p in &w.upward {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let Some((_, inner, _)) = crate::protect::grant_walk::upward_entry(name.as_ref()) else {
            continue;
        };
        if inner.is_empty() {
            ops.push((p.clone(), false, false));
        } else {
            // (A placeholder `sharedpath` would stop hg there; jj's
            // `repo` is its store when a directory, checked after the run
            // when a file.)
            for f in inner.iter().filter(|f| **f != "repo") {
                let q = p.join(f);
                if !ops.iter().any(|(o, _, _)| *o == q) {
                    ops.push((q, crate::protect::grant_walk::reserve_inner(name, f), false));
                }
            }
        }
    }
    // Settings read in any directory (`sub/.claude`, `sub/.envrc`): kept
    // read-only like the workspace's own; new ones are set aside after.
    for s in &w.settings {
        ops.push((s.clone(), false, false));
        // What a nested `.envrc` makes direnv read unchecked (attack 24
        // F15): read-only, reserved when missing, inside the grants only.
        if s.file_name().is_some_and(|n| n == ".envrc") {
            for p in crate::protect::envrc::sourced(s) {
                if s.parent() == Some(p.as_path()) {
                    notes.degraded.push(format!(
                        "{} names more files than skarn lists: its directory is read-only for \
                         this run",
                        s.display()
                    ));
                }
                if r.nested_roots.iter().any(|root| p.starts_with(root))
                    && !ops.iter().any(|(q, _, _)| *q == p)
                {
                    ops.push((p, true, false));
                }
            }
        }
    }
    if w.truncated_late {
        notes.degraded.push(format!(
            "the walk of the dependency and build trees ({}) and git directories in the writable \
             grants stopped: other names of protected files (hard links) there are not covered",
            crate::protect::grant_walk::SKIPPED.join(", "),
        ));
    }
    // Virtual environments (activated or not): their start-up files.
    for v in &w.venvs {
        // A conda prefix's marker stays where it is (a mount point cannot
        // be removed or renamed; its records stay writable for `conda
        // install`): with it gone the prefix's programs were no longer
        // protected in the next run (attack atk22h F13, direct mode; the
        // copy-on-write layer refuses its removal).
        let meta = v.join("conda-meta");
        if crate::protect::grant_walk::is_conda_env(v)
            && std::fs::symlink_metadata(&meta).is_ok_and(|m| m.is_dir())
            && r.nested_roots.iter().any(|root| meta.starts_with(root))
        {
            pins.push(meta);
        }
        // (Only inside the grants: an environment a grant lies in has its
        // `pyvenv.cfg` outside them.)
        for p in crate::protect::venv_guard::protected(v)
            .into_iter()
            .filter(|p| r.nested_roots.iter().any(|root| p.starts_with(root)))
        {
            ops.push((p, false, false));
        }
        // Its interpreters and activation scripts (issue 22, A).
        for p in crate::protect::venv_programs::protected(v)
            .into_iter()
            .filter(|p| r.nested_roots.iter().any(|root| p.starts_with(root)))
        {
            ops.push((p, false, false));
        }
    }
    // Environment files agents load at start (ADR 0246): one that already
    // sets a variable host programs run code by stays as it is.
    for p in w
        .env_files
        .iter()
        .filter(|p| r.nested_roots.iter().any(|root| p.starts_with(root)))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
    {
        if crate::protect::dotenv::judge(p).is_some() {
            ops.push((p.clone(), false, false));
        }
    }
    for d in w.unlisted {
        // A directory the walk cannot list (search-only): a host server's
        // socket may lie below it, by a name the run could know.
        notes.info.push(format!(
            "{} inside a writable grant cannot be listed (search-only): hidden (a host \
             server's socket may lie below it)",
            d.display()
        ));
        ops.push((d, false, true));
    }
    for s in sockets {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(&s) {
            notes.socket_pins.push((s.clone(), (m.dev(), m.ino())));
        }
        // A host server listening there (a project database with trust
        // authentication, an editor's IPC) would be reachable under any
        // network policy: hidden like a secret.
        notes.info.push(format!(
            "unix socket {} inside a writable grant: hidden (a host server may listen there)",
            s.display()
        ));
        ops.push((s, false, true));
    }
    // A relative `core.hooksPath` of the global git configuration names a
    // hooks directory in each nested work tree: kept read-only, reserved
    // when missing.
    let hooks_rel = crate::protect::git::git_vet::global_relative_hooks(r.git_home.as_deref());
    for g in &nested {
        if g.file_name() == Some(std::ffi::OsStr::new(".git"))
            && let Some(top) = g.parent()
        {
            for rel in &hooks_rel {
                ops.push((top.join(rel), true, false));
            }
        }
        // What its configuration names inside the grants (hooks
        // directory, fsmonitor, filters, includes): read-only, reserved
        // when missing (attack atk22g F19).
        super::nested_named::add(g, r, ops, notes);
        // The files host git and its hook managers read at its top
        // (`.husky`, `lefthook.yml`, `.gitmodules`): read-only; new ones
        // are set aside after the run (atk22j F8, F9).
        if g.file_name() == Some(std::ffi::OsStr::new(".git"))
            && let Some(top) = g.parent()
        {
            for p in crate::protect::repo_top::existing(top) {
                if !ops.iter().any(|(q, _, _)| *q == p) {
                    ops.push((p, false, false));
                }
            }
        }
        if std::fs::symlink_metadata(g).is_ok_and(|m| m.is_dir()) {
            // Its config may turn on per-worktree config: then a new
            // `config.worktree` would be read by host git, so a missing
            // one is reserved (as an empty file, which git reads fine).
            let worktree_config = crate::protect::git::gitconfig::read_file(&g.join("config"))
                .ok()
                .flatten()
                .is_some_and(|c| c.to_ascii_lowercase().contains("worktreeconfig"));
            // The same entries as the workspace's own git directory.
            for en in crate::protect::persistence::GIT_DIR_ENTRIES {
                let name = en.path.trim_start_matches(".git/");
                let mut reserve = en.reserve == crate::protect::persistence::Reserve::Always;
                if name == "config.worktree" && worktree_config {
                    reserve = true;
                    empty_kind.push(g.join(name));
                }
                ops.push((g.join(name), reserve, false));
            }
            // A `commondir` sends git to another directory for objects,
            // refs, config and hooks: keep that one's config and hooks
            // read-only too.
            if let Some(common) = common_dir(g) {
                for name in ["config", "hooks"] {
                    ops.push((common.join(name), false, false));
                }
            }
        } else {
            ops.push((g.clone(), false, false));
        }
    }
    nested
}

/// The resolved protections and what they left on the host.
#[derive(Default)]
struct Resolved {
    /// The workspace is a copy-on-write layer: nothing is reserved in it
    /// (other writable grants, written directly, still are).
    layered: bool,
    /// The workspace (see `layered`).
    ws: PathBuf,
    steps: Vec<FsOp>,
    placeholders: Vec<PathBuf>,
    /// Missing protected paths of a copy-on-write workspace (see
    /// `Reserved::sweep`).
    sweep: Vec<PathBuf>,
    absent: Vec<PathBuf>,
    empties: Vec<(PathBuf, u64)>,
    /// A directory known to exist (the workspace).
    known_dir: Option<PathBuf>,
    /// The workspace's entries as listed right before the protections are
    /// resolved (before any placeholder was made).
    entries: Option<WsEntries>,
}

/// Apply the rule for one protection (see [`crate::linux::plan::Reservation`]).
fn resolve(op: Op, empty_kind: &[PathBuf], done: &mut Resolved, notes: &mut ReserveNotes) {
    let (mut target, reserve, is_mask) = op;
    let listed = done.entries.as_ref();
    // (The listing predates this run's placeholders.)
    let missing = !done.placeholders.contains(&target)
        && !listed.map_or_else(
            || std::fs::symlink_metadata(&target).is_ok(),
            |e| e.exists(&target),
        );
    // An existing entry the listing saw as no socket is no placeholder.
    let maybe_placeholder = missing || listed.is_none_or(|e| e.may_be_placeholder(&target));
    // Only the workspace is the layer: a missing protected name in another
    // writable grant (`--write`, a linked worktree's git directory) is
    // written directly, so it is reserved as in the direct mode.
    if missing && done.layered && target.starts_with(&done.ws) {
        // Vetted after the run instead; a direct run in the same workspace
        // may reserve it meanwhile, and leave its placeholder to the last
        // run out, which may be this one.
        if reserve {
            done.sweep.push(target);
        }
        return;
    }
    if missing && target.file_name() == Some(std::ffi::OsStr::new("commondir")) {
        done.absent.push(target.clone());
    }
    if missing && !reserve {
        return;
    }
    // (A missing file whose directory is missing too: reserved at its
    // first missing component below, like any protected path.)
    let parent_there = target.parent().is_some_and(|d| d.is_dir());
    if missing && empty_kind.contains(&target) && parent_there {
        match make_empty_file(&target) {
            Ok(ino) => done.empties.push((target.clone(), ino)),
            Err(e) => {
                notes.degraded.push(format!(
                    "could not reserve missing git file {} ({e}); it is not protected",
                    target.display()
                ));
                return;
            }
        }
    } else if missing {
        // Reserve the first missing component: with it taken, nothing
        // below it can be created either.
        match first_missing(&target, done.known_dir.as_deref()) {
            Ok(Some(c)) => target = c,
            Ok(None) => return, // an ancestor is not a directory
            Err(why) => {
                notes.degraded.push(format!(
                    "could not reserve missing protected path {} ({why}); it is not protected",
                    target.display()
                ));
                return;
            }
        }
        if done.placeholders.contains(&target) {
            return;
        }
        if let Err(e) = make_socket_inode(&target)
            && std::fs::symlink_metadata(&target).is_err()
        {
            notes.degraded.push(format!(
                "could not reserve missing protected path {} ({e}); it is not protected",
                target.display()
            ));
            return;
        }
    }
    if maybe_placeholder
        && is_placeholder(&target).is_some()
        && !done.placeholders.contains(&target)
    {
        done.placeholders.push(target.clone());
    }
    done.steps.push(if is_mask {
        FsOp::Mask {
            path: target,
            reserve,
            pin: None,
        }
    } else {
        FsOp::Protect {
            path: target,
            reserve,
            reserve_if: Vec::new(),
        }
    });
}

/// A protected path below a linked directory of a writable grant
/// (`.cargo/config.toml` with `.cargo -> cfg/cargo`, dangling or not) is
/// where the kernel puts it: that path is protected instead (a bind
/// refuses a path through a link, so the run could not start: attack
/// atk22h F17; and a dangling link's target would be made unprotected:
/// F35). One that leads out of every writable grant is not writable:
/// dropped.
fn through_links(ops: &mut Vec<Op>, roots: &[PathBuf]) {
    // Nothing is written on the host in this loop: each name's answer is
    // asked once (ADR 0247; the workspace's ancestors were asked once per
    // protected name: about 550 `statx` a run, issue 30).
    let _facts = crate::policy::link_facts::Scope::enter();
    let mut seen: std::collections::HashSet<PathBuf> = ops.iter().map(|o| o.0.clone()).collect();
    let mut out = Vec::with_capacity(ops.len());
    for (p, reserve, mask) in ops.drain(..) {
        if !roots.iter().any(|r| p.starts_with(r)) {
            out.push((p, reserve, mask));
            continue;
        }
        match crate::protect::linked_targets::through_linked_dir(&p) {
            None => out.push((p, reserve, mask)),
            Some(q) => {
                if roots.iter().any(|r| q.starts_with(r)) && seen.insert(q.clone()) {
                    out.push((q, reserve, mask));
                }
            }
        }
    }
    *ops = out;
}

/// Whether another run holds the workspace `ws`'s lock (every run holds it
/// shared for its whole life): an exclusive lock on a fresh descriptor is
/// refused then.
fn other_run_in(ws: &Path) -> bool {
    let Some(fd) = open_dir(ws) else {
        return false;
    };
    // SAFETY: fd is open and ours.
    let held = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK);
    // SAFETY: fd is open and ours; closing it releases a lock taken.
    unsafe { libc::close(fd) };
    held
}

fn make_empty_file(p: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(p)?;
    Ok(f.metadata()?.ino())
}

/// The first component of `path` (found missing) that does not exist (`path` itself when
/// only its last component is missing). `Ok(None)` when an existing
/// ancestor is not a directory (nothing can be created below it); an error
/// when an ancestor is a symlink (the name would be created wherever it
/// points). `known_dir`, a directory known to exist, is where the search
/// starts when `path` lies below it (its own ancestors are not looked at
/// again).
fn first_missing(path: &Path, known_dir: Option<&Path>) -> Result<Option<PathBuf>, &'static str> {
    let (mut acc, rest) = match known_dir.and_then(|d| Some((d, path.strip_prefix(d).ok()?))) {
        Some((d, rest)) if !rest.as_os_str().is_empty() => (d.to_path_buf(), rest),
        _ => (PathBuf::new(), path),
    };
    if !acc.as_os_str().is_empty() && path.parent() == Some(acc.as_path()) {
        // A missing entry right in the known directory (`path` was found
        // missing by the caller).
        return Ok(Some(path.to_path_buf()));
    }
    for c in rest.components() {
        acc.push(c);
        match std::fs::symlink_metadata(&acc) {
            Ok(m) if m.file_type().is_symlink() => return Err("an ancestor is a symlink"),
            Ok(m) if acc.as_path() != path && !m.is_dir() => return Ok(None),
            Ok(_) => {}
            Err(_) => return Ok(Some(acc)),
        }
    }
    Ok(None)
}

/// The directory a git directory's `commondir` file names (resolved
/// against it, `..` taken lexically), when it is another directory.
fn common_dir(git: &Path) -> Option<PathBuf> {
    let text = crate::protect::git::gitconfig::read_file(&git.join("commondir")).ok()??;
    let rel = text.lines().next()?.trim();
    if rel.is_empty() {
        return None;
    }
    let mut out = PathBuf::new();
    for c in git
        .join(crate::protect::git::gitconfig::value_path(rel))
        .components()
    {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    (out != git && std::fs::symlink_metadata(&out).is_ok_and(|m| m.is_dir())).then_some(out)
}
