//! Git repositories below the root of a writable grant.
//!
//! Host git runs hooks and code-running settings of whatever repository it
//! finds from the current directory, so a repository anywhere under a
//! writable grant is a persistence path (a shell prompt runs git on `cd`).
//! Before the run, existing nested repositories are found so that their
//! hooks and configuration are protected like the workspace's; after the
//! run, a repository that appeared during it is vetted: it is kept only if
//! its hooks are samples and its configuration runs nothing, else it is
//! set aside under a name git ignores and the user is told.

use std::path::{Path, PathBuf};

use super::nested_set_aside::{set_aside_env_files, set_aside_settings, set_aside_upward};

/// Directories walked at most per run (per walk before the run).
pub const MAX_DIRS: usize = crate::policy::layers::WALK_MAX_DIRS_DEFAULT as usize;

/// Directory names not walked for repositories ([`crate::protect::grant_walk`]).
pub const SKIPPED: &[&str] = crate::protect::grant_walk::SKIPPED;

/// Time one walk before the run may take at most (beyond it, the walk
/// stops as at [`MAX_DIRS`], and says so).
pub(crate) const MAX_WALK: std::time::Duration = std::time::Duration::from_millis(750);

/// The bounds of the walk before the run.
pub(crate) const BEFORE: crate::protect::grant_walk::Bounds = crate::protect::grant_walk::Bounds {
    dirs: MAX_DIRS,
    time: MAX_WALK,
};

/// Time the walk before the run may take per directory of a bound the
/// user set: enough for a busy machine (about 35 µs a directory measured
/// with two shared cores), so that the directory bound, which the user
/// chose, is the one reached.
const WALK_PER_DIR: std::time::Duration = std::time::Duration::from_micros(50);

/// The most directories a walk before the run may be given (the walk
/// after it reads up to [`AFTER`]'s).
pub(crate) const MAX_DIRS_SETTING: u64 = crate::policy::layers::WALK_MAX_DIRS_LIMIT;

/// The bounds of the walk before the run with at most `dirs` directories
/// (`--walk-max-dirs`; None: [`BEFORE`]): the time bound grows with it
/// ([`MAX_WALK`] at least, [`WALK_PER_DIR`] per directory), so one setting raises
/// both (ADR 0204).
pub(crate) fn before_bounds(dirs: Option<u64>) -> crate::protect::grant_walk::Bounds {
    let Some(d) = dirs else { return BEFORE };
    let d = d.min(MAX_DIRS_SETTING);
    crate::protect::grant_walk::Bounds {
        dirs: usize::try_from(d).unwrap_or(usize::MAX),
        time: MAX_WALK.max(WALK_PER_DIR * u32::try_from(d).unwrap_or(u32::MAX)),
    }
}

/// The bounds of the walk after the run. The run paid for every
/// directory it made, so they are wide (a command must make millions of
/// directories to reach them); past them the check is incomplete, which
/// fails the run ([`check_incomplete`]) instead of only saying so
/// (attack atk24c F2).
pub(crate) const AFTER: crate::protect::grant_walk::Bounds = crate::protect::grant_walk::Bounds {
    dirs: 4_000_000,
    time: std::time::Duration::from_secs(120),
};

/// Entries of a writable grant's top directory looked at for editor
/// workspace files after a run (past it the run fails).
const TOP_ENTRIES: usize = 1_000_000;

/// Checks after a run (in this process) that stopped at [`AFTER`].
static INCOMPLETE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether a check after a run in this process stopped at its bounds:
/// plants past them may remain, so the run must not end as a success.
pub(crate) fn check_incomplete() -> bool {
    INCOMPLETE.load(std::sync::atomic::Ordering::Relaxed) > 0
}

/// Count a check after a run that could not finish (the run fails).
pub(crate) fn count_incomplete() {
    INCOMPLETE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the git directory (or `.git` link file) `git` was made or
/// changed at or after `since` where it matters to host git: itself, its
/// configuration, HEAD, `commondir`, and its hooks.
fn git_changed_since(git: &Path, since: std::time::SystemTime) -> bool {
    use crate::protect::grant_walk::changed_since;
    if changed_since(git, since) {
        return true;
    }
    let inside = [
        "config",
        "config.worktree",
        "HEAD",
        "commondir",
        "hooks",
        "info",
    ];
    if inside.iter().any(|n| changed_since(&git.join(n), since)) {
        return true;
    }
    if std::fs::read_dir(git.join("hooks")).is_ok_and(|rd| {
        rd.flatten()
            .take(10_000)
            .any(|e| changed_since(&e.path(), since))
    }) {
        return true;
    }
    // The git directories it keeps for submodules and linked worktrees,
    // the same entries of each (atk24e F7); past 256, changed.
    let mut budget = 256usize;
    let mut stack = vec![git.join("modules"), git.join("worktrees")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if budget == 0 {
                return true;
            }
            budget -= 1;
            let p = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if changed_since(&p, since)
                || inside.iter().any(|n| changed_since(&p.join(n), since))
                || std::fs::read_dir(p.join("hooks")).is_ok_and(|rd| {
                    rd.flatten()
                        .take(10_000)
                        .any(|e| changed_since(&e.path(), since))
                })
            {
                return true;
            }
            stack.push(p.join("modules"));
            if std::fs::symlink_metadata(p.join("HEAD")).is_err() {
                // A submodule name with slashes.
                stack.push(p);
            }
        }
    }
    false
}

