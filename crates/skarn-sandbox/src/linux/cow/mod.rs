//! The workspace as a copy-on-write layer (ADR 0130): the command writes
//! into an overlayfs mounted over the workspace inside the sandbox's mount
//! namespace; the host's workspace does not change during the run. When
//! the run ends (or, for a run that was killed, from the reaper or the
//! next run in the same workspace) only the layer's upper directory is
//! walked, each change is vetted with the protection decisions the direct
//! mode uses ([`vet`]) and the allowed ones are applied ([`apply`]); the
//! refused ones are reported and discarded with the layer.

mod apply;
mod effect;
mod git_refs;
mod index;
mod packs;
mod place;
pub mod probe;
mod repo_move;
pub mod vet;

use std::os::fd::AsFd;
use std::path::Path;

pub use effect::changes_workspace;
pub use place::{Layer, SIBLING_PREFIX, make, pending, remove};
pub use vet::Rules;

/// What applying a layer did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Changes applied: `+ path` (made or changed), `- path` (removed).
    pub applied: Vec<String>,
    /// Changes refused: path and why.
    pub refused: Vec<(String, String)>,
    /// Other messages (a repository made in the run, failures).
    pub notes: Vec<String>,
}

/// Vet and apply `layer` to the workspace of `rules`, then remove the
/// layer. Called once no process of the run is left (the PID namespace
/// is gone), so nothing can change the layer meanwhile.
pub fn finish(layer: Layer, rules: &Rules) -> Outcome {
    let mut out = Outcome::default();
    // The workspace's repository and those nested in it that the run
    // wrote: their packs are vetted before the layer is applied, their
    // loose commits after.
    let tops = repo_tops(&layer, rules, &mut out);
    // Cargo's profile directories the run wrote in (atk22l F8), found
    // before the layer is applied, invalidated after.
    let cargo = crate::protect::cargo_target::in_layer(&layer.upper, &rules.ws);
    let cargo_libs = crate::protect::cargo_libs::in_layer(&layer.upper, &rules.ws, &cargo);
    let r = (|| -> std::io::Result<()> {
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC;
        let keep_objects = packs::vet(&layer, rules, &tops, &mut out);
        let upper = rustix::fs::open(&layer.upper, flags, rustix::fs::Mode::empty())?;
        let host = rustix::fs::open(&rules.ws, flags, rustix::fs::Mode::empty())?;
        let mut a = apply::Apply {
            rules,
            since: layer.since,
            upper_root: &layer.upper,
            same_fs: layer.same_fs,
            keep_objects,
            out: &mut out,
            moves: Default::default(),
        };
        let git = None;
        crate::protect::venv_guard::vetting_layer(|| {
            a.dir(upper.as_fd(), host.as_fd(), Path::new(""), false, 0, git)
        })?;
        a.finish_moves();
        Ok(())
    })();
    if let Err(e) = r {
        out.notes.push(format!(
            "applying the run's changes to {} stopped: {e}; what was not applied is discarded",
            rules.ws.display()
        ));
    }
    // Untracked outputs dated 1970: host time-stamp builds redo them
    // (atk22n F7).
    out.notes
        .extend(vet::date_build_outputs(&rules.ws, &out.applied));
    // Commits the run made, now in the workspace's object store (applied
    // objects are new by their change time), vetted as after a direct run.
    let since = since_time(layer.since);
    let commits = crate::protect::git::new_commits::vet(&tops, since);
    for l in commits.lines {
        out.refused.push((".git/objects".into(), l));
    }
    out.notes.extend(
        cargo
            .iter()
            .filter_map(|p| crate::protect::cargo_target::invalidate(p)),
    );
    out.notes
        .extend(crate::protect::cargo_libs::remove(&cargo_libs));
    remove(layer);
    out
}

