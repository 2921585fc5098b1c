//! What a nested repository's vetting sets aside beside its `.git`:
//! settings directories changed during the run, entries upward tools
//! read from a parent directory, and environment files the judge refuses
//! (each moved under a name the tools ignore, with a line saying so).

use std::path::{Path, PathBuf};

/// Set aside every settings entry of `found` (existing ones were kept
/// read-only) made or changed since `since` (an inode change time in its
/// tree at or after it) under a name no program reads.
pub(super) fn set_aside_settings(found: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for p in found {
        // (Gone with an entry set aside above it.)
        if std::fs::symlink_metadata(p).is_err() || !tree_changed_since(p, since) {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
        out.push(format!(
            "{} was made or changed during the run: agents, editors and shells read it in \
             that directory and run what it names; {}",
            p.display(),
            aside.describe("review it before renaming it back or opening that directory")
        ));
    }
    out
}

/// Whether anything in the tree at `p` (not following links; at most
/// 10 000 entries, beyond which it counts as changed) was changed at or
/// after `since` ([`crate::protect::grant_walk::changed_since`]).
fn tree_changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    let mut stack = vec![p.to_path_buf()];
    let mut budget = 10_000usize;
    while let Some(q) = stack.pop() {
        let Some(b) = budget.checked_sub(1) else {
            return true;
        };
        budget = b;
        if crate::protect::grant_walk::changed_since(&q, since) {
            return true;
        }
        if std::fs::symlink_metadata(&q).is_ok_and(|m| m.is_dir())
            && let Ok(rd) = std::fs::read_dir(&q)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    false
}

/// Set aside each of `found` (or the file inside that matters) that
/// changed at or after `since`.
pub(super) fn set_aside_upward(found: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for p in found {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((_, inner, why)) = crate::protect::grant_walk::upward_entry(name.as_ref()) else {
            continue;
        };
        // A link made during the run (`sub/.cargo -> ../cfgdir`): host
        // tools follow it to whatever it names, so the link itself is set
        // aside (renamed, never followed).
        let is_link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        let targets: Vec<PathBuf> = if inner.is_empty() || is_link {
            vec![p.clone()]
        } else {
            inner.iter().map(|i| p.join(i)).collect()
        };
        for t in targets {
            // Only inside a real directory of the grant: a `.hg` the run
            // made a link to a host directory must not make us rename a
            // host file. (This run's placeholders are removed by their own
            // step; a directory `repo` is jj's store.)
            let real_parent = t
                .parent()
                .is_some_and(|d| std::fs::canonicalize(d).is_ok_and(|c| c == d));
            if !real_parent
                || !crate::protect::grant_walk::changed_since(&t, since)
                || crate::protect::placeholder::is_placeholder(&t).is_some()
                || (t.ends_with(".jj/repo") && t.is_dir())
            {
                continue;
            }
            let aside = crate::protect::set_aside::set_aside(&t, "skarn-set-aside");
            out.push(format!(
                "{} was written during the run and host tools read it from any directory \
                 below ({why}); {}",
                t.display(),
                aside.describe("review it before renaming it back or running those tools there")
            ));
        }
    }
    out
}

/// After a run: set aside each file of `found` that was made or changed
/// at or after `since` (itself, or the file a link of it leads to) and
/// that [`crate::protect::dotenv::judge`] refuses (environment files
/// agents load at start, ADR 0246); one line each.
pub(super) fn set_aside_env_files(
    found: &[std::path::PathBuf],
    since: std::time::SystemTime,
) -> Vec<String> {
    use crate::protect::grant_walk::changed_since;
    let mut out = Vec::new();
    for p in found {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            continue;
        };
        let target = m
            .file_type()
            .is_symlink()
            .then(|| std::fs::canonicalize(p).ok())
            .flatten();
        let changed =
            changed_since(p, since) || target.as_deref().is_some_and(|t| changed_since(t, since));
        if !changed {
            continue;
        }
        let why = match &target {
            // (A link: what the loaders read is where it leads.)
            Some(t) => {
                crate::protect::dotenv::judge(t).map(|w| format!("(a link to {}) {w}", t.display()))
            }
            None if m.file_type().is_symlink() => Some("it is a link that leads nowhere".into()),
            None => crate::protect::dotenv::judge(p),
        };
        let Some(why) = why else { continue };
        let aside = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
        out.push(set_aside_line(p, &why, &aside));
    }
    out
}

/// The line for one file set aside after a run.
fn set_aside_line(p: &Path, why: &str, aside: &crate::protect::set_aside::Aside) -> String {
    format!(
        "{} was written during the run and {why}; agents and runtimes load it on the host at \
         their next start; {}",
        p.display(),
        aside.describe(
            "review it before renaming it back: an application's own settings may stay, \
             variables that start programs may not"
        )
    )
}