/// Whether `p` lies in a tree the walk before the run does not record
/// repositories in (a [`SKIPPED`] tree or a git directory).
fn in_late_tree(p: &Path, roots: &[PathBuf]) -> bool {
    let rel = roots
        .iter()
        .find_map(|r| p.strip_prefix(r).ok())
        .unwrap_or(p);
    let parts: Vec<_> = rel.components().collect();
    parts.iter().take(parts.len().saturating_sub(1)).any(|c| {
        let n = c.as_os_str();
        n == ".git" || SKIPPED.iter().any(|s| n == *s)
    })
}

/// Nested `.git` entries under `roots` (their own root level excluded),
/// and whether the walk stopped at [`MAX_DIRS`] or [`MAX_WALK`].
pub fn find(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let w = crate::protect::grant_walk::walk(roots, BEFORE, false, &Default::default());
    (w.repos, w.truncated)
}

/// The hooks directory a relative `core.hooksPath` of the global git
/// configuration (`hooks_rel`) names in the work tree of `git` (a `.git`
/// entry), if one is there: host git runs what it holds.
fn global_hooks(git: &Path, hooks_rel: &[PathBuf]) -> Option<String> {
    if git.file_name()? != ".git" {
        return None;
    }
    let top = git.parent()?;
    hooks_rel
        .iter()
        .find(|r| {
            let p = top.join(r);
            std::fs::symlink_metadata(&p).is_ok()
                && crate::protect::placeholder::is_placeholder(&p).is_none()
        })
        .map(|r| {
            format!(
                "hooks directory {} (core.hooksPath of the global git configuration)",
                r.display()
            )
        })
}

pub(crate) use crate::protect::git::repo_vet::unsafe_repo;

pub(crate) use super::head_guard::HeadGuard;
pub(crate) use crate::protect::home_dot_quarantine::quarantine_new_dot_entries;

/// After the run: vet each `.git` under `roots` that was not in `before`,
/// and set aside each file host tools look up from any directory
/// ([`crate::protect::grant_walk::UPWARD`]) or settings entry read in any
/// directory ([`crate::protect::grant_walk::Walk::settings`]) that was made or
/// changed at or after `since`; returns one line per repository or entry
/// set aside. With `before_cut` (the walk before the run stopped at its
/// bounds, so `before` may lack the user's own repositories), a
/// repository not in `before` is vetted only when its git directory
/// changed during the run, as in the trees that walk skips (ADR 0204).
/// `new_tops`: the `.git` entries the run made at the top of a writable
/// grant other than the workspace (the walks leave a root's own `.git`
/// out), vetted like one made below it (attack atk24l F12).
pub(crate) fn vet_new(
    roots: &[PathBuf],
    before: &[PathBuf],
    new_tops: &[PathBuf],
    hooks_rel: &[PathBuf],
    since: Option<std::time::SystemTime>,
    before_cut: bool,
) -> Vec<String> {
    vet_new_within(roots, before, new_tops, hooks_rel, since, before_cut, AFTER)
}

