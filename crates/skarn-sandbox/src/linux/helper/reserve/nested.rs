//! The protections only the walk of the writable grants finds: other
//! names of protected files, nested repositories, settings, environments
//! and sockets below the grants.

use std::path::{Path, PathBuf};

use super::{Op, ReserveNotes};
use crate::linux::plan::Reservation;

/// Hidden places (secret: true) that have another name somewhere (a
/// non-directory with more than one link), recorded for the walk.
fn linked_secrets(places: &[(PathBuf, bool)], named: usize) -> crate::protect::grant_walk::Inodes {
    use std::os::unix::fs::MetadataExt;
    let mut inodes = crate::protect::grant_walk::Inodes::default();
    for (i, (p, secret)) in places.iter().enumerate() {
        let follow = i >= named;
        if !*secret {
            continue;
        }
        let m = if follow {
            std::fs::metadata(p)
        } else {
            std::fs::symlink_metadata(p)
        };
        if m.is_ok_and(|m| !m.is_dir() && m.nlink() > 1) {
            inodes.add(p, i, follow);
        }
    }
    inodes
}

/// Repositories nested below the writable grants: their hooks and
/// configuration are protected too (a missing hooks directory reserved).
/// With `defer_ws` (the workspace is a copy-on-write layer that shows no
/// host directory: [`layer_covers`]) the workspace is walked only for
/// other names of hidden files, when one has any (ADR 0259).
pub(super) fn nested_repos(
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
    let bounds = crate::protect::git::nested_git::before_bounds(r.walk_max_dirs);
    let defer_ws = defer_ws && r.nested_roots.contains(&r.workspace);
    let roots: Vec<PathBuf> = r
        .nested_roots
        .iter()
        .filter(|p| !defer_ws || **p != r.workspace)
        .cloned()
        .collect();
    // With no directory to walk for them, the protected (not secret)
    // places' other names are not asked for at all; below them, entries
    // are recorded by their directory entries' inodes (issue 30: a `stat`
    // per entry was about 2,000 calls a run).
    let mut how = crate::protect::grant_walk::Below {
        secret_only: roots.is_empty(),
        by_entry: Some(Default::default()),
    };
    if !crate::protect::grant_walk::add_files_below_with(&mut places, named, &mut how) {
        notes.degraded.push(format!(
            "the secret and protected directories hold more than {} entries: files past them \
             were not looked at for other names (hard links) inside the writable grants",
            crate::protect::grant_walk::MAX_BELOW_ENTRIES
        ));
    }
    let by_entry = how.by_entry.unwrap_or_default();
    let mut w = if roots.is_empty() {
        crate::protect::grant_walk::Walk::default()
    } else {
        let mut inodes = crate::protect::grant_walk::Inodes::default();
        for (i, (p, _)) in places.iter().enumerate() {
            match by_entry.get(&i) {
                Some(id) => inodes.add_id(*id, i),
                // The home's names are followed to the file host programs open.
                None => inodes.add(p, i, i >= named),
            }
        }
        crate::protect::grant_walk::walk(&roots, bounds, true, &inodes)
    };
    if let Some(line) = super::super::walk_cut::line(&w, bounds) {
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
        // The pnpmfile a nested package's `.npmrc` (or the
        // `pnpm-workspace.yaml` beside it) names: pnpm started there loads
        // it (atk22k F18).
        if s.file_name().is_some_and(|n| n == ".npmrc")
            && let Some(dir) = s.parent()
        {
            for p in crate::protect::pnpm_file::named(dir) {
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
        super::super::nested_named::add(g, r, ops, notes);
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