/// When the run started, as a time.
fn since_time(since: (i64, i64)) -> std::time::SystemTime {
    std::time::UNIX_EPOCH
        + std::time::Duration::new(
            u64::try_from(since.0).unwrap_or(0),
            u32::try_from(since.1).unwrap_or(0),
        )
}

/// Directories of the layer looked at for nested repositories, at most.
const NESTED_DIRS: usize = 200_000;

/// The work trees whose commits are vetted after a run: the workspace's
/// and those of the repositories nested in it whose git directory the run
/// wrote (a `.git` directory in the layer; attack atk22h F8).
fn repo_tops(layer: &Layer, rules: &Rules, out: &mut Outcome) -> Vec<std::path::PathBuf> {
    let mut tops = vec![rules.ws.clone()];
    let mut todo = vec![std::path::PathBuf::new()];
    let mut seen = 0usize;
    while let Some(rel) = todo.pop() {
        seen += 1;
        if seen > NESTED_DIRS {
            crate::protect::git::nested_git::count_incomplete();
            out.notes.push(format!(
                "the run wrote more than {NESTED_DIRS} directories: commits of nested \
                 repositories past them were not vetted, so the run fails"
            ));
            break;
        }
        let Ok(rd) = std::fs::read_dir(layer.upper.join(&rel)) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let r = rel.join(e.file_name());
            if e.file_name() == ".git" {
                if !rel.as_os_str().is_empty() {
                    tops.push(rules.ws.join(&rel));
                }
                continue;
            }
            todo.push(r);
        }
    }
    tops
}

/// The upper directory of a git layer (made by [`make_git_upper`]).
pub(crate) fn git_upper(layer: &Layer) -> std::path::PathBuf {
    layer.upper.join(".git")
}

/// Make the upper directory of a git layer inside `layer`.
pub(crate) fn make_git_upper(layer: &Layer) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let p = git_upper(layer);
    std::fs::DirBuilder::new().mode(0o755).create(&p)?;
    Ok(p)
}

/// Vet and apply a layer that was mounted over the workspace's `.git`
/// only (the direct mode's git layer, ADR 0181), then remove it: the
/// layer's upper directory holds the `.git` of the workspace of `rules`
/// (overlayfs's upper directory is `upper/.git`, see [`git_upper`]).
pub(crate) fn finish_git(layer: Layer, rules: &Rules) -> Outcome {
    let mut out = Outcome::default();
    let r = (|| -> std::io::Result<()> {
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC;
        let tops = [rules.ws.clone()];
        let keep_objects = packs::vet(&layer, rules, &tops, &mut out);
        let upper = rustix::fs::open(git_upper(&layer), flags, rustix::fs::Mode::empty())?;
        let host = rustix::fs::open(rules.ws.join(".git"), flags, rustix::fs::Mode::empty())?;
        let mut a = apply::Apply {
            rules,
            since: layer.since,
            upper_root: &layer.upper,
            same_fs: layer.same_fs,
            keep_objects,
            out: &mut out,
            moves: Default::default(),
        };
        a.dir(
            upper.as_fd(),
            host.as_fd(),
            Path::new(".git"),
            false,
            1,
            Some(0),
        )?;
        a.finish_moves();
        Ok(())
    })();
    if let Err(e) = r {
        out.notes.push(format!(
            "applying the run's changes to {}/.git stopped: {e}; what was not applied is discarded",
            rules.ws.display()
        ));
    }
    remove(layer);
    out
}

/// The one-line summary of refused changes, for stderr (None when none).
pub(crate) fn refused_line(out: &Outcome) -> Option<String> {
    const SHOWN: usize = 8;
    if out.refused.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = out
        .refused
        .iter()
        .take(SHOWN)
        .map(|(p, _)| p.as_str())
        .collect();
    let more = out.refused.len().saturating_sub(SHOWN);
    let extra = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    names.dedup();
    Some(format!(
        "changes to protected paths were not applied to the workspace: {}{extra} (--report says why)",
        names.join(", ")
    ))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