fn vet_new_within(
    roots: &[PathBuf],
    before: &[PathBuf],
    new_tops: &[PathBuf],
    hooks_rel: &[PathBuf],
    since: Option<std::time::SystemTime>,
    before_cut: bool,
    bounds: crate::protect::grant_walk::Bounds,
) -> Vec<String> {
    let w = crate::protect::grant_walk::walk_with(
        roots,
        bounds,
        crate::protect::grant_walk::Late::All,
        &Default::default(),
    );
    // Cut short: the top entries as they are before anything is set
    // aside, to set aside those the run changed (attack atk24d F11).
    let cut_top = (w.truncated || w.truncated_late)
        .then(|| since.map(|_| super::cut_aside::snapshot(roots, TOP_ENTRIES)))
        .flatten();
    let mut out = Vec::new();
    let mut repos = w.repos.clone();
    repos.dedup();
    // A repository is vetted when it is new (`before` holds only those
    // still the same inode as before the run: one made again in its place
    // is new, attack atk24c F4). A repository in a tree the walk before the
    // run does not look at (`target/`, `.venv/`: F7) counts as new when
    // its git directory changed during the run.
    let vet = |g: &PathBuf| {
        !before.contains(g)
            && ((!before_cut && !in_late_tree(g, roots))
                || since.is_none_or(|t| git_changed_since(g, t)))
    };
    let made_at_top = new_tops.iter().filter(|g| !repos.contains(g));
    for git in repos.iter().filter(|g| vet(g)).chain(made_at_top) {
        if roots.contains(git) && std::fs::symlink_metadata(git.join("HEAD")).is_err() {
            continue;
        }
        let Some(why) = unsafe_repo(git).or_else(|| global_hooks(git, hooks_rel)) else {
            continue;
        };
        // A writable grant's root cannot be moved: its HEAD is, which is
        // enough for git not to take it for a repository.
        let what = if roots.contains(git) {
            git.join("HEAD")
        } else {
            git.clone()
        };
        let aside = crate::protect::set_aside::set_aside(&what, "skarn-quarantine");
        out.push(format!(
            "a repository created during the run at {} could run programs on the host ({why}); {}",
            git.display(),
            aside.describe("review it before renaming it back or running git there")
        ));
    }
    if let Some(since) = since {
        out.extend(set_aside_upward(&w.upward, since));
        out.extend(set_aside_settings(&w.settings, since));
        let venvs = crate::protect::venv_guard::set_aside(roots, &w.venvs, since);
        if venvs.incomplete {
            // Never a silent cap (attack atk24d F10).
            INCOMPLETE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        out.extend(venvs.lines);
        // Their interpreters and activation scripts (issue 22, A).
        for v in w
            .venvs
            .iter()
            .filter(|v| roots.iter().any(|r| v.starts_with(r)))
        {
            out.extend(crate::protect::venv_programs::set_aside(v, since, roots));
        }
        // Commits the run made with content at protected paths.
        // (Also those of the repositories nested in the grants, attack
        // atk22h F8.)
        let mut tops: Vec<PathBuf> = roots.to_vec();
        for g in &repos {
            if g.file_name().is_some_and(|n| n == ".git")
                && let Some(t) = g.parent()
                && !tops.iter().any(|x| x == t)
            {
                tops.push(t.to_path_buf());
            }
        }
        let commits = super::new_commits::vet(&tops, since);
        // And those it packed there (ADR 0296).
        let packed = super::packs_in_place::vet_tops(&tops, since);
        // Their indexes (the workspace's own is vetted in its layer;
        // attack atk22h F12).
        out.extend(tops.iter().filter_map(|t| {
            super::index_after::vet(t, super::new_commits::outermost(&tops, t), since)
        }));
        if commits.incomplete {
            INCOMPLETE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        out.extend(commits.lines);
        out.extend(packed);
        // Environment files agents load at start (ADR 0246).
        out.extend(set_aside_env_files(&w.env_files, since));
        // Compiled Python files (attacks atk24e F9, atk24h F11).
        out.extend(crate::protect::pyc_guard::vet(
            &w.pycache,
            &w.pyc_files,
            since,
        ));
        // Cargo's build directories and distribution metadata the run
        // wrote (attack atk22l F8, F17).
        out.extend(crate::protect::cargo_target::after_run(roots, since));
        out.extend(crate::protect::dist_metadata::after_run(roots, since));
        out.extend(crate::protect::direct_outputs::after_run(
            roots,
            since,
            count_incomplete,
        ));
        // Editor workspace files at the top (`*.code-workspace`; existing
        // ones were read-only): found by pattern, not by name; and the
        // interpreters' start-up files, which are not reserved.
        let mut top = Vec::new();
        for r in roots {
            for p in crate::protect::persistence::AFTER_RUN_TOP
                .iter()
                .filter(|p| p.contains('/'))
            {
                if std::fs::symlink_metadata(r.join(p)).is_ok() {
                    top.push(r.join(p));
                }
            }
            if let Ok(rd) = std::fs::read_dir(r) {
                let mut seen = 0usize;
                for e in rd.flatten() {
                    seen += 1;
                    if seen > TOP_ENTRIES {
                        // Never a silent cap (attack atk24d F1).
                        INCOMPLETE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        out.push(format!(
                            "{} holds more than {TOP_ENTRIES} entries: editor workspace files \
                             (*.code-workspace) past them were not vetted, so the run fails",
                            r.display()
                        ));
                        break;
                    }
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name
                        .to_lowercase()
                        .ends_with(crate::protect::persistence::WORKSPACE_FILE_SUFFIX)
                        || crate::protect::persistence::AFTER_RUN_TOP.contains(&name.as_str())
                    {
                        top.push(e.path());
                    }
                }
            }
        }
        out.extend(set_aside_settings(&top, since));
    }
    if w.truncated || w.truncated_late {
        INCOMPLETE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let (Some(top), Some(since)) = (&cut_top, since) {
            out.extend(super::cut_aside::set_aside_changed(top, since));
        }
        out.push(format!(
            "the check after the run stopped after {} directories of the writable grants \
             (bounds: {} directories, {} s): repositories and files host tools look up from \
             any directory (rust-toolchain.toml, .hg, mise.toml, ...) created in the \
             directories it did not reach were not vetted, so every entry at the top that \
             the run made or changed was set aside (above) and the run fails; review {} \
             before running git, rustup or hg below it",
            w.dirs,
            bounds.dirs,
            bounds.time.as_secs(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

#[cfg(test)]
#[path = "nested_git_tests.rs"]
mod tests;
